"""The convolution's gradients as Program ops (conv2d_backward_data, conv2d_backward_filter;
issue 49): on x86 against PyTorch's own gradients (torch.nn.grad) on fresh random data, over
strides, paddings, dilations and groups; on CUDA through torch.compile, where each is one cuDNN
backward call, against eager's gradients."""
import unittest

import numpy as np

import cinn_like
from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    from torch_util import compiled

# (x shape, weight shape, stride, padding, dilation, groups)
CASES = [((2, 3, 9, 7), (4, 3, 3, 3), 2, 1, 1, 1),
         ((2, 6, 8, 8), (6, 2, 3, 3), 1, 1, 1, 3),
         ((1, 4, 7, 7), (4, 1, 5, 5), 1, 2, 1, 4),   # depthwise, 5x5
         ((2, 4, 10, 9), (8, 4, 3, 3), 1, 2, 2, 1),  # dilated
         ((3, 2, 6, 6), (5, 2, 1, 1), 2, 0, 1, 1)]   # 1x1, strided


def out_size(n, k, s, p, d):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


@needs_torch
class ConvBackwardOpsTest(unittest.TestCase):
    def test_x86_matches_torch_nn_grad(self):
        rng = np.random.default_rng()
        for xs, ws, s, p, d, g in CASES:
            ys = (xs[0], ws[0], out_size(xs[2], ws[2], s, p, d), out_size(xs[3], ws[3], s, p, d))
            geometry = {"strides": [s, s], "paddings": [p, p], "dilations": [d, d], "groups": g}
            x = rng.standard_normal(xs).astype(np.float32)
            w = rng.standard_normal(ws).astype(np.float32)
            dy = rng.standard_normal(ys).astype(np.float32)
            tx, tw, tdy = (torch.from_numpy(a).double() for a in (x, w, dy))
            want_dx = torch.nn.grad.conv2d_input(xs, tw, tdy, s, p, d, g).numpy()
            want_dw = torch.nn.grad.conv2d_weight(tx, ws, tdy, s, p, d, g).numpy()

            b = cinn_like.ProgramBuilder()
            bdy, bw = b.input("dy", "float32", list(ys)), b.input("w", "float32", list(ws))
            b.output(b.op("conv2d_backward_data", [bdy, bw], dict(geometry, input_hw=list(xs[2:]))))
            dx = np.full(xs, np.nan, np.float32)
            cinn_like.compile(b, "x86", "dgrad")(dy, w, dx)
            np.testing.assert_allclose(dx, want_dx, rtol=1e-4, atol=1e-4, err_msg=str(xs))

            b = cinn_like.ProgramBuilder()
            bx, bdy = b.input("x", "float32", list(xs)), b.input("dy", "float32", list(ys))
            b.output(b.op("conv2d_backward_filter", [bx, bdy],
                          dict(geometry, kernel_hw=list(ws[2:]))))
            dw = np.full(ws, np.nan, np.float32)
            cinn_like.compile(b, "x86", "wgrad")(x, dy, dw)
            np.testing.assert_allclose(dw, want_dw, rtol=1e-4, atol=1e-3, err_msg=str(xs))

    def test_shape_errors_name_the_op(self):
        b = cinn_like.ProgramBuilder()
        dy, w = b.input("dy", "float32", [2, 4, 3, 3]), b.input("w", "float32", [4, 3, 3, 3])
        b.output(b.op("conv2d_backward_data", [dy, w], {"input_hw": [9, 9], "strides": [1, 1]}))
        with self.assertRaisesRegex(cinn_like.CinnLikeError,
                                    r"op conv2d_backward_data: grad_out float32\[2, 4, 3, 3\] is "
                                    r"not the output of a 9x9 input"):
            cinn_like.compile(b, "x86", "bad")

    @unittest.skipUnless(HAVE_TORCH and torch.cuda.is_available(), "needs a CUDA device")
    def test_cuda_training_gradients_match_eager(self):
        for xs, ws, s, p, d, g in CASES:
            conv = torch.nn.Conv2d(xs[1], ws[0], ws[2], s, p, d, g).cuda()
            x = torch.randn(xs, device="cuda", requires_grad=True)
            ref = conv(x)
            gy = torch.randn_like(ref)
            want = torch.autograd.grad(ref, [x, conv.weight, conv.bias], gy)
            ct.reset()
            got = torch.autograd.grad(compiled(conv)(x), [x, conv.weight, conv.bias], gy)
            self.assertEqual(ct.stats()["ops_fallback"], 0, ct.fallback_report())
            for a, b in zip(got, want):
                torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    unittest.main()
