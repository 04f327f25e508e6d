"""The aten -> Program conversion: each node is converted once (the partitioner's conversion is
replayed into the kernel's Program, multi-output ops included)."""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    from cinn_like.torch import plan_cache, registry
    from torch_util import compiled


@needs_torch
class TorchConvertTest(unittest.TestCase):
    def count_calls(self, *overloads):
        """Wraps each overload's converter with a counter; returns the counts dict. Graph
        plans are off meanwhile: a plan would skip the converters."""
        counts = {o: 0 for o in overloads}
        plan_cache.enabled = False
        self.addCleanup(setattr, plan_cache, "enabled", True)
        for o in overloads:
            fn = registry.CONVERTERS[o]

            def counted(c, n, fn=fn, o=o):
                counts[o] += 1
                return fn(c, n)
            registry.CONVERTERS[o] = counted
            self.addCleanup(registry.CONVERTERS.__setitem__, o, fn)
        return counts

    def test_each_node_is_converted_once(self):
        aten = torch.ops.aten
        counts = self.count_calls(aten.relu.default, aten.native_layer_norm.default,
                                  aten.split.Tensor, aten.split_with_sizes.default)

        def f(x, w, b):
            y = torch.nn.functional.layer_norm(torch.relu(x), (x.shape[-1],), w, b)
            p, q = torch.split(y, [3, 5], dim=-1)  # a multi-output op replayed by position
            return torch.relu(p).sum(-1) + q.mean(-1)
        ct.reset()
        x = torch.randn(6, 8)
        w, b = torch.randn(8), torch.randn(8)
        with torch.no_grad():
            got = compiled(f)(x, w, b)
        torch.testing.assert_close(got, f(x, w, b), rtol=1e-5, atol=1e-5)
        self.assertEqual(ct.stats()["ops_fallback"], 0, ct.fallback_report())
        self.assertEqual(counts[aten.relu.default], 2)  # two relu nodes, once each
        self.assertEqual(counts[aten.native_layer_norm.default], 1)
        self.assertEqual(counts[aten.split.Tensor] + counts[aten.split_with_sizes.default], 1)



@needs_torch
class ProgramOrderTest(unittest.TestCase):
    def test_a_partition_listed_in_another_valid_order_is_the_same_program(self):
        # The trial fusion and the final one list a partition's nodes in different orders with
        # some PyTorch versions; each Program would otherwise be compiled (kernel.py).
        from torch.fx.experimental.proxy_tensor import make_fx  # noqa: PLC0415
        from cinn_like.torch.kernel import build_program  # noqa: PLC0415

        def f(x, w, v):
            a = torch.exp(x).reshape(4, 6)  # two independent branches,
            b = torch.sin(w).t()            # either may be listed first
            return torch.relu(a @ b + v), a.sum(1)
        args = (torch.randn(2, 12), torch.randn(5, 6), torch.randn(5))
        one = make_fx(f, tracing_mode="fake")(*args)
        two = make_fx(f, tracing_mode="fake")(*args)
        ops = [n for n in two.graph.nodes if n.op == "call_function"]
        sin = next(n for n in ops if n.target == torch.ops.aten.sin.default)
        ops[0].prepend(sin)  # sin first: a valid order, another listing
        two.graph.lint()
        order = [str(n.target) for n in two.graph.nodes if n.op == "call_function"]
        self.assertNotEqual(order, [str(n.target) for n in one.graph.nodes
                                    if n.op == "call_function"])
        self.assertEqual(build_program(one)[0].to_json(), build_program(two)[0].to_json())

    def test_every_copy_variant_converts_as_its_view(self):
        # `<view>_copy` ops get their view's converter once every family has registered its
        # own (ops/__init__.py), whatever order the families are imported in and whichever
        # aten ops were used before: each overload of a converted view has a converter under
        # its `_copy` name too (split_copy was missed while the ops were found by listing the
        # lazily loaded aten namespace).
        aten = torch.ops.aten
        checked = 0
        for view in list(registry.CONVERTERS):
            packet = getattr(view, "overloadpacket", None)
            copy = getattr(aten, f"{packet.__name__}_copy", None) if packet else None
            overload = getattr(copy, view._overloadname, None) if copy else None
            if overload is None:
                continue
            with self.subTest(view=str(view)):
                self.assertIn(overload, registry.CONVERTERS)
            checked += 1
        self.assertGreater(checked, 10)  # view, permute, expand, narrow, unbind, ...

    def test_a_partition_compiles_once(self):
        # The trial fusion (backend._partitions_that_compile) and the final one make the same
        # Program, inputs in the same order: the final one finds it compiled (PyTorch 2.11
        # listed them differently and compiled every partition twice).
        from torch_util import MLP, compiled  # noqa: PLC0415
        torch._dynamo.reset()
        ct.reset(clear_cache=True)
        model = MLP().eval()
        x = torch.randn(8, 32)
        with torch.no_grad():
            torch.testing.assert_close(compiled(model)(x), model(x), rtol=1e-5, atol=1e-5)
        self.assertEqual(ct.stats()["partitions"], 1)
        self.assertEqual(ct.stats()["compiles"], 1)
        # Cut by a fallback (PyTorch's partitioner, then the trial fusion of each part): each
        # part still compiles once.
        old = ct.set_options(deny=["tanh"])
        self.addCleanup(ct.set_options, **old)
        torch._dynamo.reset()
        ct.reset(clear_cache=True)

        def cut(x, w):
            y = torch.tanh(torch.relu(x @ w) * 2.0 + 1.0)
            return torch.exp(y).sum(-1) + y.mean(-1)
        x, w = torch.randn(8, 32), torch.randn(32, 16)
        with torch.no_grad():
            torch.testing.assert_close(compiled(cut)(x, w), cut(x, w), rtol=1e-5, atol=1e-5)
        self.assertEqual(ct.stats()["partitions"], 2)
        self.assertEqual(ct.stats()["compiles"], 2)


if __name__ == "__main__":
    unittest.main()
