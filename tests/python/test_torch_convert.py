"""The aten -> Program conversion: each node is converted once (the partitioner's conversion is
replayed into the kernel's Program, multi-output ops included)."""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    from cinn_like.torch import registry
    from torch_util import compiled


@needs_torch
class TorchConvertTest(unittest.TestCase):
    def count_calls(self, *overloads):
        """Wraps each overload's converter with a counter; returns the counts dict."""
        counts = {o: 0 for o in overloads}
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


if __name__ == "__main__":
    unittest.main()
