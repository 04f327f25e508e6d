"""torch.compile(model, backend="cinn_like") matches eager on fresh random data: an MLP,
nn.TransformerEncoderLayer (eval), a small CNN, a GPT-2-style block; on CPU, and on CUDA when
PyTorch sees a GPU. Each prints a row: ops compiled vs fell back, kernels (partitions)."""
import copy
import unittest

from torch_util import HAVE_TORCH, needs_torch, report

if HAVE_TORCH:
    import torch
    import torch.nn as nn
    import cinn_like.torch as ct
    from torch_util import GPT2Block, MLP, SmallCNN, SwiGLU, compiled, devices


@needs_torch
class TorchModelsTest(unittest.TestCase):
    def check(self, title, make, shape, rtol=1e-4, atol=1e-5):
        for dev in devices():
            torch.manual_seed(0)
            model = make().to(dev).eval()
            before = ct.stats()
            cmodel = compiled(model)
            for _ in range(2):  # fresh data; the second call runs the cached graph
                x = torch.randn(*shape, device=dev)
                # Grad mode on (parameters require grad): nn.TransformerEncoderLayer's fused
                # inference fast path (_transformer_encoder_layer_fwd) is off, the math is traced.
                ref, got = model(x), cmodel(x)
                ref64 = copy.deepcopy(model).double()(x.double()).float()
                torch.testing.assert_close(got.detach(), ref64.detach(), rtol=rtol, atol=atol)
                torch.testing.assert_close(got.detach(), ref.detach(), rtol=rtol, atol=atol)
            d = report(f"{title} [{dev}]", before, ct.stats())
            self.assertGreater(d["ops_compiled"], 0, f"{title}: nothing ran in cinn_like")

    def test_mlp(self):
        self.check("MLP", MLP, (16, 32))

    def test_transformer_encoder_layer(self):
        self.check("TransformerEncoderLayer", lambda: nn.TransformerEncoderLayer(
            32, 4, dim_feedforward=64, dropout=0.0, batch_first=True), (2, 8, 32), rtol=1e-4, atol=1e-4)

    def test_transformer_encoder_layer_no_grad(self):
        # Under no_grad nn.TransformerEncoderLayer takes its fused fast path (one op, no
        # mapping) unless it is switched off: then the math compiles.
        torch.backends.mha.set_fastpath_enabled(False)
        try:
            torch.manual_seed(0)
            model = nn.TransformerEncoderLayer(32, 4, 64, 0.0, batch_first=True).eval()
            before = ct.stats()
            cmodel = compiled(model)
            with torch.no_grad():
                for _ in range(2):
                    x = torch.randn(2, 8, 32)
                    torch.testing.assert_close(cmodel(x), model(x), rtol=1e-4, atol=1e-4)
            d = report("TransformerEncoderLayer no_grad", before, ct.stats())
            self.assertEqual(d["ops_fallback"], 0, ct.fallback_report())
        finally:
            torch.backends.mha.set_fastpath_enabled(True)

    def test_small_cnn(self):
        self.check("CNN", SmallCNN, (2, 3, 16, 16))

    def test_gpt2_block(self):
        self.check("GPT-2 block", GPT2Block, (2, 8, 32), rtol=1e-4, atol=1e-4)

    def test_swiglu(self):
        self.check("SwiGLU", SwiGLU, (2, 8, 32), rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    unittest.main()
