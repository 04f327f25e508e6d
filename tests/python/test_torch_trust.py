"""Issue 50's torch-backend cases: results that were silently wrong (a sum past 2^24 elements of
a fill or a broadcast scalar, outputs that are views of one another) and resources kept after
torch._dynamo.reset(), each against eager."""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import cinn_like.torch
    from torch_util import compiled


@needs_torch
class TorchLongSumsTest(unittest.TestCase):
    N = 2 ** 25  # one float32 accumulator stops at 2^24: x + 1 == x past it

    def test_sum_of_a_fill_and_of_a_broadcast_scalar_are_exact(self):
        n = self.N
        cases = [
            ("ones_like(x).sum()", lambda x: torch.ones_like(x).sum(), torch.randn(n)),
            ("s.expand(n).sum()", lambda s: s.expand(n).sum(), torch.tensor(1.0)),
            ("full(n, c).sum()", lambda s: (s.expand(n) * 0 + 3.0).sum(), torch.tensor(2.0)),
            ("x.sum() of ones", lambda x: x.sum(), torch.ones(n)),
            ("column sums of a broadcast row",
             lambda r: r.expand(n, 16).sum(0), torch.ones(1, 16)),
        ]
        for name, fn, arg in cases:
            with self.subTest(name):
                want = fn(arg)
                got = compiled(fn)(arg)
                # Eager's cascade sum is exact here; so must the compiled sum be.
                torch.testing.assert_close(got, want, rtol=0, atol=0)

    def test_long_sums_of_random_data_match_float64(self):
        x = torch.rand(3, 3 * 4096 * 64 + 77)
        got = compiled(lambda t: t.sum(1))(x)
        want = x.double().sum(1)
        torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-3)



class LongSumsPastInt32Test(unittest.TestCase):
    """The issue's size: a sum of 2^31 ones (and 2^31 + 513) of a broadcast scalar, exact in
    float32 as eager's (which rounds only the total: 2^31 + 513 gives 2^31 + 512), with loop
    indices past int32. The rest after the last whole block of 4096 was added element by
    element into the total, where each +1 was lost past 2^24: 2^31 + 513 gave 2^31 (and
    2^24 + 3 gave 2^24). About a second per sum."""
    SIZES = (2 ** 31, 2 ** 31 + 513)

    def test_sum_of_a_broadcast_scalar_program(self):
        import numpy as np  # noqa: PLC0415
        import cinn_like as cl  # noqa: PLC0415
        for n in self.SIZES:
            with self.subTest(n=n):
                b = cl.ProgramBuilder()
                s = b.input("s", "float32", [1])
                wide = b.op("broadcast_to", [s], {"shape": [n]})
                b.output(b.op("reduce_sum", [wide], {"axes": [0], "keepdim": True}))
                out = np.full(1, np.nan, np.float32)
                cl.compile(b, "x86", "long_sum")(np.ones(1, np.float32), out)
                self.assertEqual(out[0], np.float32(n))

    @needs_torch
    def test_expand_of_a_zero_dim_tensor_summed_through_the_backend(self):
        n = self.SIZES[-1]
        cinn_like.torch.reset()
        got = compiled(lambda s: s.expand(n).sum())(torch.tensor(1.0))
        self.assertEqual(got.item(), float(torch.tensor(float(n))))  # eager's: 2^31 + 512
        ops = {op for op, _ in cinn_like.torch.fallback_report()}
        self.assertFalse(ops & {"sum.default", "expand.default", "sum.dim_IntList"}, ops)


@needs_torch
class TorchOutputAliasingTest(unittest.TestCase):
    CASES = [
        ("y, y[1:]", lambda x: (lambda y: (y, y[1:]))(x * 2.0)),
        ("y, y.view(2, -1), y.t()", lambda x: (lambda y: (y, y.view(2, -1), y.t()))(x + 1.0)),
        ("y[1:], y.t() (the base not returned)",
         lambda x: (lambda y: (y[1:], y.t()))(torch.relu(x))),
        ("y.view(2, -1)[1:], y", lambda x: (lambda y: (y.view(2, -1)[1:], y))(x.exp())),
        ("y.unbind(0), y", lambda x: (lambda y: (*y.unbind(0), y))(x * x)),
        ("y.unbind(1)", lambda x: (x * 3.0).unbind(1)),
        ("y.chunk(2) (split_with_sizes)", lambda x: (x + 1.0).chunk(2)),
        ("y.split([1, 3]), y", lambda x: (lambda y: (*y.split([1, 3]), y))(x.exp())),
        ("z, y[0] (unrelated)", lambda x: (x.sin(), (x * 3.0)[0])),
    ]

    @staticmethod
    def storages(outs):
        return [o.untyped_storage().data_ptr() for o in outs]

    def test_outputs_that_share_storage_in_eager_share_it_compiled(self):
        # Inference graphs and training forwards: AOTAutograd returns the outputs of one
        # multi-output view (unbind's, split's) as the graph returns them, hiding their _base
        # from autograd as aot_eager does, so they share storage only where the graph's outputs
        # do.
        cinn_like.torch.reset()
        for name, fn in self.CASES:
            for grad in (False, True):
                with self.subTest(name, requires_grad=grad):
                    x = torch.randn(4, 4)
                    xe, xc = x.clone().requires_grad_(grad), x.clone().requires_grad_(grad)
                    want = fn(xe)
                    got = compiled(fn)(xc)
                    for g, w in zip(got, want):
                        torch.testing.assert_close(g, w)
                    sw, sg = self.storages(want), self.storages(got)
                    for i in range(len(want)):
                        for j in range(i + 1, len(want)):
                            self.assertEqual(sg[i] == sg[j], sw[i] == sw[j], (i, j))
                    if grad:
                        for outs in (want, got):
                            sum(o.sum() * (k + 1) for k, o in enumerate(outs)).backward()
                        torch.testing.assert_close(xc.grad, xe.grad)
                    # A write through one output shows through those that alias it, as in
                    # eager (detached: autograd refuses writes to a multi-output view).
                    want[-1].detach().fill_(7.0)
                    got[-1].detach().fill_(7.0)
                    for g, w in zip(got, want):
                        torch.testing.assert_close(g.detach(), w.detach())
        # The math still ran in cinn_like: only views were left to PyTorch, and none counts
        # as a fallback.
        ops = {op for op, _ in cinn_like.torch.fallback_report()}
        self.assertFalse(ops & {"mul.Tensor", "add.Tensor", "exp.default", "relu.default"}, ops)



@needs_torch
class TorchResetReleasesModulesTest(unittest.TestCase):
    def test_dynamo_reset_releases_the_compiled_modules(self):
        import gc  # noqa: PLC0415
        import weakref  # noqa: PLC0415
        from cinn_like.torch import cache  # noqa: PLC0415

        torch._dynamo.reset()
        gc.collect()
        # Modules of other tests' training graphs may outlive a reset: AOTAutograd's
        # CompiledFunction class keeps its compiled backward (Inductor's alike). This test's
        # graphs are inference graphs; their modules must go.
        before = {id(m) for m in cache._modules.values()}
        refs = []
        for k in range(4):  # graphs of four Programs, the first one twice (shared Module)
            fn = torch.compile(lambda x, k=k: torch.tanh(x * (k + 2.0)) + k, backend="cinn_like")
            x = torch.randn(8, 16)
            torch.testing.assert_close(fn(x), torch.tanh(x * (k + 2.0)) + k)
            refs.extend(weakref.ref(m) for m in list(cache._modules.values())
                        if id(m) not in before)
            gc.collect()
        self.assertGreaterEqual(len(refs), 4)
        torch._dynamo.reset()
        gc.collect()
        self.assertEqual([r for r in refs if r() is not None], [])
        self.assertFalse({id(m) for m in cache._modules.values()} - before)
        # Compiling again after the reset works (from the persistent cache) and is right.
        fn = torch.compile(lambda x: torch.tanh(x * 2.0), backend="cinn_like")
        x = torch.randn(8, 16)
        torch.testing.assert_close(fn(x), torch.tanh(x * 2.0))


    def test_a_compiled_graph_keeps_no_tensor_of_its_first_call(self):
        # Dynamo hands the backend real example inputs; a closure that kept them held GPT-2's
        # logits (the input of the graph after a break, 196 MiB on the GPU) for as long as the
        # compiled graph lived. A training step whose loss follows a graph break, twice: after
        # each, the tensors of the call are gone.
        import gc  # noqa: PLC0415
        import weakref  # noqa: PLC0415
        from torch_util import devices  # noqa: PLC0415

        def step(w, x):
            logits = torch.tanh(x @ w) * 2.0
            torch._dynamo.graph_break()
            return logits, torch.nn.functional.log_softmax(logits, -1).mean()

        for dev in devices():
            with self.subTest(dev=dev):
                torch._dynamo.reset()
                fn = torch.compile(step, backend="cinn_like")
                w = torch.randn(32, 48, device=dev, requires_grad=True)
                for _ in range(2):
                    x = torch.randn(64, 32, device=dev)
                    logits, loss = fn(w, x)
                    loss.backward()
                    refs = [weakref.ref(t) for t in (x, logits, loss)]
                    del x, logits, loss
                    gc.collect()
                    self.assertEqual([r for r in refs if r() is not None], [],
                                     "a compiled graph holds tensors of its call")


class ApiTypeErrorsTest(unittest.TestCase):
    """Bad-typed arguments of the Python API are TypeErrors naming the argument."""

    def test_bad_types_raise_type_errors_naming_the_argument(self):
        import cinn_like as cl  # noqa: PLC0415
        for call, names in [
                (lambda: cl.compile(None), "program"),
                (lambda: cl.compile(42), "program"),
                (lambda: cl.compile("{}", None), "target"),
                (lambda: cl.compile("{}", "x86", 3), "name"),
                (lambda: cl.load(None), "path"),
                (lambda: cl.set_flags(cinn_like_fast_math=None), "cinn_like_fast_math")]:
            with self.subTest(names):
                with self.assertRaises(TypeError) as caught:
                    call()
                self.assertIn(names, str(caught.exception))


if __name__ == "__main__":
    unittest.main()
