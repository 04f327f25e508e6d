"""The converters the model zoo needs (indexing, views, cumsum, bitwise on bool, erf, softmax
with half_to_float, convolution and max-pool backward) through torch.compile(backend=
"cinn_like") against eager on fresh random data: each named aten op must have run in cinn_like
(absent from the fallback report)."""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import torch.nn.functional as F
    import cinn_like.torch as ct
    from torch_util import check_refusals, compiled, seed_case

    def r(*s):
        return torch.randn(*s)

    def idx(high, *s):
        return torch.randint(0, high, s)

    aten = torch.ops.aten

    # (name, fn, inputs maker, aten op names that must not fall back[, reference fn])
    FORWARD = [
        ("embedding", lambda w, i: F.embedding(i, w) * 2, lambda: (r(20, 8), idx(20, 3, 5)),
         ["embedding"]),
        ("gather", lambda x, i, j: (torch.gather(x, 1, i), torch.gather(x, 0, j)),
         lambda: (r(4, 6), idx(6, 4, 3), idx(4, 2, 6)), ["gather"]),
        ("index_leading_broadcast", lambda x, i, j: x[i, j] + 1,
         lambda: (r(5, 6, 3), idx(5, 4, 1), idx(6, 1, 3)), ["index"]),
        ("index_after_a_slice", lambda x, i: x[:, i] * 2, lambda: (r(3, 7, 2), idx(7, 2, 4)),
         ["index"]),
        ("index_apart_negative", lambda x, i, j: x[i, :, j - 4] - 1,
         lambda: (r(4, 3, 5), idx(4, 6), idx(5, 6)), ["index"]),
        ("index_put_accumulate", lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True),
         lambda: (r(6, 4), idx(6, 9), r(9, 4)), ["index_put"]),
        ("index_put_two_dims", lambda x, i, j, v: torch.index_put(x, (i, j), v, accumulate=True),
         lambda: (r(5, 4, 3), idx(5, 7), idx(4, 7), r(7, 3)), ["index_put"]),
        ("scatter_value", lambda x, i, j: (x.scatter(1, i, -1.5), x.scatter(1, j, 2.0)),
         lambda: (r(4, 7), idx(7, 4, 1), idx(7, 4, 3)), ["scatter"]),
        ("cumsum", lambda x, m: (x.cumsum(1), (m > 0).cumsum(-1), x.cumsum(0)),
         lambda: (r(3, 6), r(2, 9)), ["cumsum"]),
        ("bitwise_bool", lambda a, b: ((a > 0) & (b > 0), (a > 0) | (b < 0), (a > 1) ^ (b > 0)),
         lambda: (r(4, 5), r(4, 5)), ["bitwise_and", "bitwise_or", "bitwise_xor"]),
        ("erf", lambda x: torch.erf(x) * x, lambda: (r(5, 7),), ["erf"]),
        ("softmax_half_to_float",
         lambda x: (aten._softmax(x, -1, True), aten._log_softmax(x, 1, True)),
         lambda: (r(3, 8).half(),), ["_softmax", "_log_softmax"],
         lambda x: (torch.softmax(x.float(), -1), torch.log_softmax(x.float(), 1))),
        ("as_strided_views",
         lambda x: (x.as_strided((2, 12), (12, 1)) * 1, x.as_strided((4, 6), (1, 4)) * 1,
                    x.as_strided((3, 2, 4), (0, 12, 1)) * 1, x.as_strided((2, 2), (5, 2), 3) * 1),
         lambda: (r(24),), ["as_strided"]),
        ("as_strided_of_a_permuted_tensor",
         lambda x: (x.permute(1, 0) * 2).as_strided((4, 6), (6, 1)) + 1,
         lambda: (r(4, 6),), ["as_strided"]),
        ("as_strided_scatter", lambda x, s: torch.as_strided_scatter(x * 1, s, (4, 3), (1, 4)),
         lambda: (r(12), r(4, 3)), ["as_strided_scatter"]),
        ("slice_scatter", lambda x, s, t: (torch.slice_scatter(x, s, 1, 1, 3),
                                           torch.slice_scatter(x, t, 0, -2)),
         lambda: (r(4, 5), r(4, 2), r(2, 5)), ["slice_scatter"]),
        ("copy", lambda x, s: aten.copy(x, s) + x, lambda: (r(3, 4), r(4)), ["copy"]),
    ]

    class Conv(torch.nn.Module):
        def __init__(self, cin, cout, k, stride, padding, dilation, groups, bias):
            super().__init__()
            self.conv = torch.nn.Conv2d(cin, cout, k, stride, padding, dilation, groups, bias)

        def forward(self, x):
            return torch.tanh(self.conv(x))

    # (name, module, input shape, aten op names that must not fall back)
    BACKWARD = [
        ("conv_stride_pad", Conv(3, 4, 3, 2, 1, 1, 1, True), (2, 3, 9, 8),
         ["convolution_backward"]),
        ("conv_groups_dilation", Conv(4, 6, (3, 2), 1, (2, 0), 2, 2, False), (1, 4, 8, 7),
         ["convolution_backward"]),
        ("conv_depthwise_stride", Conv(4, 4, 5, 2, 2, 1, 4, True), (2, 4, 9, 9),
         ["convolution_backward"]),
        ("conv_patchify", Conv(3, 8, 4, 4, 0, 1, 1, True), (2, 3, 10, 9),
         ["convolution_backward"]),
        ("max_pool", torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.MaxPool2d(3, 2, 1)),
         (2, 2, 9, 8), ["max_pool2d_with_indices", "max_pool2d_with_indices_backward"]),
    ]


@needs_torch
class TorchModelOpsTest(unittest.TestCase):
    def check_fell_back(self, name, ops):
        fell = {op.split(".")[0] for op, _ in ct.fallback_report()}
        self.assertFalse(fell & set(ops), f"{name}: fell back {ct.fallback_report()}")
        self.assertGreater(ct.stats()["ops_compiled"], 0)

    def test_forward_ops_match_eager_and_compile(self):
        for case in FORWARD:
            name, fn, make, ops = case[:4]
            ref_fn = case[4] if len(case) > 4 else fn
            with self.subTest(name):
                ct.reset()
                seed_case(name)
                args = make()
                with torch.no_grad():
                    got, want = compiled(fn)(*args), ref_fn(*args)
                got = got if isinstance(got, tuple) else (got,)
                want = want if isinstance(want, tuple) else (want,)
                for g, e in zip(got, want):
                    self.assertEqual(g.dtype, e.dtype)
                    self.assertEqual(g.shape, e.shape)
                    tol = dict(rtol=2e-3, atol=2e-3) if name.startswith("softmax") else {}
                    torch.testing.assert_close(g, e, **tol)
                self.check_fell_back(name, ops)

    def test_what_the_program_cannot_express_falls_back_with_its_reason(self):
        cases = [
            ("index_put", lambda x, v: torch.index_put(x * 1, (x > 0,), v),
             (torch.tensor([[1.0, -1.0], [-2.0, 3.0]]), r(2)), "by a boolean mask of more than one"),
            ("as_strided", lambda x: x[4:].as_strided((2, 2), (1, 2), 0) * 2, (r(10),),
             "reaches outside its input's 6 elements"),
        ]
        check_refusals(self, cases)

    def test_embedding_backward_accumulates_repeated_ids(self):
        ct.reset()
        w = r(12, 5).requires_grad_()
        w_ref = w.detach().clone().requires_grad_()
        ids = torch.tensor([[1, 3, 1, 7], [3, 3, 0, 11]])
        g = r(2, 4, 5)
        (compiled(lambda w, i: F.embedding(i, w) * 3)(w, ids) * g).sum().backward()
        (F.embedding(ids, w_ref) * 3 * g).sum().backward()
        torch.testing.assert_close(w.grad, w_ref.grad, rtol=1e-5, atol=1e-5)
        self.check_fell_back("embedding backward", ["embedding", "index_put"])

    def test_embedding_dense_backward_as_aten_hands_it_over(self):
        # AOTAutograd decomposes it (to index_put); a graph that keeps it, as make_fx traces it.
        from torch.fx.experimental.proxy_tensor import make_fx  # noqa: PLC0415
        ct.reset()

        def fn(g, i):
            return (aten.embedding_dense_backward(g, i, 9, -1, False),
                    aten.embedding_dense_backward(g, i, 9, 2, False))
        g, i = r(3, 4, 6), idx(9, 3, 4)
        gm = make_fx(fn, tracing_mode="fake")(g, i)
        got = ct.compile_graph(gm, [g, i])([g, i])
        for a, b in zip(got, fn(g, i)):
            torch.testing.assert_close(a, b)
        self.check_fell_back("embedding_dense_backward", ["embedding_dense_backward"])

    def test_backward_ops_match_eager_gradients(self):
        for name, module, shape, ops in BACKWARD:
            with self.subTest(name):
                ct.reset()
                seed_case(name)
                x = r(*shape)
                xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
                mine = compiled(module)
                out_e, out_c = module(xe), mine(xc)
                torch.testing.assert_close(out_c, out_e, rtol=1e-4, atol=1e-5)
                weights = torch.randn_like(out_e)
                grads_e = torch.autograd.grad((out_e * weights).sum(),
                                              [xe] + list(module.parameters()))
                grads_c = torch.autograd.grad((out_c * weights).sum(),
                                              [xc] + list(module.parameters()))
                for ge, gc in zip(grads_e, grads_c):
                    torch.testing.assert_close(gc, ge, rtol=1e-4, atol=1e-5)
                self.check_fell_back(name, ops)


if __name__ == "__main__":
    unittest.main()
