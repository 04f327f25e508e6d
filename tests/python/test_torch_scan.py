"""The cumulative aten ops (cumsum, cumprod, cummax, cummin, logcumsumexp) through
torch.compile(backend="cinn_like") against eager on fresh random data, each required to run in
cinn_like's scans: every dim and negative dims, rank-0 inputs, integer and bool inputs (cumsum
and cumprod promote to int64), float16/bfloat16 as storage types, cummax/cummin ties (the last
index) and NaNs, logcumsumexp with infinities and NaNs, a long line."""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    from torch_util import compiled

    SCAN_OPS = {"cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"}

    def special(*s):
        """Normal values with about one in four replaced by +-inf or NaN."""
        x = torch.randn(*s) * 3
        pick = torch.randint(0, 12, s)
        for k, v in enumerate([float("inf"), float("-inf"), float("nan")]):
            x = torch.where(pick == k, torch.full_like(x, v), x)
        return x

    def every_scan(dim):
        def fn(x):
            mx, mn = torch.cummax(x, dim), torch.cummin(x, dim)
            return (torch.cumsum(x, dim), torch.cumprod(x, dim), torch.logcumsumexp(x, dim),
                    mx.values, mx.indices, mn.values, mn.indices)
        return fn


def _check(test, name, fn, args, **tol):
    ct.reset()
    with torch.no_grad():
        got = compiled(fn)(*args)
        ref = fn(*args)
    got = got if isinstance(got, tuple) else (got,)
    ref = ref if isinstance(ref, tuple) else (ref,)
    test.assertEqual(len(got), len(ref))
    for g, e in zip(got, ref):
        test.assertEqual(g.dtype, e.dtype, name)
        test.assertEqual(g.shape, e.shape, name)
        if e.is_floating_point():
            torch.testing.assert_close(g, e, equal_nan=True, **tol)
        else:
            test.assertTrue(torch.equal(g, e), f"{name}: {g} != {e}")
    fell = {op.split(".")[0] for op, _ in ct.fallback_report()}
    test.assertFalse(fell & SCAN_OPS, f"{name}: fell back {ct.fallback_report()}")
    test.assertGreater(ct.stats()["ops_compiled"], 0)


@needs_torch
class TorchScanTest(unittest.TestCase):
    def test_every_dim(self):
        x = torch.randn(4, 5, 6) * 0.7
        for dim in (0, 1, 2, -1, -2, -3):
            with self.subTest(dim=dim):
                _check(self, f"dim {dim}", every_scan(dim), [x])

    def test_rank0_and_size1_dims(self):
        _check(self, "rank 0", every_scan(0), [torch.randn(())])
        _check(self, "rank 0, dim -1", every_scan(-1), [torch.randn(())])
        _check(self, "size-1 dims", every_scan(2), [torch.randn(3, 1, 7, 1)])
        _check(self, "one line of one", every_scan(0), [torch.randn(1)])

    def test_integer_and_bool_inputs(self):
        i = torch.randint(-4, 5, (6, 7), dtype=torch.int32)
        b = torch.rand(6, 7) > 0.5
        u = torch.randint(0, 4, (6, 7), dtype=torch.uint8)
        cases = [
            ("int32 promotes", lambda i: (torch.cumsum(i, 1), torch.cumprod(i, 0)), [i]),
            ("uint8 promotes", lambda u: (torch.cumsum(u, 0), torch.cumprod(u, 1)), [u]),
            ("bool promotes", lambda b: (torch.cumsum(b, 1), torch.cumprod(b, 0)), [b]),
            ("dtype argument", lambda i: (torch.cumsum(i, 1, dtype=torch.float32),
                                          torch.cumsum(i, 0, dtype=torch.int16),
                                          torch.cumprod(i, 1, dtype=torch.float64)), [i]),
            ("int and bool extremes", lambda i, b: (*torch.cummax(i, 1), *torch.cummin(i, 0),
                                                    *torch.cummax(b, 0), *torch.cummin(b, 1)),
             [i, b]),
        ]
        for name, fn, args in cases:
            with self.subTest(name):
                _check(self, name, fn, args)

    def test_ties_take_the_last_index(self):
        # Few distinct values: equal running extremes all along the lines.
        x = torch.randint(-2, 3, (8, 13)).float()
        _check(self, "ties", lambda x: (*torch.cummax(x, 1), *torch.cummin(x, 1),
                                        *torch.cummax(x, 0), *torch.cummin(x, -2)), [x])
        t = torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0, 5.0, 5.0])
        _check(self, "one line", lambda t: (*torch.cummax(t, 0), *torch.cummin(t, 0)), [t])

    def test_infinities_and_nans(self):
        x = special(9, 12)
        _check(self, "special", lambda x: (torch.logcumsumexp(x, 1), torch.logcumsumexp(x, 0),
                                           *torch.cummax(x, 1), *torch.cummin(x, 0),
                                           torch.cumsum(x, 1)), [x])
        t = torch.tensor([float("-inf"), 1.0, float("inf"), 2.0, float("nan"), 3.0, float("nan")])
        _check(self, "one special line", lambda t: (torch.logcumsumexp(t, 0), *torch.cummax(t, 0),
                                                    *torch.cummin(t, 0)), [t])
        n = torch.full((2, 5), float("-inf"))
        _check(self, "all -inf", lambda n: torch.logcumsumexp(n, 1), [n])

    def test_float16_bfloat16(self):
        for dtype, tol in ((torch.float16, dict(rtol=2e-3, atol=2e-3)),
                           (torch.bfloat16, dict(rtol=1.6e-2, atol=1e-2))):
            x = (torch.rand(5, 9) + 0.5).to(dtype)
            with self.subTest(dtype=dtype):
                _check(self, f"{dtype}", every_scan(1), [x], **tol)
                _check(self, f"{dtype} dim 0", every_scan(0), [x], **tol)

    def test_long_line_and_many_lines(self):
        # Linear work: a line of 20000 elements and 3000 short lines (the CPU's thread pool).
        x = torch.randn(3, 20000)
        _check(self, "long line", lambda x: (torch.cumsum(x, 1), *torch.cummax(x, 1),
                                             torch.logcumsumexp(x, 1)), [x], rtol=1e-4, atol=2e-3)
        y = torch.randn(3000, 7)
        _check(self, "many lines", lambda y: (torch.cumsum(y, 1), torch.cumprod(y, 0).abs() > 1,
                                              *torch.cummin(y, 1)), [y])

    def test_backward(self):
        x = torch.randn(4, 6, requires_grad=True)
        fn = lambda x: (torch.cumsum(x, 1) * torch.cummax(x, 0).values).sum()  # noqa: E731
        ct.reset()
        got = torch.autograd.grad(compiled(fn)(x), x)[0]
        ref = torch.autograd.grad(fn(x), x)[0]
        torch.testing.assert_close(got, ref)
        fell = {op.split(".")[0] for op, _ in ct.fallback_report()}
        self.assertFalse(fell & {"cumsum", "cummax"}, f"fell back {ct.fallback_report()}")


if __name__ == "__main__":
    unittest.main()
