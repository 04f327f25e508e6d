"""The last aten ops of PyTorch's OpInfo samples mapped onto cinn_like ops (issue 12), through
torch.compile(backend="cinn_like") against eager on fresh random data: each named aten op must
reach its converter (some ops decompose before the backend sees them, so absence from the
fallback report is not enough) and run in cinn_like; backward ops compare input gradients
under a random cotangent; refused cases fall back with their reason."""
import contextlib
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import torch.nn.functional as F
    import cinn_like.torch as ct
    from cinn_like.torch import registry
    from torch_util import compiled

    aten = torch.ops.aten

    @contextlib.contextmanager
    def converted(ops):
        """Records the targets of the nodes that reach the converters of `ops`."""
        seen = set()
        saved = {op: registry.CONVERTERS[op] for op in ops}

        def recording(fn):
            def conv(c, n):
                seen.add(n.target)
                return fn(c, n)
            return conv
        for op, fn in saved.items():
            registry.CONVERTERS[op] = recording(fn)
        try:
            yield seen
        finally:
            registry.CONVERTERS.update(saved)


def _as_tuple(v):
    return v if isinstance(v, (tuple, list)) else (v,)


def _check(test, name, fn, args, ops, grad=False, **tol):
    """fn compiled against eager on args: outputs (and with grad, the gradients of the
    floating-point inputs that require them under a random cotangent); each op of `ops` reached
    its converter and none fell back."""
    ct.reset()
    with converted(ops) as seen, torch.set_grad_enabled(grad):
        got = _as_tuple(compiled(fn)(*args))
        ref = _as_tuple(fn(*args))
        test.assertEqual(len(got), len(ref), name)
        for g, e in zip(got, ref):
            test.assertEqual(g.dtype, e.dtype, name)
            test.assertEqual(g.shape, e.shape, name)
            if e.is_floating_point():
                torch.testing.assert_close(g, e, equal_nan=True, msg=name, **tol)
            else:
                test.assertTrue(torch.equal(g, e), f"{name}: {g} != {e}")
        if grad:
            leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
            pairs = [(g, e) for g, e in zip(got, ref) if e.requires_grad]
            cots = [torch.randn_like(e) for _, e in pairs]
            dg = torch.autograd.grad([g for g, _ in pairs], leaves, cots, allow_unused=True)
            de = torch.autograd.grad([e for _, e in pairs], leaves, cots, allow_unused=True)
            for a, b in zip(dg, de):
                torch.testing.assert_close(a, b, equal_nan=True, msg=f"{name} gradient", **tol)
    test.assertEqual(seen, set(ops), f"{name}: reached {seen}, not all of {ops}")
    fell = {op for op, _ in ct.fallback_report()}
    test.assertFalse(fell & {str(o).split("aten.")[-1] for o in ops},
                     f"{name}: fell back {ct.fallback_report()}")


def _fell_back(op_name):
    return [r for op, r in ct.fallback_report() if op == op_name]


@needs_torch
class MaskedScatterTest(unittest.TestCase):
    def test_forward_and_backward(self):
        ops = [aten.masked_scatter.default, aten.masked_scatter_backward.default]
        for xs, ms in (((4, 5), (4, 5)), ((4, 5), (5,)), ((3, 1, 4), (1, 2, 4)), ((6,), (6,))):
            with self.subTest(x=xs, mask=ms):
                x = torch.randn(*xs, requires_grad=True)
                mask = torch.rand(*ms) > 0.4
                out = torch.broadcast_shapes(xs, ms)
                src = torch.randn(out.numel() + 3, requires_grad=True)
                _check(self, f"masked_scatter {xs} {ms}", lambda x, m, s: x.masked_scatter(m, s),
                       [x, mask, src], ops, grad=True, rtol=0, atol=0)

    def test_dtypes(self):
        mask = torch.rand(3, 7) > 0.5
        for dt in (torch.bfloat16, torch.int32, torch.bool):
            x = (torch.randn(3, 7) * 5).to(dt)
            src = (torch.randn(2, 11) * 5).to(dt)
            _check(self, f"masked_scatter {dt}", lambda x, m, s: x.masked_scatter(m, s),
                   [x, mask, src], [aten.masked_scatter.default], rtol=0, atol=0)


@needs_torch
class BoolReductionTest(unittest.TestCase):
    def test_max_min_of_bool(self):
        b = torch.rand(4, 6) > 0.6
        fn = lambda b: (*torch.max(b, 1), *torch.min(b, 0, keepdim=True), b.amax(1), b.amin(0),  # noqa: E731
                        b.max(), b.min())
        _check(self, "bool max/min", fn, [b], [aten.max.dim, aten.min.dim, aten.amax.default,
                                                aten.amin.default, aten.max.default,
                                                aten.min.default])

    def test_cumprod_backward(self):
        """cumprod's backward takes max.dim of a bool tensor (where the input is zero)."""
        x = torch.randn(3, 6)
        x[1, 2] = 0
        x.requires_grad_(True)
        _check(self, "cumprod backward", lambda x: torch.cumprod(x, 1), [x], [aten.max.dim],
               grad=True, rtol=1e-5, atol=1e-5)


@needs_torch
class ConvertElementTypeTest(unittest.TestCase):
    def test_cast(self):
        from torch.fx.experimental.proxy_tensor import make_fx  # noqa: PLC0415
        from cinn_like.torch.backend import compile_graph  # noqa: PLC0415
        prims = torch.ops.prims
        fn = lambda x: (prims.convert_element_type.default(x, torch.bfloat16),  # noqa: E731
                        prims.convert_element_type.default(x * 3, torch.int32),
                        prims.convert_element_type.default(x, torch.float32))
        x = torch.randn(5, 7)
        gm = make_fx(fn)(x)
        ct.reset()
        with converted([prims.convert_element_type.default]) as seen:
            got = compile_graph(gm, [x])([x])
        for g, e in zip(got, fn(x)):
            self.assertEqual(g.dtype, e.dtype)
            self.assertTrue(torch.equal(g, e))
        self.assertEqual(seen, {prims.convert_element_type.default})
        self.assertEqual(ct.fallback_report(), [])


if __name__ == "__main__":
    unittest.main()
