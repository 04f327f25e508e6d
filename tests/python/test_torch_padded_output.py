"""padded_output.padded_metas, on graphs traced with fake CUDA tensors (no GPU needed): which
16-bit GEMM results are computed with padded rows and the strides of the view returned; the
GPU run is CallPathTest.test_unaligned_16bit_products_are_views_of_padded_rows_cuda."""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
    from cinn_like.torch.padded_output import padded_metas


def traced(fn, *shapes, dtype=None, device="cuda"):
    """fn traced by make_fx on fake tensors of `shapes` (float16 on CUDA by default)."""
    with FakeTensorMode(allow_non_fake_inputs=True):
        args = [torch.empty(*s, dtype=dtype or torch.float16, device=device) for s in shapes]
        return make_fx(fn, tracing_mode="fake")(*args)


def result(gm, k=0):
    out = next(n for n in gm.graph.nodes if n.op == "output")
    res = out.args[0]
    return res[k] if isinstance(res, (list, tuple)) else res


@needs_torch
class PaddedOutputTest(unittest.TestCase):
    def test_an_unaligned_logits_product_is_a_view_of_padded_rows(self):
        gm = traced(lambda x, w: torch.nn.functional.linear(x, w), (4, 128, 256), (1001, 256))
        p = padded_metas(result(gm))
        self.assertIsNotNone(p)
        self.assertEqual((p.width, p.padded), (1001, 1008))
        self.assertEqual(tuple(p.base.shape), (512, 1008))
        self.assertEqual(tuple(p.view.shape), (4, 128, 1001))
        self.assertEqual(p.view.stride(), (128 * 1008, 1008, 1))
        # bfloat16 likewise; float32 rows of 1001 (4 bytes) are not padded, nor aligned ones.
        self.assertIsNotNone(padded_metas(result(traced(
            lambda x, w: x @ w, (512, 256), (256, 1001), dtype=torch.bfloat16))))
        for fn, shapes, dt in ((lambda x, w: x @ w, ((512, 256), (256, 1001)), torch.float32),
                               (lambda x, w: x @ w, ((512, 256), (256, 1024)), torch.float16)):
            self.assertIsNone(padded_metas(result(traced(fn, *shapes, dtype=dt))), dt)

    def test_a_product_read_again_in_the_partition_or_on_the_cpu_is_not_padded(self):
        # Another reader of the product (here a second result) would need it unpadded: the
        # GEMM twice. A CPU product is not padded (oneDNN takes any rows).
        def twice(x, w):
            y = x @ w
            return y, y.relu()

        gm = traced(twice, (512, 256), (256, 1001))
        self.assertIsNone(padded_metas(result(gm, 0)))
        cpu = traced(lambda x, w: x @ w, (512, 256), (256, 1001), device="cpu")
        self.assertIsNone(padded_metas(result(cpu)))
        # Too small a product (under 2^24 multiply-adds): the slower kernel costs less.
        self.assertIsNone(padded_metas(result(traced(lambda x, w: x @ w, (8, 64), (64, 1001)))))

    def test_readers_count_only_inside_the_partition(self):
        # plan_body asks in the whole graph, with the partition's members: a reader of the
        # result outside the partition does not count, one inside does.
        def doubled(x, w):
            y = (x @ w).view(4, 128, 1001)
            return y, y * 2

        gm = traced(doubled, (512, 256), (256, 1001))
        res = result(gm, 0)
        self.assertIsNone(padded_metas(res))  # its GraphModule: the mul reads it
        mul = next(iter(res.users))
        members = {n for n in gm.graph.nodes if n.op == "call_function" and n is not mul}
        self.assertIsNotNone(padded_metas(res, members.__contains__))


if __name__ == "__main__":
    unittest.main()
