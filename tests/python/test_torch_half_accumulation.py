"""float16 and bfloat16 ops whose converters chain several cinn_like ops (issue 50, class 9):
addbmm, group_norm, adaptive_avg_pool2d/3d and embedding_bag compute in float32 and round each
output once, as PyTorch's kernels accumulate, through torch.compile(backend="cinn_like") on
each device present. Chained in 16 bits (a product or a sum rounded before the next step) they
were a unit in the last place or more off in a large share of the elements.

On the CPU the reference is the op in float64 rounded once where PyTorch's CPU kernel rounds
more often than its CUDA kernel (addbmm adds each batch's product into the 16-bit result, the
3-d adaptive average sums in 16 bits, embedding_bag's mean divides a rounded sum), else eager;
a result passes when every element is within one unit in the last place and at most 2% of them
differ at all (the float32 order of additions may round a few the other way; the 16-bit chains
differed in 15 to 50%). On CUDA the issue's own bar: cinn_like differs from eager by more than
a unit in the last place only where Inductor's result differs as much, or where cinn_like is
nearer the float64 result than eager (at most 2% of the elements otherwise), Inductor compiled
beside it on the same inputs. Inductor runs addbmm in PyTorch (it has no decomposition of it),
so there Inductor's result is eager's and only the float64 comparison can tell eager's rounding
from ours."""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import torch.nn.functional as F
    import cinn_like.torch as ct
    from torch_util import compiled, devices, seed_case

    LOW = [torch.float16, torch.bfloat16]
    # One unit in the last place, relative, at the bottom of a binade: the tightest rtol that
    # lets every element round the other way once.
    ULP = {torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7}

    def r(*s, scale=1.0, shift=0.0):
        return torch.randn(*s) * scale + shift

    def bag_indices(n, rows):
        return torch.randint(0, rows, (n,))

    # (name, fn, inputs maker (float32 tensors are made the case's dtype; others kept), the
    # aten ops that must not fall back, whether PyTorch's CPU kernel rounds more often than
    # once). Sizes where a 16-bit chain differs in many elements: long windows and bags,
    # batches of products, values far from zero.
    CASES = [
        ("addbmm", lambda c, x, y: torch.addbmm(c, x, y),
         lambda: (r(24, 40), r(8, 24, 32), r(8, 32, 40)), ["addbmm"], True),
        ("addbmm_scaled", lambda c, x, y: torch.addbmm(c, x, y, beta=0.5, alpha=2.0),
         lambda: (r(16, 24), r(6, 16, 48), r(6, 48, 24)), ["addbmm"], True),
        ("group_norm", lambda x, w, b: F.group_norm(x, 4, w, b, eps=1e-5),
         lambda: (r(4, 32, 7, 9, scale=3.0, shift=1.0), r(32), r(32)), ["native_group_norm"],
         False),
        ("group_norm_no_affine", lambda x: F.group_norm(x, 2),
         lambda: (r(3, 8, 40, scale=2.0, shift=5.0),), ["native_group_norm"], False),
        ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (5, 7)),
         lambda: (r(2, 8, 23, 29, scale=5.0),), ["_adaptive_avg_pool2d"], False),
        ("adaptive_avg_pool3d", lambda x: F.adaptive_avg_pool3d(x, (3, 2, 4)),
         lambda: (r(2, 4, 9, 11, 13, scale=5.0),), ["_adaptive_avg_pool3d"], True),
        ("embedding_bag_mean", lambda i, w, o: F.embedding_bag(i, w, o, mode="mean"),
         lambda: (bag_indices(300, 50), r(50, 64, scale=4.0),
                  torch.tensor([0, 3, 20, 21, 90, 150, 299])), ["_embedding_bag"], True),
        ("embedding_bag_weighted_sum", lambda i, w, o, p: F.embedding_bag(
            i, w, o, mode="sum", per_sample_weights=p),
         lambda: (bag_indices(300, 50), r(50, 64, scale=4.0), torch.tensor([0, 7, 100, 180]),
                  torch.rand(300)), ["_embedding_bag"], False),
    ]


@needs_torch
class HalfAccumulationTest(unittest.TestCase):
    def check_once_rounded(self, got, want, dt):
        torch.testing.assert_close(got, want, rtol=ULP[dt], atol=torch.finfo(dt).tiny)
        differ = (got != want).float().mean().item()
        self.assertLessEqual(differ, 0.02, f"{differ:.1%} of the elements differ")

    def check_as_inductor(self, got, ind, want, exact, dt):
        """got (cinn_like) off eager's `want` by more than a unit in the last place only where
        Inductor's `ind` is off as much, or where got is nearer than eager to `exact` (the op
        in float64: eager's own rounding is no defect of ours); at
        most 2% of the elements otherwise."""
        want, exact = want.float(), exact.double()
        unit = ULP[dt] * want.abs() + torch.finfo(dt).tiny
        off_eager = (got.float() - want).abs() > torch.maximum((ind.float() - want).abs(), unit)
        off_exact = (got.double() - exact).abs() > (want.double() - exact).abs() + unit.double()
        worse = off_eager & off_exact
        share = worse.float().mean().item()
        self.assertLessEqual(share, 0.02, f"{share:.1%} of the elements differ from eager by "
                             "more than a unit in the last place where Inductor's do not")

    def test_ops_round_once(self):
        for name, fn, make, ops, cpu_rounds_more in CASES:
            for device in devices():
                for dt in LOW:
                    with self.subTest(name, device=device, dtype=dt):
                        seed_case(name)
                        args = [a.to(device, dt) if a.is_floating_point() else a.to(device)
                                for a in make()]
                        ct.reset()
                        with torch.no_grad():
                            got = compiled(fn)(*args)
                            if device == "cpu" and cpu_rounds_more:
                                wide = [a.double() if a.is_floating_point() else a for a in args]
                                want = fn(*wide).to(dt)
                            else:
                                want = fn(*args)
                        fell = {op.split(".")[0] for op, _ in ct.fallback_report()}
                        self.assertFalse(fell & set(ops), f"fell back {ct.fallback_report()}")
                        self.assertEqual(got.dtype, dt)
                        if device == "cuda":
                            torch._dynamo.reset()
                            with torch.no_grad():
                                ind = torch.compile(fn, backend="inductor", dynamic=False)(*args)
                                exact = fn(*[a.double() if a.is_floating_point() else a
                                             for a in args])
                            self.check_as_inductor(got, ind, want, exact, dt)
                        else:
                            self.check_once_rounded(got, want, dt)

    def test_a_python_number_meets_a_sixteen_bit_tensor_in_float32(self):
        # x op number (and alpha) computed in float32 and rounded once, as PyTorch's CUDA kernels
        # and Inductor compute (its opmath type); the number rounded to 16 bits first (sinc's
        # gradient multiplies by pi: 3.140625 in float16) was a unit off in a quarter of the
        # elements. Bit for bit against that float32 formula, and against eager where PyTorch's
        # CPU kernels keep the number too (a product, a quotient by the number; its CPU sum and
        # difference round the number first).
        pi = 3.141592653589793
        fns = [("mul", lambda x: x * pi, True), ("div", lambda x: x / 2.7182818, True),
               ("sinc_grad", lambda x: torch.ops.aten.mul.Scalar(x, pi), True),
               ("rsub", lambda x: 1.0471975 - x, False),
               ("add_alpha", lambda x: torch.add(x, x, alpha=0.1), False)]
        for device in devices():
            for dt in LOW:
                x = (torch.randn(4096) * 4).to(device, dt)
                for name, fn, cpu_keeps in fns:
                    with self.subTest(name, device=device, dtype=dt):
                        ct.reset()
                        got = compiled(fn)(x)
                        self.assertEqual(ct.fallback_report(), [])
                        want = [fn(x.float()).to(dt)]
                        if device == "cuda" or cpu_keeps:
                            want.append(fn(x))
                        for w in want:
                            differ = int((got != w).sum())
                            self.assertEqual(differ, 0, f"{differ} of 4096 elements differ")

    def test_group_norm_statistics(self):
        # native_group_norm's mean and rstd outputs (what its backward reads) round once too.
        for device in devices():
            for dt in LOW:
                with self.subTest(device=device, dtype=dt):
                    seed_case("group_norm_statistics")
                    x = r(4, 16, 300, scale=3.0, shift=2.0).to(device, dt)
                    w, b = r(16).to(device, dt), r(16).to(device, dt)
                    fn = lambda x, w, b: torch.ops.aten.native_group_norm(  # noqa: E731
                        x, w, b, 4, 16, 300, 4, 1e-5)
                    ct.reset()
                    got = compiled(fn)(x, w, b)
                    want = fn(x, w, b)
                    self.assertEqual(ct.fallback_report(), [])
                    if device == "cuda":
                        torch._dynamo.reset()
                        ind = torch.compile(fn, backend="inductor", dynamic=False)(x, w, b)
                        exact = fn(x.double(), w.double(), b.double())
                        for g, i, e, x64 in zip(got, ind, want, exact):
                            self.check_as_inductor(g, i, e, x64, dt)
                        continue
                    for g, e in zip(got, want):
                        self.check_once_rounded(g, e, dt)


if __name__ == "__main__":
    unittest.main()
