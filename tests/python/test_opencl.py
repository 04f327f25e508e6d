"""The OpenCL target from Python: cinn_like.compile(..., "opencl") called on numpy arrays, and
the torch backend's cpu_target option running graphs of CPU tensors through OpenCL; each result
against float64 numpy or eager PyTorch on fresh random data. Skipped where this build has no
OpenCL or no OpenCL device is present."""
import unittest

import numpy as np

import cinn_like
from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    from cinn_like.torch import cache


def _opencl_available():
    b = cinn_like.ProgramBuilder()
    b.output(b.op("relu", [b.input("x", "float32", [4])]))
    try:
        cinn_like.compile(b, "opencl", "probe")
        return True, ""
    except cinn_like.CinnLikeError as e:
        return False, str(e)


AVAILABLE, WHY = _opencl_available()
needs_opencl = unittest.skipUnless(AVAILABLE, f"no OpenCL here: {WHY}")


@needs_opencl
class OpenCLApiTest(unittest.TestCase):
    def test_softmax_of_a_symbolic_batch_on_numpy(self):
        b = cinn_like.ProgramBuilder()
        x = b.input("x", "float32", ["n", 300])
        b.output(b.op("softmax", [b.op("mul", [x, x])], {"axis": -1}))
        m = cinn_like.compile(b, "opencl", "f")
        rng = np.random.default_rng()
        for n in (1, 7, 64):
            xs = rng.standard_normal((n, 300)).astype(np.float32)
            out = np.full((n, 300), np.nan, np.float32)
            m(xs, out)
            v = xs.astype(np.float64) ** 2
            ref = np.exp(v - v.max(-1, keepdims=True))
            ref /= ref.sum(-1, keepdims=True)
            np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-7)

    def test_a_bad_target_string_names_the_choices(self):
        b = cinn_like.ProgramBuilder()
        b.output(b.op("relu", [b.input("x", "float32", [4])]))
        with self.assertRaisesRegex(cinn_like.CinnLikeError, "expected -device=cpu or -device=gpu"):
            cinn_like.compile(b, "opencl -device=fpga", "g")


@needs_torch
@needs_opencl
class OpenCLTorchTest(unittest.TestCase):
    def setUp(self):
        ct.reset()
        self.addCleanup(ct.reset)

    def test_cpu_target_option_runs_cpu_graphs_on_opencl(self):
        def f(x, w, g, b):
            return torch.nn.functional.layer_norm(torch.relu(x @ w) + x, (64,), g, b) * 2.0

        torch.manual_seed(7)
        x, w, g, b = torch.randn(33, 64), torch.randn(64, 64), torch.randn(64), torch.randn(64)
        torch._dynamo.reset()
        before = set(cache._modules)
        compiled = torch.compile(f, backend="cinn_like", dynamic=False,
                                 options={"cpu_target": "opencl"})
        torch.testing.assert_close(compiled(x, w, g, b), f(x, w, g, b), rtol=1e-4, atol=1e-4)
        self.assertEqual(ct.fallback_report(), [])
        targets = {key[1] for key in set(cache._modules) - before}
        self.assertEqual(targets, {"opencl"})  # everything this graph compiled, for OpenCL

    def test_a_bad_cpu_target_is_refused(self):
        for bad in ("cuda", "opencl -device=fpga", "opencl -device=gpu -device=cpu"):
            with self.assertRaisesRegex(ValueError, "expected 'x86', 'opencl'"):
                ct.set_options(cpu_target=bad)


if __name__ == "__main__":
    unittest.main()
