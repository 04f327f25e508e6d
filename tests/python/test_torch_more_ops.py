"""The last aten ops of PyTorch's OpInfo samples mapped onto cinn_like ops (issue 12), through
torch.compile(backend="cinn_like") against eager on fresh random data: each named aten op must
reach its converter (some ops decompose before the backend sees them, so absence from the
fallback report is not enough) and run in cinn_like; backward ops compare input gradients
under a random cotangent; refused cases fall back with their reason."""
import contextlib
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import torch.nn.functional as F
    import cinn_like.torch as ct
    from cinn_like.torch import plan_cache, registry
    from torch_util import compiled

    aten = torch.ops.aten

    @contextlib.contextmanager
    def converted(ops):
        """Records the targets of the nodes that reach the converters of `ops` (graph plans
        off: a plan would skip the converters)."""
        seen = set()
        saved = {op: registry.CONVERTERS[op] for op in ops}
        was, plan_cache.enabled = plan_cache.enabled, False

        def recording(fn):
            def conv(c, n):
                seen.add(n.target)
                return fn(c, n)
            return conv
        for op, fn in saved.items():
            registry.CONVERTERS[op] = recording(fn)
        try:
            yield seen
        finally:
            registry.CONVERTERS.update(saved)
            plan_cache.enabled = was


def _as_tuple(v):
    return v if isinstance(v, (tuple, list)) else (v,)


def _backward_has(fn, x, op):
    """Whether AOTAutograd's backward graph of fn at x (with cinn_like's decompositions) calls op."""
    from functorch.compile import make_boxed_func  # noqa: PLC0415
    from torch._dynamo.backends.common import aot_autograd  # noqa: PLC0415
    from cinn_like.torch.backend import _decompositions  # noqa: PLC0415
    seen = []

    def backward(gm, _):
        seen.extend(n.target for n in gm.graph.nodes)
        return make_boxed_func(gm.forward)
    torch._dynamo.reset()
    f = torch.compile(fn, backend=aot_autograd(fw_compiler=lambda gm, _: make_boxed_func(gm.forward),
                                              bw_compiler=backward, decompositions=_decompositions()))
    f(x).sum().backward()
    x.grad = None
    torch._dynamo.reset()
    return op in seen


def _check(test, name, fn, args, ops, grad=False, **tol):
    """fn compiled against eager on args: outputs (and with grad, the gradients of the
    floating-point inputs that require them under a random cotangent); each op of `ops` reached
    its converter and none fell back."""
    ct.reset()
    with converted(ops) as seen, torch.set_grad_enabled(grad):
        got = _as_tuple(compiled(fn)(*args))
        ref = _as_tuple(fn(*args))
        test.assertEqual(len(got), len(ref), name)
        for g, e in zip(got, ref):
            test.assertEqual(g.dtype, e.dtype, name)
            test.assertEqual(g.shape, e.shape, name)
            if e.is_floating_point():
                torch.testing.assert_close(g, e, equal_nan=True, msg=name, **tol)
            else:
                test.assertTrue(torch.equal(g, e), f"{name}: {g} != {e}")
        if grad:
            leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
            pairs = [(g, e) for g, e in zip(got, ref) if e.requires_grad]
            cots = [torch.randn_like(e) for _, e in pairs]
            dg = torch.autograd.grad([g for g, _ in pairs], leaves, cots, allow_unused=True)
            de = torch.autograd.grad([e for _, e in pairs], leaves, cots, allow_unused=True)
            for a, b in zip(dg, de):
                torch.testing.assert_close(a, b, equal_nan=True, msg=f"{name} gradient", **tol)
    test.assertEqual(seen, set(ops), f"{name}: reached {seen}, not all of {ops}")
    fell = {op for op, _ in ct.fallback_report()}
    test.assertFalse(fell & {str(o).split("aten.")[-1] for o in ops},
                     f"{name}: fell back {ct.fallback_report()}")


def _fell_back(op_name):
    return [r for op, r in ct.fallback_report() if op == op_name]


@needs_torch
class MaskedScatterTest(unittest.TestCase):
    def test_forward_and_backward(self):
        ops = [aten.masked_scatter.default, aten.masked_scatter_backward.default]
        for xs, ms in (((4, 5), (4, 5)), ((4, 5), (5,)), ((3, 1, 4), (1, 2, 4)), ((6,), (6,))):
            with self.subTest(x=xs, mask=ms):
                x = torch.randn(*xs, requires_grad=True)
                mask = torch.rand(*ms) > 0.4
                out = torch.broadcast_shapes(xs, ms)
                src = torch.randn(out.numel() + 3, requires_grad=True)
                _check(self, f"masked_scatter {xs} {ms}", lambda x, m, s: x.masked_scatter(m, s),
                       [x, mask, src], ops, grad=True, rtol=0, atol=0)

    def test_dtypes(self):
        mask = torch.rand(3, 7) > 0.5
        for dt in (torch.bfloat16, torch.int32, torch.bool):
            x = (torch.randn(3, 7) * 5).to(dt)
            src = (torch.randn(2, 11) * 5).to(dt)
            _check(self, f"masked_scatter {dt}", lambda x, m, s: x.masked_scatter(m, s),
                   [x, mask, src], [aten.masked_scatter.default], rtol=0, atol=0)


@needs_torch
class BoolReductionTest(unittest.TestCase):
    def test_max_min_of_bool(self):
        b = torch.rand(4, 6) > 0.6
        fn = lambda b: (*torch.max(b, 1), *torch.min(b, 0, keepdim=True), b.amax(1), b.amin(0),  # noqa: E731
                        b.max(), b.min())
        _check(self, "bool max/min", fn, [b], [aten.max.dim, aten.min.dim, aten.amax.default,
                                                aten.amin.default, aten.max.default,
                                                aten.min.default])

    def test_cumprod_backward(self):
        """cumprod's backward (with a zero in the input) matches eager. Its decomposition takes
        max.dim of a bool tensor where the input is zero in PyTorch 2.15, not in 2.11: that op
        is required only where the traced backward has it (bool max/min above tests it alone)."""
        x = torch.randn(3, 6)
        x[1, 2] = 0
        x.requires_grad_(True)
        ops = [aten.max.dim] if _backward_has(lambda x: torch.cumprod(x, 1), x, aten.max.dim) else []
        _check(self, "cumprod backward", lambda x: torch.cumprod(x, 1), [x], ops,
               grad=True, rtol=1e-5, atol=1e-5)


@needs_torch
class ConvertElementTypeTest(unittest.TestCase):
    def test_cast(self):
        from torch.fx.experimental.proxy_tensor import make_fx  # noqa: PLC0415
        from cinn_like.torch.backend import compile_graph  # noqa: PLC0415
        prims = torch.ops.prims
        fn = lambda x: (prims.convert_element_type.default(x, torch.bfloat16),  # noqa: E731
                        prims.convert_element_type.default(x * 3, torch.int32),
                        prims.convert_element_type.default(x, torch.float32))
        x = torch.randn(5, 7)
        gm = make_fx(fn)(x)
        ct.reset()
        with converted([prims.convert_element_type.default]) as seen:
            got = compile_graph(gm, [x])([x])
        for g, e in zip(got, fn(x)):
            self.assertEqual(g.dtype, e.dtype)
            self.assertTrue(torch.equal(g, e))
        self.assertEqual(seen, {prims.convert_element_type.default})
        self.assertEqual(ct.fallback_report(), [])


@needs_torch
class SegmentReduceTest(unittest.TestCase):
    def test_lengths_and_offsets(self):
        """Every reduction with and without initial, empty segments, ties (max/min backward
        splits a positive gradient among equal elements) and a zero (prod backward's product of
        the others); forward and backward."""
        ops = [aten.segment_reduce.default, aten._segment_reduce_backward.default]
        d1 = torch.randn(7, 3)
        d1[2, 1] = d1[3, 1]
        d1[5, 0] = 0
        d2 = torch.randn(3, 6, 2)
        cases = [
            ("lengths", d1, {"lengths": torch.tensor([0, 2, 3, 2])}),
            ("lengths axis 1", d2, {"lengths": torch.tensor([[1, 5, 0], [2, 2, 2], [0, 0, 6]]),
                                    "axis": 1}),
            ("offsets", d1, {"offsets": torch.tensor([0, 2, 2, 7])}),
            ("offsets axis 1", d2, {"offsets": torch.tensor([[0, 1, 1, 6], [0, 3, 5, 6],
                                                             [2, 2, 4, 5]]), "axis": 1}),
        ]
        for name, data, kw in cases:
            for reduce in ("sum", "mean", "max", "min", "prod"):
                for initial in (None, 1.5):
                    with self.subTest(case=name, reduce=reduce, initial=initial):
                        x = data.clone().requires_grad_(True)
                        _check(self, f"segment_reduce {name} {reduce} {initial}",
                               lambda x: torch.segment_reduce(x, reduce, initial=initial, **kw),
                               [x], ops, grad=True, rtol=1e-5, atol=1e-5)


@needs_torch
class EmbeddingBagTest(unittest.TestCase):
    def test_modes(self):
        """sum, mean and max over offsets (empty bags, include_last_offset), fixed bags of a 2-d
        index, padding_idx and per_sample_weights."""
        ops = [aten._embedding_bag_forward_only.default]
        w = torch.randn(12, 5)
        idx = torch.randint(0, 12, (10,))
        idx[4] = 3
        for mode in ("sum", "mean", "max"):
            for offsets, last in ((torch.tensor([0, 0, 4, 7]), False),
                                  (torch.tensor([0, 3, 3, 6, 10]), True)):
                for pad in (None, 3):
                    with self.subTest(mode=mode, offsets=offsets.tolist(), pad=pad):
                        _check(self, f"embedding_bag {mode}",
                               lambda w, i, o: F.embedding_bag(i, w, o, mode=mode, padding_idx=pad,
                                                               include_last_offset=last),
                               [w, idx, offsets], ops, rtol=1e-5, atol=1e-5)
            _check(self, f"embedding_bag {mode} 2-d", lambda w, i: F.embedding_bag(i, w, mode=mode),
                   [w, torch.randint(0, 12, (4, 3))], ops, rtol=1e-5, atol=1e-5)
        _check(self, "embedding_bag per_sample_weights",
               lambda w, i, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
               [w, idx, torch.tensor([0, 5, 6]), torch.randn(10)], ops, rtol=1e-5, atol=1e-5)

    def test_training_falls_back_with_reason(self):
        """The training form's offset2bag/bag_size/max_indices feed its backward: kernel-specific,
        so it stays in PyTorch, saying why."""
        w = torch.randn(12, 5, requires_grad=True)
        ct.reset()
        out = compiled(lambda w, i, o: F.embedding_bag(i, w, o))(w, torch.randint(0, 12, (6,)),
                                                                  torch.tensor([0, 2]))
        out.sum().backward()
        self.assertTrue(any("kernel-specific" in r for r in _fell_back("_embedding_bag.default")),
                        ct.fallback_report())


@needs_torch
class BilinearTest(unittest.TestCase):
    def test_bilinear(self):
        """nn.functional.bilinear reaches the backend as _trilinear; its backward too."""
        for s1, s2 in (((3,), (4,)), ((6, 3), (6, 4)), ((2, 5, 3), (2, 5, 4)), ((0, 3), (0, 4))):
            with self.subTest(shape=s1):
                args = [torch.randn(*s1), torch.randn(*s2), torch.randn(7, 3, 4), torch.randn(7)]
                args = [a.requires_grad_(True) for a in args]
                _check(self, f"bilinear {s1}", F.bilinear, args, [aten._trilinear.default],
                       grad=True, rtol=1e-5, atol=1e-5)


@needs_torch
class DistanceTest(unittest.TestCase):
    def test_cdist(self):
        """Every order p, the direct and the matrix-product forms, with their backward."""
        ops = [aten._cdist_forward.default, aten._cdist_backward.default]
        for p in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")):
            for mode in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                         "donot_use_mm_for_euclid_dist"):
                with self.subTest(p=p, mode=mode):
                    a = torch.randn(2, 4, 3, requires_grad=True)
                    b = torch.randn(2, 5, 3, requires_grad=True)
                    # torch.cdist computes p = 2 by matrix products itself (no _cdist_forward)
                    mm = p == 2 and mode == "use_mm_for_euclid_dist"
                    _check(self, f"cdist p={p} {mode}",
                           lambda a, b: torch.cdist(a, b, p=p, compute_mode=mode), [a, b],
                           [] if mm else ops, grad=True, rtol=1e-4, atol=1e-5)

    def test_cdist_forward_by_matrix_products(self):
        """_cdist_forward itself with compute_mode 1, or 0 past 25 rows: PyTorch's matrix-product
        form (traced without torch.cdist, which would compute it before the backend)."""
        from torch.fx.experimental.proxy_tensor import make_fx  # noqa: PLC0415
        from cinn_like.torch.backend import compile_graph  # noqa: PLC0415
        for (r1, r2), mode in (((4, 5), 1), ((30, 7), 0), ((30, 7), 2)):
            fn = lambda a, b: aten._cdist_forward.default(a, b, 2.0, mode)  # noqa: E731
            a, b = torch.randn(2, r1, 3), torch.randn(2, r2, 3)
            ct.reset()
            with converted([aten._cdist_forward.default]) as seen:
                got = compile_graph(make_fx(fn)(a, b), [a, b])([a, b])
            got = got[0] if isinstance(got, (list, tuple)) else got
            torch.testing.assert_close(got, fn(a, b), rtol=1e-5, atol=1e-5)
            self.assertEqual(seen, {aten._cdist_forward.default})
            self.assertEqual(ct.fallback_report(), [])

    def test_pdist(self):
        ops = [aten._pdist_forward.default, aten._pdist_backward.default]
        for p in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")):
            with self.subTest(p=p):
                x = torch.randn(7, 3, requires_grad=True)
                _check(self, f"pdist p={p}", lambda x: F.pdist(x, p=p), [x], ops, grad=True,
                       rtol=1e-4, atol=1e-5)
        x = torch.randn(1, 4, requires_grad=True)  # no pair: an empty result, a zero gradient
        _check(self, "pdist of one row", F.pdist, [x], [aten._pdist_backward.default], grad=True)


if __name__ == "__main__":
    unittest.main()
