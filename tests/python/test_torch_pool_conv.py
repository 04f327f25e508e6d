"""Convolution and pooling beyond the plain 2-d case through torch.compile(backend="cinn_like")
against eager on fresh random data, the input and parameter gradients too: 1-d and 3-d and
transposed convolutions (groups, dilation, output_padding, negative effective padding), max
and average pooling with ceil_mode, dilation, divisor_override and unbatched inputs, 3-d
pooling and the pooling backward ops. Each listed aten op must have run in cinn_like; what the
mapping cannot express falls back with its reason."""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import torch.nn.functional as F
    import cinn_like.torch as ct
    from torch_util import compiled

    def r(*s, dtype=torch.float32):
        return torch.randn(*s, dtype=dtype)

    CONV = ["convolution", "convolution_backward"]

    # (name, fn, inputs maker, aten op names that must not fall back); every input gets a
    # gradient.
    CASES = [
        ("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
         lambda: (r(2, 4, 11), r(6, 2, 3), r(6)), CONV),
        ("conv3d", lambda x, w, b: F.conv3d(x, w, b, stride=(2, 1, 2), padding=(1, 0, 1),
                                            dilation=(1, 2, 1), groups=2),
         lambda: (r(2, 4, 7, 8, 6), r(6, 2, 3, 2, 3), r(6)), CONV),
        ("conv_transpose1d", lambda x, w: F.conv_transpose1d(x, w, stride=3, output_padding=2),
         lambda: (r(2, 4, 5), r(4, 3, 3)), CONV),
        ("conv_transpose2d", lambda x, w, b: F.conv_transpose2d(
            x, w, b, stride=(2, 3), padding=(1, 2), output_padding=(1, 0), groups=2,
            dilation=(2, 1)), lambda: (r(2, 4, 5, 6), r(4, 3, 3, 4), r(6)), CONV),
        ("conv_transpose2d_cropped", lambda x, w: F.conv_transpose2d(x, w, padding=3),
         lambda: (r(1, 2, 8, 8), r(2, 3, 3, 3)), CONV),
        ("conv_transpose3d", lambda x, w, b: F.conv_transpose3d(
            x, w, b, stride=2, padding=1, output_padding=1, groups=2),
         lambda: (r(1, 4, 3, 4, 3), r(4, 2, 3, 3, 2), r(4)), CONV),
    ]


@needs_torch
class TorchPoolConvTest(unittest.TestCase):
    def check(self, name, fn, args, ops, rtol=1e-4, atol=1e-5, grad=True):
        ct.reset()
        torch.manual_seed(hash(name) % 1000)
        floating = [a.is_floating_point() and grad for a in args]
        mine = [a.clone().requires_grad_(f) for a, f in zip(args, floating)]
        ref = [a.clone().requires_grad_(f) for a, f in zip(args, floating)]
        got, want = compiled(fn)(*mine), fn(*ref)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for g, e in zip(got, want):
            self.assertEqual(g.dtype, e.dtype)
            torch.testing.assert_close(g, e, rtol=rtol, atol=atol)
        if any(floating):
            outs = [(g, e) for g, e in zip(got, want) if e.is_floating_point()]
            weights = [torch.randn_like(e) for _, e in outs]
            take = lambda ts: [t for t, f in zip(ts, floating) if f]  # noqa: E731
            g_mine = torch.autograd.grad(sum((g * w).sum() for (g, _), w in zip(outs, weights)),
                                         take(mine))
            g_ref = torch.autograd.grad(sum((e * w).sum() for (_, e), w in zip(outs, weights)),
                                        take(ref))
            for a, b in zip(g_mine, g_ref):
                torch.testing.assert_close(a, b, rtol=rtol, atol=atol)
        fell = {op.split(".")[0] for op, _ in ct.fallback_report()}
        self.assertFalse(fell & set(ops), f"{name}: fell back {ct.fallback_report()}")
        self.assertGreater(ct.stats()["ops_compiled"], 0)

    def test_ops_and_gradients_match_eager(self):
        for name, fn, make, ops in CASES:
            with self.subTest(name):
                self.check(name, fn, make(), ops)

    def test_bfloat16_convolutions_round_once(self):
        # conv2d sums 16-bit inputs in float32 and rounds once, as PyTorch's CPU kernels do.
        x, w = r(2, 4, 9, dtype=torch.bfloat16), r(4, 3, 3, dtype=torch.bfloat16)
        self.check("bf16_conv_transpose1d",
                   lambda x, w: F.conv_transpose1d(x, w, stride=2, padding=1), (x, w), CONV,
                   rtol=1.6e-2, atol=1e-2, grad=False)


if __name__ == "__main__":
    unittest.main()
