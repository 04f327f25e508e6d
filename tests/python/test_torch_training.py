"""Training through cinn_like: AOTAutograd compiles the forward and the backward graphs; 20 SGD
steps of the MLP and the CNN track eager's losses step by step, first-step gradients match."""
import copy
import unittest

from torch_util import HAVE_TORCH, needs_torch, report

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    from torch_util import GPT2Block, MLP, SmallCNN, compiled, devices


def assert_same_grads(eager, mine, label, atol):
    """Each parameter gradient of `mine` against `eager`'s (rtol 1e-4), named in a failure."""
    for (name, pe), pc in zip(eager.named_parameters(), mine.parameters()):
        torch.testing.assert_close(pc.grad, pe.grad, rtol=1e-4, atol=atol,
                                   msg=lambda m: f"{label} grad {name}: {m}")


@needs_torch
class TorchTrainingTest(unittest.TestCase):
    def train(self, title, make, x_shape, classes=10, steps=20, rtol=1e-3):
        for dev in devices():
            torch.manual_seed(0)
            eager = make().to(dev)
            mine = copy.deepcopy(eager)
            cmodel = compiled(mine)
            opt_e = torch.optim.SGD(eager.parameters(), lr=0.05)
            opt_c = torch.optim.SGD(mine.parameters(), lr=0.05)
            before = ct.stats()
            gen = torch.Generator().manual_seed(1)
            for step in range(steps):
                x = torch.randn(*x_shape, generator=gen).to(dev)
                y = torch.randint(0, classes, (x_shape[0],), generator=gen).to(dev)
                losses = []
                for model, opt in ((eager, opt_e), (cmodel, opt_c)):
                    opt.zero_grad()
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    loss.backward()
                    losses.append(loss.item())
                if step == 0:
                    assert_same_grads(eager, mine, title, 1e-5)
                opt_e.step()
                opt_c.step()
                self.assertAlmostEqual(losses[1], losses[0], delta=rtol * max(1.0, abs(losses[0])),
                                       msg=f"{title} [{dev}] step {step}")
            d = report(f"{title} training [{dev}]", before, ct.stats())
            self.assertGreater(d["ops_compiled"], 0)

    def test_mlp_sgd(self):
        self.train("MLP", MLP, (16, 32))

    def test_gpt2_block_sgd(self):
        class Head(torch.nn.Module):  # the block, then a classifier over the mean token
            def __init__(self):
                super().__init__()
                self.block, self.fc = GPT2Block(), torch.nn.Linear(32, 10)

            def forward(self, x):
                return self.fc(self.block(x).mean(1))
        self.train("GPT-2 block", Head, (4, 8, 32), steps=10)

    def test_cnn_sgd(self):
        self.train("CNN", SmallCNN, (4, 3, 16, 16))

    def test_lm_head_with_an_odd_vocabulary(self):
        # A language model's head over 1003 tokens: on CUDA the logits' GEMM and both gradient
        # GEMMs pad the vocabulary to whole 16-byte rows (hlir/pass/matmul_padding.h) and slice
        # the products back. Logits and gradients against float64 eager, in float32 and bf16.
        for dev in devices():
            for dtype, tol in ((torch.float32, 1e-4), (torch.bfloat16, 2e-2)):
                with self.subTest(dev=dev, dtype=dtype):
                    torch.manual_seed(3)
                    x = torch.randn(256, 96, device=dev)
                    w = torch.randn(1003, 96, device=dev) / 10
                    y = torch.randint(0, 1003, (256,), device=dev)

                    def step(x, w):
                        logits = x @ w.t()
                        wide = logits if logits.dtype == torch.float64 else logits.float()
                        return logits, torch.nn.functional.cross_entropy(wide, y)

                    xc = x.to(dtype).clone().requires_grad_()
                    wc = w.to(dtype).clone().requires_grad_()
                    logits, loss = compiled(step)(xc, wc)
                    loss.backward()
                    xr = x.to(dtype).double().requires_grad_()
                    wr = w.to(dtype).double().requires_grad_()
                    logits_r, loss_r = step(xr, wr)
                    loss_r.backward()
                    scale = lambda t: t.abs().max().item()  # noqa: E731
                    for got, want, what in ((logits, logits_r, "logits"), (loss, loss_r, "loss"),
                                            (xc.grad, xr.grad, "x grad"),
                                            (wc.grad, wr.grad, "w grad")):
                        torch.testing.assert_close(got.double(), want, rtol=tol,
                                                   atol=tol * scale(want),
                                                   msg=lambda m, what=what: f"{what}: {m}")

    def test_tied_embedding_and_lm_head(self):
        # One table both looked up and multiplied (GPT-2's tied weights): its gradient is the
        # head's product with the lookup's rows added in (hlir/pass/index_add_accumulate.h,
        # the rows accumulate into the product). Ids repeat. Against float64 eager.
        for dev in devices():
            with self.subTest(dev=dev):
                torch.manual_seed(5)
                w = torch.randn(300, 32, device=dev) / 4
                ids = torch.randint(0, 300, (4, 24), device=dev)
                ids[:, 0] = ids[0, 1]  # repeated ids

                def step(w):
                    h = torch.tanh(torch.nn.functional.embedding(ids, w))
                    logits = h @ w.t()
                    return torch.nn.functional.cross_entropy(logits.flatten(0, 1),
                                                             ids.flatten())

                wc = w.clone().requires_grad_()
                compiled(step)(wc).backward()
                wr = w.double().requires_grad_()
                step(wr).backward()
                torch.testing.assert_close(wc.grad.double(), wr.grad, rtol=1e-4,
                                           atol=1e-4 * wr.grad.abs().max().item())

    def test_a_cross_entropy_saves_its_logits_and_row_statistics_not_its_log_softmax(self):
        # log_softmax reaches the backend decomposed (backend._decompositions), so the
        # partitioner saves the row max and log-sum, and the backward recomputes from the
        # logits: the one full-size tensor saved for the backward is the logits themselves,
        # not a new [rows, classes] log-softmax. Gradients against float64 eager.
        for dev in devices():
            with self.subTest(dev=dev):
                torch.manual_seed(5)
                x = torch.randn(64, 1000, device=dev, requires_grad=True)
                t = torch.randint(0, 1000, (64,), device=dev)
                saved = []

                def pack(s):
                    saved.append((s.numel(), s.data_ptr()))
                    return s

                with torch.autograd.graph.saved_tensors_hooks(pack, lambda s: s):
                    loss = compiled(torch.nn.functional.cross_entropy)(x, t)
                loss.backward()
                full = [ptr for n, ptr in saved if n == x.numel()]
                self.assertTrue(full, f"nothing of the logits' size saved: {saved}")
                self.assertEqual(set(full), {x.data_ptr()}, saved)
                xr = x.detach().double().requires_grad_()
                torch.nn.functional.cross_entropy(xr, t).backward()
                torch.testing.assert_close(x.grad.double(), xr.grad, rtol=1e-4, atol=1e-6)

    def test_a_mask_made_from_positions_is_computed_again_not_saved(self):
        # Hugging Face's causal masks are made from positions in the graph (a cumsum among
        # them, which the min-cut partitioner does not recompute): the backward computes the
        # mask again (recompute_constants.py) instead of receiving it saved, so cinn_like sees
        # it as a constant there too. Only x is saved (the positions were, before); gradients
        # against float64 eager.
        def f(x):
            s = x.shape[-1]
            pos = torch.ones(s, dtype=torch.long, device=x.device).cumsum(0) - 1
            keep = pos[None, :] <= pos[:, None]
            return torch.where(keep, x, torch.zeros((), device=x.device)).square().sum()

        for dev in devices():
            with self.subTest(dev=dev):
                torch.manual_seed(6)
                x = torch.randn(4, 16, 16, device=dev, requires_grad=True)
                saved = []

                def pack(t):
                    saved.append((tuple(t.shape), t.dtype))
                    return t

                with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                    loss = compiled(f)(x)
                loss.backward()
                self.assertEqual(saved, [((4, 16, 16), torch.float32)])  # x alone, not pos
                xr = x.detach().double().requires_grad_()
                f(xr).backward()
                torch.testing.assert_close(x.grad.double(), xr.grad, rtol=1e-6, atol=1e-6)

                # Over symbolic sizes (a symbol saved beside the tensors) the mask's positions,
                # of a symbolic size, stay saved; a random mask, which no input reaches either,
                # stays saved always (a draw is not computed again).
                def random_mask(x):
                    keep = torch.rand(x.shape[-1], x.shape[-1], device=x.device) < 0.5
                    return torch.where(keep, x, torch.zeros((), device=x.device)).square().sum()

                for fn, dynamic in ((f, True), (random_mask, False)):
                    torch._dynamo.reset()
                    saved.clear()
                    x.grad = None
                    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                        loss = torch.compile(fn, backend="cinn_like", dynamic=dynamic)(x)
                    loss.backward()
                    self.assertGreater(len(saved), 1, (fn.__name__, saved))
                    self.assertIsNotNone(x.grad)

    def test_batch_norm_in_training_saves_what_inductor_saves(self):
        # Training BatchNorm reaches the backend written out (var_mean, then elementwise), as
        # Inductor's does, so the partitioner can save a convolution's output and the
        # statistics and let the backward recompute the normalized values and the ReLU after
        # them. Here (a squeeze-excitation-like scaling between two convolutions) that leaves
        # three [4, 8, 16, 16] activations saved, as Inductor's partition does: the first
        # convolution's output, the scaled input of the second and the second's output. With
        # the op whole the ReLU's output was saved too. Gradients and running statistics
        # against float64 eager.
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.c1, self.c2 = (torch.nn.Conv2d(c, 8, 3, padding=1) for c in (3, 8))
                self.bn = torch.nn.BatchNorm2d(8)

            def forward(self, x):
                r = torch.relu(self.bn(self.c1(x)))
                return self.c2(r * r.mean((2, 3), keepdim=True).sigmoid()).square().sum()

        torch.manual_seed(6)
        net, x = Net().train(), torch.randn(4, 3, 16, 16)
        ref = copy.deepcopy(net).double()
        saved = []

        def pack(s):
            saved.append(s.numel())
            return s

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda s: s):
            loss = compiled(net)(x)
        loss.backward()
        self.assertEqual(saved.count(4 * 8 * 16 * 16), 3, saved)
        ref(x.double()).backward()
        # The first convolution's bias gets a gradient of 0 (BatchNorm takes the mean out), so
        # the absolute tolerance is against the model's largest gradient (eager float32's error
        # there: 2.8e-5 of 830).
        scale = max(q.grad.abs().max().item() for q in ref.parameters())
        for (name, p), q in zip(net.named_parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad.double(), q.grad, rtol=1e-4, atol=1e-6 * scale,
                                       msg=lambda m, name=name: f"{name}: {m}")
        torch.testing.assert_close(net.bn.running_mean.double(), ref.bn.running_mean)
        torch.testing.assert_close(net.bn.running_var.double(), ref.bn.running_var)

    def test_a_saved_reshape_of_a_computed_value_is_a_view_not_a_copy(self):
        # A linear layer's input saved for its weight gradient is view(layer_norm(x), [B*T, C]):
        # the kernel writes the LayerNorm's value once and the saved tensor is a view of it
        # (a copy was a kernel and [B*T, C] floats more per layer). Gradients as eager's.
        from cinn_like.torch import backend, kernel, plan_cache
        plan_cache.enabled = False  # a stored plan would skip the compile this test watches
        self.addCleanup(setattr, plan_cache, "enabled", True)
        kinds = []

        def compile_partition(sub, target, pooled=()):
            k = kernel.compile_partition(sub, target, pooled)
            kinds.extend(r[0] for r in k.outputs)
            return k

        for dev in devices():
            torch.manual_seed(0)
            eager = torch.nn.Sequential(torch.nn.LayerNorm(32), torch.nn.Linear(32, 16)).to(dev)
            mine = copy.deepcopy(eager)
            x = torch.randn(4, 8, 32, device=dev)
            kinds.clear()
            ct.reset()
            saved = backend.compile_partition
            backend.compile_partition = compile_partition
            try:
                got = compiled(mine)(x)
            finally:
                backend.compile_partition = saved
            self.assertIn("view", kinds, dev)
            want = eager(x)
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
            g = torch.randn_like(want)
            got.backward(g)
            want.backward(g)
            assert_same_grads(eager, mine, dev, 1e-5)

    def test_a_retained_graph_runs_its_backward_twice(self):
        # The backward graph owns its arguments and each kernel drops its inputs after their
        # last read (owned_args.py); with retain_graph AOTAutograd keeps the saved tensors, so a
        # second backward reads them again: the gradients accumulate to twice eager's (saved
        # activations of 128 KiB, above the 64 KiB from which the kernel hands inputs back).
        for dev in devices():
            with self.subTest(dev=dev):
                torch.manual_seed(5)
                eager = torch.nn.Sequential(
                    torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.LayerNorm(256),
                    torch.nn.Linear(256, 256), torch.nn.Tanh()).to(dev)
                mine = copy.deepcopy(eager)
                x = torch.randn(128, 256, device=dev)
                got = compiled(mine)(x)
                g = torch.randn_like(got)
                got.backward(g, retain_graph=True)
                got.backward(g)
                want = eager(x)
                want.backward(g, retain_graph=True)
                want.backward(g)
                assert_same_grads(eager, mine, dev, 1e-4)

    def test_a_forward_allocates_what_it_saves_in_blocks(self):
        # What a training forward returns only for its backward is allocated in a few blocks per
        # call (kernel.OutputPool: an allocation per block before the kernels run, not one per
        # saved tensor; values this small all in one); its output, which the caller may keep,
        # has an allocation of its own, so keeping it keeps none of the saved tensors alive;
        # also where a stored graph plan gives the kernels (a warm start). Gradients as eager's.
        import cinn_like  # noqa: PLC0415
        for dev in devices():
            with self.subTest(dev=dev):
                torch.manual_seed(3)
                eager = torch.nn.Sequential(
                    torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.LayerNorm(64),
                    torch.nn.Linear(64, 64), torch.nn.Tanh(), torch.nn.Linear(64, 8)).to(dev)
                mine = copy.deepcopy(eager)
                params = {p.data_ptr() for p in mine.parameters()}
                for start in ("cold", "warm"):
                    hits = ct.stats().get("plan_hits", 0)
                    cmodel = compiled(mine)  # Dynamo reset: compiled again, or from the plan
                    x = torch.randn(16, 32, device=dev)
                    saved = []

                    def pack(s):
                        saved.append(s)
                        return s

                    with torch.autograd.graph.saved_tensors_hooks(pack, lambda s: s):
                        got = cmodel(x)
                    computed = [s for s in saved if s.data_ptr() not in params
                                and s.data_ptr() != x.data_ptr()]
                    blocks = {s.untyped_storage().data_ptr() for s in computed}
                    self.assertGreaterEqual(len(computed), 3, saved)
                    self.assertEqual(len(blocks), 1, f"{start}: {len(computed)} saved in "
                                     f"{len(blocks)} allocations")
                    self.assertNotIn(got.untyped_storage().data_ptr(), blocks)
                    want = eager(x)
                    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
                    g = torch.randn_like(want)
                    got.backward(g)
                    want.backward(g)
                    if start == "warm" and cinn_like.cache_dir():
                        self.assertGreater(ct.stats().get("plan_hits", 0), hits)
                assert_same_grads(eager, mine, dev, 1e-5)

    def test_batch_norm_statistics_are_written_back_by_one_call(self):
        # A training step writes BatchNorm's running mean, variance and batch count: AOTAutograd
        # keeps those writes in the forward graph (copy_ into the inputs), and the backend makes
        # them write-back calls (write_back.py: one _foreach_copy_ per dtype, float statistics
        # and the int64 count), PyTorch's work, not fallbacks. The statistics, outputs and
        # gradients after three steps are eager's.
        from cinn_like.torch import write_back  # noqa: PLC0415
        grouped = []
        real = write_back.group_input_copies

        def spy(gm):
            n = real(gm)
            grouped.append((n, sum(write_back.is_write_back(u) for u in gm.graph.nodes)))
            return n
        write_back.group_input_copies = spy
        self.addCleanup(setattr, write_back, "group_input_copies", real)
        for dev in devices():
            with self.subTest(dev=dev):
                torch.manual_seed(2)
                eager = SmallCNN().to(dev).train()
                mine = copy.deepcopy(eager)
                grouped.clear()
                before = ct.stats()["ops_fallback"]
                cmodel = compiled(mine)
                for _ in range(3):
                    x = torch.randn(4, 3, 16, 16, device=dev)
                    got, want = cmodel(x), eager(x)
                    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
                    got.square().sum().backward()
                    want.square().sum().backward()
                self.assertEqual(ct.stats()["ops_fallback"], before, ct.fallback_report())
                self.assertIn((3, 2), grouped, "the statistics were not written back by two calls")
                for (name, b), be in zip(mine.named_buffers(), eager.buffers()):
                    torch.testing.assert_close(b, be, rtol=1e-5, atol=1e-6, msg=name)
                assert_same_grads(eager, mine, dev, 1e-4)

    def test_layer_norm_output_and_gradients_over_two_dims(self):
        # Training keeps mean and rstd for the backward: the output is made from them
        # (ops/nn.py). Normalized over the last two dims, against float64 eager.
        for dev in devices():
            with self.subTest(dev=dev):
                torch.manual_seed(5)
                x = torch.randn(4, 5, 6, device=dev) * 3 + 1
                w = torch.randn(5, 6, device=dev)
                b = torch.randn(5, 6, device=dev)
                g = torch.randn(4, 5, 6, device=dev)

                def f(x, w, b):
                    return torch.nn.functional.layer_norm(x, (5, 6), w, b, 1e-5)

                mine = [t.clone().requires_grad_() for t in (x, w, b)]
                ref = [t.double().requires_grad_() for t in (x, w, b)]
                out = compiled(f)(*mine)
                (out * g).sum().backward()
                want = f(*ref)
                (want * g.double()).sum().backward()
                torch.testing.assert_close(out.double(), want, rtol=1e-5, atol=1e-5)
                for got, exp, what in zip(mine, ref, "xwb"):
                    torch.testing.assert_close(got.grad.double(), exp.grad, rtol=1e-4, atol=1e-4,
                                               msg=lambda m, what=what: f"grad {what}: {m}")


if __name__ == "__main__":
    unittest.main()
