"""Convolution and pooling beyond the plain 2-d case through torch.compile(backend="cinn_like")
against eager on fresh random data, the input and parameter gradients too: 1-d and 3-d and
transposed convolutions (groups, dilation, output_padding, negative effective padding), max
and average pooling with ceil_mode, dilation, divisor_override and unbatched inputs, 1-d and 3-d
pooling and the pooling backward ops (the adaptive pools' included); training batch norm of
16-bit floats and without affine parameters, eval batch norm's saved statistics; grid_sample
(bilinear and nearest, every padding mode); dist. Each listed aten op must have run in cinn_like; what the
mapping cannot express falls back with its reason."""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import torch.nn.functional as F
    import cinn_like.torch as ct
    from torch_util import check_refusals, compiled, seed_case

    def r(*s, dtype=torch.float32):
        return torch.randn(*s, dtype=dtype)

    CONV = ["convolution", "convolution_backward"]
    MAX2 = ["max_pool2d_with_indices", "max_pool2d_with_indices_backward"]
    AVG2 = ["avg_pool2d", "avg_pool2d_backward"]

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
        # Max pooling: the values, PyTorch's indices and the gradient.
        ("max_pool2d_ceil", lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                   return_indices=True),
         lambda: (r(2, 3, 8, 9),), MAX2),
        ("max_pool2d_dilation", lambda x: F.max_pool2d(x, (3, 2), (2, 1), 1, dilation=(2, 3),
                                                       return_indices=True),
         lambda: (r(2, 3, 10, 9),), MAX2),
        ("max_pool2d_unbatched_ceil_dilation", lambda x: F.max_pool2d(
            x, 2, 3, 1, dilation=2, ceil_mode=True, return_indices=True),
         lambda: (r(3, 10, 8),), MAX2),
        ("max_pool1d", lambda x, y: (F.max_pool1d(x, 3, 2, 1, ceil_mode=True),
                                     F.max_pool1d(y, 2, 1, dilation=2)),
         lambda: (r(2, 3, 10), r(3, 10)), MAX2),
        ("max_pool3d", lambda x: F.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0),
                                              dilation=(1, 1, 2), ceil_mode=True,
                                              return_indices=True),
         lambda: (r(2, 2, 5, 7, 8),), ["max_pool3d_with_indices",
                                       "max_pool3d_with_indices_backward"]),
        # Average pooling: PyTorch's divisors under ceil_mode, count_include_pad and
        # divisor_override; the backward.
        ("avg_pool2d_ceil", lambda x: (F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
                                       F.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                    count_include_pad=False)),
         lambda: (r(2, 3, 8, 9),), AVG2),
        ("avg_pool2d_divisor_unbatched", lambda x, y: (
            F.avg_pool2d(x, (2, 3), (1, 2), 1, divisor_override=4), F.avg_pool2d(y, 2)),
         lambda: (r(2, 3, 8, 9), r(3, 8, 9)), AVG2),
        ("avg_pool2d_exclude_pad", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
         lambda: (r(2, 3, 8, 9),), AVG2),
        ("avg_pool1d", lambda x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True,
                                              count_include_pad=False),
         lambda: (r(2, 3, 10),), AVG2),
        ("avg_pool3d", lambda x, y: (F.avg_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0),
                                                  ceil_mode=True),
                                     F.avg_pool3d(y, 2, divisor_override=3)),
         lambda: (r(2, 2, 5, 7, 8), r(2, 5, 7, 8)), ["avg_pool3d", "avg_pool3d_backward"]),
        # The adaptive pools' backward ops.
        ("adaptive_avg_pool_backward", lambda x, y: (F.adaptive_avg_pool2d(x, (3, 4)),
                                                     F.adaptive_avg_pool3d(y, (2, 3, 4))),
         lambda: (r(2, 3, 8, 9), r(3, 5, 7, 9)),
         ["_adaptive_avg_pool2d_backward", "_adaptive_avg_pool3d_backward"]),
        ("adaptive_max_pool_backward", lambda x, y: (F.adaptive_max_pool2d(x, (3, 4)),
                                                     F.adaptive_max_pool3d(y, (2, 3, 2))),
         lambda: (r(2, 3, 8, 9), r(3, 5, 7, 5)),
         ["adaptive_max_pool2d_backward", "adaptive_max_pool3d_backward"]),
    ]


@needs_torch
class TorchPoolConvTest(unittest.TestCase):
    def check(self, name, fn, args, ops, rtol=1e-4, atol=1e-5, grad=True):
        ct.reset()
        seed_case(name)
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

    def test_bfloat16_pools_match_eager_exactly(self):
        # The window sums in float32, divided, rounded once; the maximum is exact.
        x = r(2, 3, 8, 9, dtype=torch.bfloat16)
        self.check("bf16_pools", lambda x: (F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
                                            F.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True)),
                   (x,), AVG2 + MAX2, rtol=0, atol=0, grad=False)

    def test_16bit_batch_norm_training_statistics_in_float32(self):
        # PyTorch computes a 16-bit batch norm's statistics in float32; the running statistics
        # (16-bit or float32) are updated in place, with or without the affine parameters.
        aten = torch.ops.aten
        for dt in (torch.bfloat16, torch.float16):
            for sdt, affine in ((dt, True), (torch.float32, True), (dt, False)):
                with self.subTest(dtype=dt, stats=sdt, affine=affine):
                    x = r(4, 3, 5, 5).to(dt)
                    wb = (r(3).to(sdt), r(3).to(sdt)) if affine else (None, None)
                    stats = [r(3).to(sdt), (torch.rand(3) + 0.5).to(sdt)]
                    fn = lambda x, m, v: F.batch_norm(x, m, v, *wb, True, 0.1, 1e-5)  # noqa: E731
                    ct.reset()
                    mine = [t.clone() for t in stats]
                    torch.testing.assert_close(compiled(fn)(x, *mine), fn(x, *stats),
                                               rtol=1.6e-2, atol=1e-2)
                    for g, e in zip(mine, stats):
                        torch.testing.assert_close(g, e, rtol=1.6e-2, atol=1e-2)
                    self.assertEqual(ct.fallback_report(), [])
        # Eval mode: the saved statistics have no element; the functional form returns the
        # running statistics unchanged.
        x, w, m, v = r(3, 2, 4), r(2), r(2), torch.rand(2) + 0.5
        for fn in (lambda x, w, m, v: aten.native_batch_norm(x, w, None, m, v, False, 0.1, 1e-5),
                   lambda x, w, m, v: aten._native_batch_norm_legit_functional(
                       x, w, w, m, v, False, 0.1, 1e-5)):
            ct.reset()
            with torch.no_grad():
                for g, e in zip(compiled(fn)(x, w, m, v), fn(x, w, m, v)):
                    torch.testing.assert_close(g, e)
            self.assertEqual(ct.fallback_report(), [])

    def test_grid_sample_matches_eager(self):
        # Every interpolation (bilinear, nearest) and padding mode, both align_corners, grid
        # points well outside [-1, 1]; bfloat16 as PyTorch computes it, in bfloat16.
        for mode in ("bilinear", "nearest"):
            for pad in ("zeros", "border", "reflection"):
                for align in (False, True):
                    for dt in (torch.float32, torch.bfloat16):
                        with self.subTest(mode=mode, pad=pad, align=align, dtype=dt):
                            x, g = r(2, 3, 5, 7).to(dt), (torch.rand(2, 4, 6, 2) * 3 - 1.5).to(dt)
                            fn = lambda x, g: F.grid_sample(  # noqa: E731
                                x, g, mode=mode, padding_mode=pad, align_corners=align)
                            ct.reset()
                            torch.testing.assert_close(compiled(fn)(x, g), fn(x, g))
                            self.assertEqual(ct.fallback_report(), [])

    def test_dist_matches_eager(self):
        # Every kind of p; the other operand broadcast; bfloat16 summed in float32.
        for p in (2, 4, 1, 0, 0.5, float("inf"), float("-inf")):
            for dt in (torch.float32, torch.bfloat16):
                for shape in ((5, 5, 5), (5,), (5, 1, 5)):
                    with self.subTest(p=p, dtype=dt, other=shape):
                        a, b = r(5, 5, 5).to(dt), r(*shape).to(dt)
                        if p == 0:  # some exact zeros in the difference
                            a = torch.where(torch.rand(5, 5, 5) < 0.5, a, a.new_zeros(()))
                            b = torch.where(torch.rand(*shape) < 0.5, b, b.new_zeros(()))
                        fn = lambda a, b: torch.dist(a, b, p) * 1  # noqa: E731
                        ct.reset()
                        tol = {} if dt == torch.float32 else dict(rtol=1.6e-2, atol=1e-2)
                        torch.testing.assert_close(compiled(fn)(a, b), fn(a, b), **tol)
                        self.assertEqual(ct.fallback_report(), [])

    def test_what_the_mapping_cannot_express_falls_back_with_its_reason(self):
        cases = [
            ("max_pool2d_with_indices", lambda x: F.max_pool2d(x * 2, 3, 2, 1, ceil_mode=True),
             (torch.randint(-9, 9, (2, 3, 6, 6)),), "pooling of a torch.int64 tensor"),
            ("grid_sampler_2d", lambda x, g: F.grid_sample(x, g, mode="bicubic",
                                                           align_corners=False),
             (r(1, 2, 5, 5), torch.rand(1, 3, 3, 2) * 2 - 1), "bicubic interpolation"),
        ]
        check_refusals(self, cases)


if __name__ == "__main__":
    unittest.main()
