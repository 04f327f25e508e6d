"""The torch backend's call path (cinn_like/torch/kernel.py: a C call plan made at the first
call, data pointers only afterwards) and its CUDA-graph mode (cudagraph.py): results match
eager whatever the callers do between calls (new tensors, tensors changed in place, views,
results kept across later calls), and bad options are refused."""
import os
import unittest

from torch_util import HAVE_TORCH, MLP, needs_torch

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    from torch.fx.experimental.proxy_tensor import make_fx
    from cinn_like.torch.kernel import compile_partition

needs_cuda = unittest.skipUnless(HAVE_TORCH and torch.cuda.is_available(), "needs a CUDA GPU")


def chain(x, w, b, d):
    return torch.relu(x * w + b) * torch.sigmoid(d)


def fresh(device, *shapes):
    return [torch.randn(*s, device=device) for s in shapes]


@needs_torch
class CallPathTest(unittest.TestCase):
    def setUp(self):
        torch._dynamo.reset()
        torch.manual_seed(7)
        self.old = ct.set_options(cudagraphs=False)

    def tearDown(self):
        ct.set_options(**self.old)

    def calls_track_eager(self, device, fn, **compile_args):
        """Five calls of compiled `fn` against eager on the same arguments, changed between
        calls in every way a caller may: the same tensors, new ones, one changed in place, a
        non-contiguous view; each call's result is compared again after the later calls (a
        result must not be overwritten by them)."""
        before = ct.stats()["partitions"]
        g = torch.compile(fn, backend="cinn_like", dynamic=False, **compile_args)
        args = fresh(device, (64, 32), (32,), (32,), (64, 32))
        kept = []
        for step in range(5):
            if step == 2:
                args = fresh(device, (64, 32), (32,), (32,), (64, 32))
            if step == 3:
                args[1].mul_(-2.0)  # a parameter updated in place keeps its address
            if step == 4:
                args[0] = torch.randn(32, 64, device=device).t()  # a view: not contiguous
            got = g(*args)
            want = fn(*args)
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6, msg=f"call {step}")
            kept.append((got, want.clone()))
        self.assertGreater(ct.stats()["partitions"], before, "nothing was compiled")
        for step, (got, want) in enumerate(kept):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6,
                                       msg=f"the result of call {step}, after the later calls")

    def test_calls_track_eager_cpu(self):
        self.calls_track_eager("cpu", chain)

    def test_cpu_loops_run_on_torchs_openmp_team(self):
        # PyTorch puts its libgomp in the process's global scope: generated parallel loops run
        # on that team (as Inductor's C++ kernels do), not on a second pool, and give eager's
        # results there (a row sum over many rows is a parallel loop).
        from cinn_like._lib import lib
        x = torch.randn(4096, 512)
        g = torch.compile(lambda x: x.sum(dim=-1), backend="cinn_like", dynamic=False)
        torch.testing.assert_close(g(x), x.sum(dim=-1), rtol=1e-5, atol=1e-4)
        self.assertEqual(lib.cinn_like_parallel_on_openmp(), 1)

    def test_inference_graphs_skip_aot_wrappers_only_where_they_pass_through(self):
        """Graphs that write an input, return a view of an input, or train keep AOTAutograd's
        runtime wrappers; the rest are called directly, with the same results."""
        def writes(x, w):
            x.mul_(2.0)
            return torch.tanh(x) + w

        cases = [("plain", lambda x, w: torch.tanh(x * w + 1.0) - x, True),
                 ("writes an input", writes, False),
                 # Dynamo returns an input itself: the graph does not.
                 ("returns an input", lambda x, w: (torch.tanh(x) * w, x), True),
                 ("returns a view", lambda x, w: (torch.exp(x) + w).t(), True),
                 ("returns an input's view", lambda x, w: (torch.exp(x) + w, x.t()), False)]
        for name, fn, direct in cases:
            with self.subTest(name), torch.no_grad():
                torch._dynamo.reset()
                ct.reset()
                g = torch.compile(fn, backend="cinn_like", dynamic=False)
                for _ in range(2):
                    x, w = fresh("cpu", (8, 16), (16,))
                    want = fn(x.clone(), w)
                    got = g(x, w)
                    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
                self.assertEqual(ct.stats()["direct_inference_graphs"], int(direct))
        # Grad on and an input requiring it, no output requiring it: AOT runs the inference
        # graph with grad off, so the wrappers stay.
        torch._dynamo.reset()
        ct.reset()
        detached = torch.compile(lambda x, w: torch.tanh(x * w).detach(), backend="cinn_like",
                                 dynamic=False)
        x, w = fresh("cpu", (8, 16), (16,))
        w.requires_grad_(True)
        got = detached(x, w)
        self.assertFalse(got.requires_grad)
        torch.testing.assert_close(got, torch.tanh(x * w).detach(), rtol=1e-5, atol=1e-6)
        self.assertEqual(ct.stats()["direct_inference_graphs"], 0)
        torch._dynamo.reset()
        ct.reset()
        model = MLP()
        x = torch.randn(4, 32)
        g = torch.compile(model, backend="cinn_like", dynamic=False)
        g(x).sum().backward()  # training: the wrappers make the autograd function
        self.assertEqual(ct.stats()["direct_inference_graphs"], 0)
        self.assertIsNotNone(model.net[0].weight.grad)

    @needs_cuda
    def test_calls_track_eager_cuda(self):
        self.calls_track_eager("cuda", chain)

    @needs_cuda
    def test_misaligned_views_track_eager_cuda(self):
        # Views starting 4 and 8 bytes into their storage: the kernels' float4 accesses need 16,
        # so the host runs them on aligned copies (cinn_like_cuda_launch_realigned); the
        # compiled graph is the aligned calls' (the same shapes and strides).
        g = torch.compile(chain, backend="cinn_like", dynamic=False)
        args = fresh("cuda", (64, 32), (32,), (32,), (64, 32))
        torch.testing.assert_close(g(*args), chain(*args), rtol=1e-5, atol=1e-6)
        for offset in (1, 2):
            x = torch.randn(64 * 32 + offset, device="cuda")[offset:].view(64, 32)
            d = torch.randn(64 * 32 + 3, device="cuda")[3:].view(64, 32)
            self.assertNotEqual(x.data_ptr() % 16, 0)
            got = g(x, args[1], args[2], d)
            torch.testing.assert_close(got, chain(x, args[1], args[2], d), rtol=1e-5, atol=1e-6,
                                       msg=f"views at offsets {offset} and 3")

    @needs_cuda
    def test_unaligned_16bit_products_are_views_of_padded_rows_cuda(self):
        # GPT-2's logits (50257 wide): a 16-bit GEMM result whose rows are not 16-byte units is
        # computed with padded rows and returned as a view of them (padded_output.py), values
        # as eager's, default and CUDA-graph modes; an aligned width stays contiguous. The
        # weight read transposed (a linear layer's t(weight)) and as it is (x @ v).
        def matmul(x, v, b):
            return x @ v if b is None else x @ v + b

        for dt in (torch.float16, torch.bfloat16):
            x = torch.randn(4, 128, 256, device="cuda", dtype=dt)
            for width, bias in ((1001, False), (1001, True), (1024, True)):
                w = torch.randn(width, 256, device="cuda", dtype=dt) / 16
                b = torch.randn(width, device="cuda", dtype=dt) if bias else None
                for fn, weight in ((torch.nn.functional.linear, w), (matmul, w.t().contiguous())):
                    for mode in ("default", "reduce-overhead"):
                        torch._dynamo.reset()
                        g = torch.compile(fn, backend="cinn_like", dynamic=False, mode=mode)
                        msg = f"{dt} {fn.__name__} width {width} bias {bias} {mode}"
                        for _ in range(3):  # the first call, the call plan, a replay
                            got = g(x, weight, b)
                            torch.testing.assert_close(got, fn(x, weight, b), rtol=2e-2,
                                                       atol=2e-2, msg=msg)
                        # x @ v + b is a product and an add (no addmm): the add writes rows
                        # of its own. CUDA-graph mode may return a dense copy.
                        padded = width % 8 and (fn is not matmul or not bias)
                        if mode == "default":
                            rows = 1008 if padded else width
                            self.assertEqual(got.stride(), (128 * rows, rows, 1), msg)

    @needs_cuda
    def test_cudagraphs_track_eager(self):
        ct.reset()
        self.calls_track_eager("cuda", chain, mode="reduce-overhead")
        stats = ct.stats()
        # Captured at the second call, again once the first input moved (a new tensor at the
        # third call moves every input: each position is copied from then on), and again at
        # the fourth, the caller having kept the third's result (from then on results are
        # copies).
        self.assertEqual(stats["cudagraph_captures"], 3, stats)
        self.assertEqual(stats["cudagraph_replays"], 3, stats)  # the view recompiles: eager first

    @needs_cuda
    def test_cudagraph_results_are_aliases_until_a_caller_keeps_one(self):
        """A loop that lets each result go gets the graph's outputs without copies and no new
        capture; a view kept across calls is never overwritten."""
        ct.reset()
        g = torch.compile(chain, backend="cinn_like", dynamic=False, mode="reduce-overhead")
        args = fresh("cuda", (64, 32), (32,), (32,), (64, 32))
        for step in range(6):
            args[1].mul_(-1.0)  # each call's inputs differ, in place
            got = g(*args)
            torch.testing.assert_close(got, chain(*args), rtol=1e-5, atol=1e-6, msg=f"call {step}")
            del got  # let it go before the next call (`got = g(...)` would still hold it then)
        stats = ct.stats()
        self.assertEqual(stats["cudagraph_captures"], 1, stats)
        self.assertEqual(stats["cudagraph_replays"], 5, stats)
        row = g(*args)[3]  # a view of a result, kept
        want = chain(*args)[3]
        for _ in range(3):
            args[1].mul_(-1.0)
            torch.testing.assert_close(g(*args), chain(*args), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(row, want, rtol=1e-5, atol=1e-6, msg="the kept view")
        self.assertEqual(ct.stats()["cudagraph_captures"], 2, ct.stats())

    @needs_cuda
    def test_cudagraphs_train_mlp(self):
        """Training steps (forward and backward graphs, each captured) track eager's."""
        torch.manual_seed(3)
        model = MLP().cuda()
        ref = MLP().cuda()
        ref.load_state_dict(model.state_dict())
        g = torch.compile(model, backend="cinn_like", dynamic=False,
                          options={"cudagraphs": True})
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        opt_ref = torch.optim.SGD(ref.parameters(), lr=0.05)
        for step in range(4):
            x, y = torch.randn(16, 32, device="cuda"), torch.randn(16, 10, device="cuda")
            for m, o, fn in ((model, opt, g), (ref, opt_ref, ref)):
                o.zero_grad()
                loss = torch.nn.functional.mse_loss(fn(x), y)
                loss.backward()
                o.step()
                if m is model:
                    got = loss.detach()
                else:
                    torch.testing.assert_close(got, loss.detach(), rtol=1e-4, atol=1e-5,
                                               msg=f"loss at step {step}")
        for (name, p), q in zip(model.named_parameters(), ref.parameters()):
            torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5, msg=name)

    def test_each_partition_compiles_once_and_fx_is_restored(self):
        """A partition is compiled once, in the trial (backend._partitions_that_compile), and
        that kernel is spliced into the graph; a later partition reading an earlier one's
        results reads what replaced them. The lazy GraphModule switch is undone after the
        compile, also when it fails. (The compile cache, and with it the plan cache, is off:
        a plan would skip the trials.)"""
        import torch.fx.passes.utils.common as fx_common
        from cinn_like.torch import backend

        ct.set_flags(cinn_like_cache=False)
        self.addCleanup(ct.set_flags, cinn_like_cache=os.environ.get("FLAGS_cinn_like_cache",
                                                                     "true"))
        compiles = []
        real = backend._compile_sub

        def counted(sub, target, pooled=()):
            compiles.append(len([n for n in sub.graph.nodes if n.op == "call_function"]))
            return real(sub, target, pooled)

        backend._compile_sub = counted
        self.addCleanup(setattr, backend, "_compile_sub", real)
        x, w, b, d = fresh("cpu", (64, 32), (32,), (32,), (64, 32))
        got = torch.compile(chain, backend="cinn_like")(x, w, b, d)
        torch.testing.assert_close(got, chain(x, w, b, d), rtol=1e-5, atol=1e-6)
        self.assertEqual(len(compiles), 1, compiles)  # one partition, compiled once

        # tanh runs in PyTorch: two partitions, the second reading the first's result.
        old = ct.set_options(deny=["tanh"])
        self.addCleanup(ct.set_options, **old)
        torch._dynamo.reset()
        compiles.clear()

        def split(x, w, b, d):
            return torch.sigmoid(torch.tanh(torch.relu(x * w + b)) * d)

        got = torch.compile(split, backend="cinn_like")(x, w, b, d)
        torch.testing.assert_close(got, split(x, w, b, d), rtol=1e-5, atol=1e-6)
        self.assertEqual(len(compiles), 2, compiles)  # one per partition
        self.assertIs(fx_common.GraphModule, torch.fx.GraphModule)

        def broken(gm, rules, owns_args):
            raise RuntimeError("a failure inside the fusion")

        inner = backend._compile_fused_graph
        backend._compile_fused_graph = broken
        self.addCleanup(setattr, backend, "_compile_fused_graph", inner)
        gm = make_fx(chain)(x, w, b, d)
        with self.assertRaisesRegex(RuntimeError, "inside the fusion"):
            backend._compile_graph(gm, None)
        self.assertIs(fx_common.GraphModule, torch.fx.GraphModule)

    def test_splice_orders_users_of_a_piece_after_it(self):
        """partition.splice on a graph where a user of a piece's output comes before the piece's
        last node, and a second piece reads the first's output: the new graph is in a valid
        order (lint), keeps the nodes outside the pieces, and computes what the old one did.
        The pieces' 'kernels' here are plain functions: what is under test is the splice."""
        from types import SimpleNamespace

        from cinn_like.torch.partition import splice

        def f(x):
            a = torch.relu(x)
            u = torch.neg(a)  # reads the first piece's output before the piece ends
            b = torch.exp(a)
            return torch.add(u, b), a

        x = torch.randn(5, 7)
        gm = torch.fx.symbolic_trace(f)
        want = f(x)
        x_node, a, u, b, c, out = list(gm.graph.nodes)
        first = SimpleNamespace(call=lambda t: (torch.relu(t), torch.exp(torch.relu(t))))
        second = SimpleNamespace(call=torch.add)
        gm = splice(gm, [([a, b], [x_node], [a, b], first), ([c], [u, b], [c], second)])
        gm.graph.lint()
        gm.recompile()
        got = gm(x)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, rtol=0, atol=0)
        ops = [n.target for n in gm.graph.nodes if n.op == "call_function"]
        self.assertEqual(ops.count(first.call), 1)
        self.assertEqual(ops.count(second.call), 1)
        self.assertEqual(ops.count(torch.neg), 1)  # kept, after the first piece's call
        self.assertNotIn(torch.relu, ops)
        self.assertIs(gm.fused_0, first)

    def test_partition_refuses_wrong_inputs(self):
        args = fresh("cpu", (8, 4), (4,), (4,), (8, 4))
        kernel = compile_partition(make_fx(chain)(*args), "x86")
        torch.testing.assert_close(kernel(*args), chain(*args))
        with self.assertRaisesRegex(ValueError, r"input 0 is torch.float64\[8, 4\].*float32\[8, 4\]"):
            kernel(args[0].double(), *args[1:])
        with self.assertRaisesRegex(ValueError, r"input 3 is torch.float32\[8, 5\]"):
            kernel(*args[:3], torch.randn(8, 5))
        with self.assertRaisesRegex(TypeError, "input 1 is int"):
            kernel(args[0], 3, *args[2:])
        torch.testing.assert_close(kernel(*args), chain(*args))  # still works after errors

    def test_partition_call_returns_every_kind_of_result(self):
        # The call written for the partition (call_source.py) returns computed results,
        # an input passed through and a transposed result in its strides, takes parameters,
        # and sends a non-contiguous input or another dtype to the slow path.
        def f(x, w):
            y = torch.exp(x) * w
            return y, x, (y + 1).t()
        x, w = torch.randn(6, 5), torch.nn.Parameter(torch.randn(5), requires_grad=False)
        kernel = compile_partition(make_fx(f)(x, w), "x86")
        for step, args in enumerate(((x, w), (torch.randn(5, 6).t(), w),
                                     (x.clone(), torch.randn(5)))):
            got, want = kernel(*args), f(*args)
            self.assertEqual(len(got), 3)
            for g, e in zip(got, want):
                torch.testing.assert_close(g, e)
                if step != 1:  # eager's results follow a transposed input's strides
                    self.assertEqual(g.stride(), e.stride())
            self.assertIs(got[1], args[0])
        with self.assertRaisesRegex(TypeError, "missing 1 required positional argument"):
            kernel(x)

    def test_large_results_are_allocated_by_the_call(self):
        # Results of 1 MiB or more not pooled are given no memory: the call allocates each
        # before its first write (kernel.LateOutputs, cinn_like_call_plan_run_hooked), one
        # of them returned as a transposed view; small and pooled results as before; each call's
        # in new memory, a kept result never overwritten. Tolerances: float32 sums of 512 terms
        # in another order.
        def f(x):
            y = torch.tanh(x) * 2
            return x.sum(0), y, (x * 3).t(), y.view(-1)[5:70000], torch.exp(x), x.abs()
        x = torch.randn(512, 1024)
        kernel = compile_partition(make_fx(f)(x), "x86", pooled=(4, 5))
        late = {kernel.outputs[i][1] for i in (1, 2)}
        self.assertEqual(set(kernel.late.outputs), late)
        self.assertEqual(set(kernel.pool.offsets), {kernel.outputs[i][1] for i in (4, 5)})
        kept = []
        for _ in range(3):
            args = (torch.randn(512, 1024),)
            got, want = kernel(*args), f(*args)
            for g, e in zip(got, want):
                torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-4)
                self.assertEqual(g.stride(), e.stride())
            kept.append((got, [e.clone() for e in want]))
        self.assertEqual(len({g[2].data_ptr() for g, _ in kept}), 3)
        for got, want in kept:
            for g, e in zip(got, want):
                torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-4)

    def test_a_failed_allocation_by_the_call_raises_its_own_error(self):
        # The call's allocation of a large result runs in a ctypes callback: its exception (out
        # of memory) fails the call, which raises it; the next call runs as before.
        from unittest import mock  # noqa: PLC0415
        from cinn_like.torch import kernel as K  # noqa: PLC0415
        def f(x):
            return torch.tanh(x) * 2
        failing, real = [], K.empty_allocator

        def empty_of(device):  # the kernel's allocation function, failing on demand
            make = real(device)

            def empty(shape, strides, dtype):
                if failing:
                    raise MemoryError("no memory for you")
                return make(shape, strides, dtype)
            return empty
        x = torch.randn(512, 1024)
        with mock.patch.object(K, "empty_allocator", empty_of):
            kernel = compile_partition(make_fx(f)(x), "x86")
        self.assertEqual(len(kernel.late.outputs), 1)
        failing.append(True)
        with self.assertRaisesRegex(MemoryError, "no memory for you"):
            kernel(x)
        failing.clear()
        torch.testing.assert_close(kernel(x), f(x))

    def test_an_owned_call_drops_each_input_after_its_last_read(self):
        # call_owned takes a list it owns and drops each input from it after the last statement
        # that reads it (cinn_like_release_input): x, read by the first statement only, is freed
        # before the result (2 MiB, allocated by the call before the last statement, which reads
        # y) is allocated; after the call the list is empty of both. Tolerance: float32 sums
        # of two terms in another order.
        import weakref  # noqa: PLC0415
        from unittest import mock  # noqa: PLC0415
        from cinn_like.torch import kernel as K  # noqa: PLC0415

        def f(x, y):
            return (y * torch.tanh(x.sum(0)).amax(1, keepdim=True)).sum(0)
        x_dead_then, real = [], K.empty_allocator
        ref = []

        def empty_of(device):
            make = real(device)

            def empty(shape, strides, dtype):
                x_dead_then.append(ref[0]() is None)
                return make(shape, strides, dtype)
            return empty
        x, y = torch.randn(2, 512, 1024), torch.randn(2, 512, 1024)
        with mock.patch.object(K, "empty_allocator", empty_of):
            kernel = compile_partition(make_fx(f)(x, y), "x86")
        self.assertEqual(len(kernel.late.outputs), 1)
        want = f(x, y)
        ref.append(weakref.ref(x))
        inputs = [x, y]
        del x, y
        got = kernel.call_owned(inputs)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        self.assertEqual(x_dead_then, [True], "x was alive when the result was allocated")
        self.assertEqual(inputs, [None, None])
        # The plain call holds its inputs as before, and a list it cannot take as it is (a
        # transposed input) goes to the slow path, which drops nothing.
        a, b = torch.randn(2, 512, 1024), torch.randn(2, 512, 1024)
        torch.testing.assert_close(kernel(a, b), f(a, b), rtol=1e-5, atol=1e-5)
        odd = [a.transpose(1, 2).contiguous().transpose(1, 2), b]
        torch.testing.assert_close(kernel.call_owned(odd), f(a, b), rtol=1e-5, atol=1e-5)
        self.assertIsNotNone(odd[0])

    def test_pooled_results_are_grouped_by_their_last_read(self):
        # Pooled results with the ranks of their last reads (kernel.OutputPool): values written
        # back (rank -1) share a block with no saved one; large saved values go in rank order
        # into blocks closed at MIN_BLOCK_BYTES (4 MiB each here) where the rank changes (two of
        # rank 1 share one); small ones share one block whatever their ranks.
        def f(x, v):
            return (torch.tanh(x), torch.exp(x), x.abs(), x * 2, x - 1, v + 1, v * 3, v.exp())
        x, v = torch.randn(1024, 1024), torch.randn(48)
        ranks = {0: 3, 1: 1, 2: 2, 3: -1, 4: 1, 5: 0, 6: 9, 7: -1}
        kernel = compile_partition(make_fx(f)(x, v), "x86", pooled=ranks)
        block_of = {i: kernel.pool.offsets[kernel.outputs[i][1]][0] for i in ranks}
        self.assertEqual(block_of, {3: 0, 7: 0, 1: 1, 4: 1, 2: 2, 0: 3, 5: 4, 6: 4})
        got = kernel(x, v)
        for g, e in zip(got, f(x, v)):
            torch.testing.assert_close(g, e)
        self.assertEqual(len({g.untyped_storage().data_ptr() for g in got}), 5)

    def test_pooled_results_share_one_block_and_track_eager(self):
        # Results a training forward only saves are allocated as one block per call
        # (kernel.OutputPool): of several dtypes, one stored transposed, one a view of another;
        # each 256 bytes aligned in the block, in a new block at each call (a kept result is never
        # overwritten), and a result outside the pool in its own allocation.
        def f(x, w):
            y = torch.exp(x) * w
            return y.sum(), y, x > 0, (y + 1).t(), y.view(-1)[1:7], (x * 3).to(torch.int64)
        x, w = torch.randn(6, 5), torch.randn(5)
        kernel = compile_partition(make_fx(f)(x, w), "x86", pooled=(1, 2, 3, 4, 5))
        self.assertEqual(set(kernel.pool.offsets), {o[1] for o in kernel.outputs[1:]})
        self.assertNotIn(kernel.outputs[0][1], kernel.pool.offsets)
        kept = []
        for _ in range(3):
            args = (torch.randn(6, 5), torch.randn(5))
            got, want = kernel(*args), f(*args)
            for g, e in zip(got, want):
                torch.testing.assert_close(g, e)
                self.assertEqual(g.stride(), e.stride())
            block = {g.untyped_storage().data_ptr() for g in got[1:]}
            self.assertEqual(len(block), 1, "the pooled results are not in one block")
            self.assertNotIn(got[0].untyped_storage().data_ptr(), block)
            start = got[1].untyped_storage().data_ptr()
            for g in got[1:]:
                self.assertEqual((g.data_ptr() - start) % 256, 0, "a pooled result is not aligned")
            kept.append((got, [e.clone() for e in want]))
        for got, want in kept:
            for g, e in zip(got, want):
                torch.testing.assert_close(g, e, msg="a later call overwrote a kept result")

    def test_pooled_results_of_one_shape_are_made_by_one_view(self):
        # Pooled results of one dtype, shape and strides lie side by side in their block and are
        # made by one view of it and one unbind (kernel.OutputPool.runs): five [7, 5] floats (140
        # bytes each, 256 apart), two of them returned transposed (views of the stored [7, 5]),
        # an int64 [7, 5] and a [3] alone. Values and strides as eager's, each result its own
        # 256-byte aligned place, a new block at each call.
        from unittest import mock  # noqa: PLC0415
        from cinn_like.torch import kernel as K  # noqa: PLC0415

        def f(x):
            return (x + 1, (x * 2).t(), x.exp(), (x > 0).to(torch.int64), x.sin(),
                    (x - 3).t(), x[0, :3] * 4)
        x = torch.randn(7, 5)
        sources, real = [], K.make_call

        def capture(spec, names, owned=False):
            fn, text = real(spec, names, owned)
            sources.append(text)
            return fn, text
        with mock.patch.object(K, "make_call", capture):
            kernel = compile_partition(make_fx(f)(x), "x86", pooled=range(7))
        runs = sorted(sorted(i for i, o in enumerate(kernel.outputs) if o[1] in ks)
                      for ks, *_ in kernel.pool.runs)
        self.assertEqual(runs, [[0, 1, 2, 4, 5]])
        self.assertEqual(sources[0].count(".unbind(0)"), 1)
        # The run's view, the int64 and the [3] alone, the two transposed results' views.
        self.assertEqual(sources[0].count(".as_strided("), 5)
        starts = set()
        for _ in range(2):
            a = torch.randn(7, 5)
            got, want = kernel(a), f(a)
            for g, e in zip(got, want):
                torch.testing.assert_close(g, e)
                self.assertEqual(g.stride(), e.stride())
            base = got[0].untyped_storage().data_ptr()
            self.assertEqual({g.untyped_storage().data_ptr() for g in got}, {base})
            places = [g.data_ptr() for g in got]
            self.assertEqual(len(set(places)), 7)
            for p in places:
                self.assertEqual((p - base) % 256, 0, "a pooled result is not aligned")
            starts.add(base)
        self.assertEqual(len(starts), 2, "a second call reused the first call's block")

    def test_inputs_a_graph_writes_are_written_back_with_no_fallback(self):
        # Writes to inputs stay in the graph and are written back by write_back.copy_inputs:
        # in strict mode (a fallback raises), inputs written, one of them also returned (the
        # graph returns the written input), of two dtypes; values and inputs as eager's.
        def f(x, y, n):
            x.add_(1.5)
            y.mul_(2.0)
            n.add_(1)
            return y * x, y
        g = torch.compile(f, backend="cinn_like", dynamic=False, options={"strict": True})
        for _ in range(3):
            args = [torch.randn(6), torch.randn(6), torch.randint(0, 9, (2,))]
            want_args = [a.clone() for a in args]
            got, want = g(*args), f(*want_args)
            for a, w in zip(args, want_args):
                torch.testing.assert_close(a, w)
            torch.testing.assert_close(got, want)
            self.assertEqual(got[1].data_ptr(), args[1].data_ptr(), "y is not the input")

    def test_channels_last_tensors_pass_without_copies(self):
        # A channels-last input and result are Program tensors in memory order (a transpose
        # inside the Program): the call takes them as they are (never the slow path, which
        # copies) and returns a channels-last result, as eager does.
        from cinn_like.torch import kernel as K  # noqa: PLC0415
        conv = torch.nn.Conv2d(8, 16, 3, padding=1).eval()

        def f(x):
            return torch.relu(conv(x)) * 2 + 1
        slow = []
        original = K.CinnLikeKernel._slow_call

        def counted(self, *args):
            slow.append(1)
            return original(self, *args)
        K.CinnLikeKernel._slow_call = counted
        try:
            g = torch.compile(f, backend="cinn_like")
            with torch.no_grad():
                for _ in range(3):
                    x = torch.randn(2, 8, 10, 12).to(memory_format=torch.channels_last)
                    got, want = g(x), f(x)
                    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
                    self.assertTrue(got.is_contiguous(memory_format=torch.channels_last))
                    self.assertEqual(got.stride(), want.stride())
        finally:
            K.CinnLikeKernel._slow_call = original
        self.assertEqual(slow, [], "a channels-last input was copied")
        # A transposed 2-D input of a partition: read in place; a row-major one is copied in.
        a, b = torch.randn(6, 5), torch.randn(5, 6)
        k = compile_partition(make_fx(lambda x, y: torch.exp(x) + y)(a.t(), b), "x86")
        torch.testing.assert_close(k(a.t(), b), torch.exp(a.t()) + b)
        torch.testing.assert_close(k(a.t().contiguous(), b), torch.exp(a.t()) + b)

    def test_compiled_graph_calls_the_partition_function(self):
        # The fused graph calls each partition's function directly (no submodule lookup).
        from cinn_like.torch.backend import compile_graph  # noqa: PLC0415
        args = fresh("cpu", (8, 4), (4,), (4,), (8, 4))
        gm = make_fx(chain)(*args)
        forward = compile_graph(gm, args).unboxed
        code = forward.__self__.code
        self.assertIn("run_partition(", code)
        self.assertNotIn("self.fused_", code)
        torch.testing.assert_close(forward(*args), chain(*args))

    def test_bad_options_are_refused(self):
        with self.assertRaisesRegex(ValueError, "cudagraphs='yes': expected True or False"):
            ct.set_options(cudagraphs="yes")
        g = torch.compile(chain, backend="cinn_like", mode="fastest")
        with self.assertRaisesRegex(Exception, "cinn_like knows the modes"):
            g(*fresh("cpu", (4, 4), (4,), (4,), (4, 4)))

    def test_cudagraphs_on_cpu_run_without_graphs(self):
        args = fresh("cpu", (8, 4), (4,), (4,), (8, 4))
        g = torch.compile(chain, backend="cinn_like", dynamic=False,
                          options={"cudagraphs": True})
        for _ in range(3):
            torch.testing.assert_close(g(*args), chain(*args))


if __name__ == "__main__":
    unittest.main()
