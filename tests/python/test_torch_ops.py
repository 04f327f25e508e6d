"""Each mapped aten op through torch.compile(backend="cinn_like") against eager on fresh random
data, and each must have run in cinn_like (absent from the fallback report)."""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import torch.nn.functional as F
    import cinn_like.torch as ct
    from torch_util import compiled, seed_case

    def r(*s):
        return torch.randn(*s)

    def pos(*s):
        return torch.rand(*s) + 0.5

    def ints(*s):
        return torch.randint(-20, 20, s)

    # (name, fn, inputs maker, aten op names that must not fall back)
    CASES = [
        ("add_scalar_alpha", lambda x, y: torch.add(x, y, alpha=2.5) + 3, lambda: (r(3, 5), r(5)), ["add"]),
        ("sub_rsub", lambda x: 2.0 - x - 1, lambda: (r(4, 3),), ["sub"]),
        ("div_modes", lambda x, y: (x / y, torch.div(x, y, rounding_mode="floor"),
                                    torch.div(x, y, rounding_mode="trunc")),
         lambda: (r(6, 7), pos(6, 7)), ["div"]),
        ("int_div_floor", lambda x, y: torch.div(x, y, rounding_mode="floor"),
         lambda: (ints(5, 4), ints(5, 4).abs() + 1), ["div"]),
        ("int_true_div", lambda x: x / 4, lambda: (ints(3, 3),), ["div"]),
        ("pow", lambda x, y: (x ** y, x ** 2, torch.pow(x, 0.5)), lambda: (pos(4, 4), r(4, 4)), ["pow"]),
        ("unary", lambda x: (x.neg().abs().sqrt().log().exp(), x.sigmoid(), x.tanh(), x.sin().cos(),
                             x.relu(), F.silu(x), torch.full((1,), 0.75).reciprocal() * x, torch.rsqrt(x.abs() + 1)),
         lambda: (r(5, 6),), ["neg", "abs", "sqrt", "log", "exp", "sigmoid", "tanh", "sin", "cos",
                               "relu", "silu", "rsqrt"]),
        ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), lambda: (r(8, 9),), ["gelu"]),
        ("max_min_cmp_where", lambda x, y: (torch.maximum(x, y), torch.minimum(x, y),
                                            torch.where(x < y, x, y * 2), x >= 0.1, x != y),
         lambda: (r(4, 5), r(4, 5)), ["maximum", "minimum", "lt", "where", "ge", "ne"]),
        ("clamp", lambda x: (x.clamp(-0.5, 0.7), x.clamp(min=0.1), F.hardtanh(x)), lambda: (r(9, 3),),
         ["clamp"]),
        ("cast", lambda x: (x.to(torch.float64) * 2, x.to(torch.int32), x.to(torch.float16)),
         lambda: (r(4, 6) * 10,), ["_to_copy"]),
        ("reduce", lambda x: (x.sum(1), x.mean((0, 2), keepdim=True), x.amax(-1), x.amin(0),
                              x.sum(), x.argmax(1), x.argmin(-1, keepdim=True)),
         lambda: (r(3, 4, 5),), ["sum", "mean", "amax", "amin", "argmax", "argmin"]),
        ("any", lambda x: ((x > 1).any(1), (x > 1).any(), (x > 0.5).any(-1, keepdim=True)),
         lambda: (r(5, 6),), ["any"]),
        # log_softmax reaches the backend decomposed (backend._decompositions): its parts.
        ("softmax", lambda x: (torch.softmax(x, 1), torch.log_softmax(x, -1)), lambda: (r(3, 7, 5),),
         ["_softmax", "amax", "sub", "exp", "sum", "log"]),
        ("layer_norm", lambda x, w, b: F.layer_norm(x, (6,), w, b, 1e-5), lambda: (r(2, 3, 6), r(6), r(6)),
         ["native_layer_norm"]),
        ("matmul", lambda a, b, c: (a @ b, torch.bmm(c, c.transpose(1, 2)), F.linear(a, b.t(), b[0])),
         lambda: (r(5, 7), r(7, 7), r(2, 3, 4)), ["mm", "bmm", "addmm"]),
        ("shapes", lambda x: (x.permute(2, 0, 1) * 1, x.reshape(4, 15) + 1, x.unsqueeze(1).expand(4, 2, 3, 5) * 2,
                              x[:, 1:, ::2] + 0, x[1] * 3, torch.cat([x, x * 2], 1), x.squeeze(0) + 1),
         lambda: (r(4, 3, 5),), ["permute", "view", "expand", "slice", "select", "cat"]),
        ("index_pad", lambda x, i: (x.index_select(1, i), F.pad(x, (1, 2, 0, 1), value=0.5)),
         lambda: (r(3, 6), torch.randint(0, 6, (4,))), ["index_select", "constant_pad_nd"]),
        ("full_arange", lambda x: (x + torch.full((3, 4), 2.0), x * torch.arange(4.0), torch.ones_like(x) - x),
         lambda: (r(3, 4),), ["full", "arange"]),
        ("conv_pool", lambda x, w, v: (F.conv2d(x, w, stride=2, padding=1, dilation=1),
                                       F.conv2d(x, v, groups=2, padding=(0, 1)),
                                       F.avg_pool2d(x, 3, 2, 1), F.max_pool2d(x, 2)),
         lambda: (r(2, 4, 9, 8), r(6, 4, 3, 3), r(4, 2, 2, 3)),
         ["convolution", "avg_pool2d", "max_pool2d_with_indices"]),
        ("batch_norm_eval", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, False, 0.1, 1e-5),
         lambda: (r(2, 3, 4, 4), r(3), pos(3), r(3), r(3)), ["_native_batch_norm_legit_no_training"]),
    ]


@needs_torch
class TorchOpsTest(unittest.TestCase):
    def test_every_mapped_op_matches_eager_and_compiles(self):
        for name, fn, make, ops in CASES:
            with self.subTest(name):
                ct.reset()
                seed_case(name)
                args = make()
                with torch.no_grad():
                    got, ref = compiled(fn)(*args), fn(*args)
                got = got if isinstance(got, tuple) else (got,)
                ref = ref if isinstance(ref, tuple) else (ref,)
                for g, e in zip(got, ref):
                    self.assertEqual(g.dtype, e.dtype)
                    tol = dict(rtol=1e-3, atol=1e-3) if e.dtype == torch.float16 else {}
                    torch.testing.assert_close(g, e, **tol)
                fell = {op.split(".")[0] for op, _ in ct.fallback_report()}
                self.assertFalse(fell & set(ops), f"{name}: fell back {ct.fallback_report()}")
                self.assertGreater(ct.stats()["ops_compiled"], 0)

    def test_bfloat16_batch_norm_training_updates_running_stats(self):
        # PyTorch's CPU kernel returns bfloat16 running statistics where its meta says float32:
        # whatever runs it, the compiled graph takes them and matches eager.
        x = torch.randn(4, 3, 5, 5, dtype=torch.bfloat16)
        w, b = torch.randn(3, dtype=torch.bfloat16), torch.randn(3, dtype=torch.bfloat16)
        stats = [torch.randn(3, dtype=torch.bfloat16), torch.rand(3, dtype=torch.bfloat16) + 0.5]
        fn = lambda x, m, v: F.batch_norm(x, m, v, w, b, True, 0.1, 1e-5).relu()  # noqa: E731
        ct.reset()
        mine = [t.clone() for t in stats]
        got = compiled(fn)(x, *mine)
        want = fn(x, *stats)
        torch.testing.assert_close(got, want, rtol=1.6e-2, atol=1e-2)
        for g, e in zip(mine, stats):
            torch.testing.assert_close(g, e, rtol=1.6e-2, atol=1e-2)
        self.assertGreater(ct.stats()["ops_compiled"], 0)


@needs_torch
class TorchStridesTest(unittest.TestCase):
    """Views handed to a compiled graph (transposes, expands, chunks, empty tensors) and outputs
    the graph gives other strides: values and strides as eager's."""

    def check(self, fn, *args):
        ct.reset()
        with torch.no_grad():
            got, ref = compiled(fn)(*args), fn(*args)
        got = got if isinstance(got, tuple) else (got,)
        ref = ref if isinstance(ref, tuple) else (ref,)
        for g, e in zip(got, ref):
            torch.testing.assert_close(g, e)
            if e.numel():  # an empty tensor's strides mean nothing (PyTorch: contiguous)
                self.assertEqual(g.stride(), e.stride(), f"output strides of {tuple(e.shape)}")
        self.assertGreater(ct.stats()["ops_compiled"], 0)
        self.assertEqual(ct.fallback_report(), [])

    def test_view_inputs(self):
        x = torch.randn(6, 8)
        a, b = x.chunk(2, dim=1)
        self.check(lambda p, q, t, e: (p * q + 1, t.sin(), e + 1), a, b, x.t(),
                   torch.randn(8).expand(3, 8))

    def test_output_strides(self):
        x = torch.randn(5, 7)
        self.check(lambda t: ((t * 2).t(), (t + 1).permute(1, 0).contiguous()), x)
        y = torch.randn(2, 3, 4, 5)
        self.check(lambda t: (t.relu() * 3).permute(0, 2, 3, 1), y)

    def test_empty_tensors(self):
        # PyTorch gives empty tensors strides that are not row-major (torch.empty(3, 0)).
        self.check(lambda t, u: (t * 2 + 1, u.exp().transpose(0, 2)), torch.randn(3, 0),
                   torch.randn(0, 3, 3))


@needs_torch
class TorchRoundOnceTest(unittest.TestCase):
    """16-bit addmm-like ops with alpha/beta and eval batch norm compute in float32 and round
    once, as PyTorch's CUDA kernels do: within one unit in the last place of float64."""

    def test_scaled_addmm_and_eval_batch_norm(self):
        for dtype in (torch.float16, torch.bfloat16):
            bias, a, b = (torch.randn(*s).to(dtype) for s in ((6, 7), (6, 9), (9, 7)))
            x = torch.randn(3, 4, 5).to(dtype)
            m, v = torch.randn(4).to(dtype), (torch.rand(4) + 0.5).to(dtype)
            w, s = torch.randn(4).to(dtype), torch.randn(4).to(dtype)
            fn = lambda bias, a, b, x, m, v, w, s: (  # noqa: E731
                torch.addmm(bias, a, b, beta=0.6, alpha=0.2),
                torch.addmv(bias[:, 0], a, b[:, 0], beta=1.5, alpha=-0.5),
                F.batch_norm(x, m, v, w, s, False, 0.1, 1e-3))
            ct.reset()
            args = (bias, a, b, x, m, v, w, s)
            got = compiled(fn)(*args)
            ref = fn(*(t.double() for t in args))
            ulp = 2.0 ** (-8 if dtype == torch.bfloat16 else -11)
            for g, r in zip(got, ref):
                self.assertEqual(g.dtype, dtype)
                err, bound = (g.double() - r).abs(), ulp * r.abs() + 1e-6
                self.assertTrue(bool((err <= bound).all()),
                                f"{dtype}: {float((err - bound).max()):.3g} beyond one ulp")
            self.assertEqual(ct.fallback_report(), [])


@needs_torch
class TorchEmptyAndCopyOpsTest(unittest.TestCase):
    """Ops whose result has no element, the empty family (uninitialised memory the graph then
    fills) and the `<view>_copy` ops compile: values, shapes and dtypes as eager's."""

    def check(self, fn, *args, ops=()):
        ct.reset()
        with torch.no_grad():
            got, ref = compiled(fn)(*args), fn(*args)
        for g, e in zip(got, ref):
            self.assertEqual((g.shape, g.dtype), (e.shape, e.dtype))
            torch.testing.assert_close(g, e)
        self.assertEqual(ct.fallback_report(), [])
        self.assertGreater(ct.stats()["ops_compiled"], 0)

    def test_empty_results(self):
        x = torch.randn(4, 3)
        self.check(lambda t: (t[:, 2:2] * 2, torch.arange(3, 3, dtype=torch.float32) + 1,
                              t.repeat(0, 2) + 1, torch.cat([t[:0], t[:0]]) * 3, t + 1), x)

    def test_split_with_empty_parts(self):
        x = torch.randn(5, 4)
        self.check(lambda t: tuple(p * 2 for p in torch.split(t, [0, 3, 0, 2])), x)

    def test_empty_family_then_written(self):
        x = torch.randn(3, 4)
        # torch.empty_like / new_empty outputs are written whole before use.
        self.check(lambda t: (torch.empty_like(t).copy_(t) + 1,
                              t.new_empty((2, 3)).fill_(0.5) * t[:2, :3]), x)

    def test_pad_with_negative_amounts_crops(self):
        x = torch.randn(3, 6, 7)
        self.check(lambda t: (F.pad(t, (-1, 2), value=0.5), F.pad(t, (1, -2, -1, 3)),
                              F.pad(t, (-2, -2, 0, 0, -1, 1)) * 2, F.pad(t, (-3, -4)) + 1), x)

    def test_copy_variants_of_views(self):
        x = torch.randn(4, 5, 6)
        self.check(lambda t: (torch.permute_copy(t, (2, 0, 1)) + 0, torch.view_copy(t, (20, 6)) * 2,
                              torch.narrow_copy(t, 1, -3, 2) + 1, torch.t_copy(t[0]) * 3,
                              *[u * 2 for u in torch.unbind_copy(t, 1)]), x)


if __name__ == "__main__":
    unittest.main()
