"""torchvision's resnet18 (random weights) in eval mode, compiled with backend="cinn_like",
matches eager on CUDA. Runs where torchvision and a GPU are present (the GPU machine); CI has
neither, and says so in the skip message."""
import copy
import unittest

from torch_util import HAVE_TORCH, report

try:
    import torchvision  # noqa: F401
    HAVE_TORCHVISION = True
except ImportError:
    HAVE_TORCHVISION = False

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    from torch_util import compiled


@unittest.skipUnless(HAVE_TORCH and HAVE_TORCHVISION and torch.cuda.is_available(),
                     "needs PyTorch, torchvision and a CUDA GPU (run on the GPU machine)")
class ResNet18Test(unittest.TestCase):
    def test_resnet18_eval_matches_eager(self):
        torch.manual_seed(0)
        model = torchvision.models.resnet18(weights=None).cuda().eval()
        before = ct.stats()
        cmodel = compiled(model)
        with torch.no_grad():
            for _ in range(2):  # fresh data; the second call runs the cached graph
                x = torch.randn(4, 3, 224, 224, device="cuda")
                ref = model(x)
                ref64 = copy.deepcopy(model).double()(x.double()).float()
                got = cmodel(x)
                # float32 through 20 convolutions: compare with a float64 run.
                torch.testing.assert_close(got, ref64, rtol=1e-3, atol=1e-3)
                torch.testing.assert_close(got, ref, rtol=1e-3, atol=1e-3)
        d = report("resnet18 [cuda]", before, ct.stats())
        self.assertGreater(d["ops_compiled"], 0, "resnet18: nothing ran in cinn_like")


if __name__ == "__main__":
    unittest.main()
