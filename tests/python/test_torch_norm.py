"""linalg_vector_norm as PyTorch up to 2.14 hands it to a backend (2.15 decomposes it first):
each order over each dims choice against eager, on fresh random data, in cinn_like."""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    from torch.fx.experimental.proxy_tensor import make_fx

    aten = torch.ops.aten


@needs_torch
class VectorNormTest(unittest.TestCase):
    def run_norm(self, x, *args):
        """The op traced as it is (no decomposition) and compiled by the backend itself."""
        gm = make_fx(lambda t: aten.linalg_vector_norm.default(t, *args), tracing_mode="fake")(x)
        ct.reset()
        got = ct.compile_graph(gm, [x])([x])
        got = got[0] if isinstance(got, (list, tuple)) else got
        self.assertEqual(ct.fallback_report(), [])
        self.assertEqual(ct.stats()["ops_compiled"], 1)
        return got

    def test_orders_and_dims(self):
        x = torch.randn(4, 5, 3)
        x[0, 0, 0] = 0.0  # a zero for ord 0's count
        for ord_ in (2.0, 1.0, float("inf"), -float("inf"), 0.0, 3.5, -1.5):
            for dims, keepdim in ((None, False), ([1], True), ([0, 2], False), ([-1], False)):
                with self.subTest(ord=ord_, dims=dims):
                    got = self.run_norm(x, ord_, dims, keepdim)
                    want = torch.linalg.vector_norm(x, ord_, dims, keepdim)
                    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)

    def test_bfloat16_accumulates_in_float32(self):
        x = torch.randn(16, 300).to(torch.bfloat16)
        got = self.run_norm(x, 2.0, [1])
        want = torch.linalg.vector_norm(x.double(), 2.0, 1)
        self.assertEqual(got.dtype, torch.bfloat16)
        # one rounding of the float32 result: within half a unit of bfloat16 (2^-9 relative)
        torch.testing.assert_close(got.double(), want, rtol=2.0 ** -8, atol=0)


if __name__ == "__main__":
    unittest.main()
