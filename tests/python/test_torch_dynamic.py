"""Dynamic shapes: torch.compile(..., dynamic=True) and the default automatic dynamic compile a
model once for every batch size and sequence length. An MLP, a GPT-2-style block (forward and
training) and a small CNN (its image size fixed: see test_small_cnn) over ten sizes (1, 2,
odd sizes, powers of two, up to 512 tokens) compile at most one static and one symbolic Program
per graph (forward, backward), run nothing in PyTorch, and match eager at every size; on CPU,
and on CUDA when PyTorch sees a GPU.

Dynamo specialises sizes 0 and 1 into graphs of their own unless
torch.fx.experimental._config.backed_size_oblivious is set, and its duck shaping gives sizes
equal at the first trace one symbol (b = t = 1 then traces a graph of its own): Dynamo's
policies, the same for every backend. The tests set backed_size_oblivious and turn duck shaping
off (use_duck_shape), as a user who serves batch size 1 and short sequences would.
"""
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    from torch_util import GPT2Block, MLP, SmallCNN, devices

# Batch sizes and sequence lengths.
SEQUENCES = [(2, 3), (1, 1), (3, 17), (5, 64), (8, 33), (1, 512), (13, 2), (2, 256), (21, 7),
             (4, 128)]
BATCHES = [1, 2, 3, 5, 8, 13, 21, 34, 64, 127]


@needs_torch
class TorchDynamicShapesTest(unittest.TestCase):
    def setUp(self):
        config = torch.fx.experimental._config
        self._saved = (config.backed_size_oblivious, config.use_duck_shape)
        config.backed_size_oblivious, config.use_duck_shape = True, False
        torch._dynamo.reset()
        ct.reset()

    def tearDown(self):
        config = torch.fx.experimental._config
        config.backed_size_oblivious, config.use_duck_shape = self._saved
        torch._dynamo.reset()

    def run_sizes(self, make, shapes, dynamic, train, device="cpu"):
        """Compiles make() with `dynamic` (None: automatic dynamic) and checks every shape
        against eager on `device`; returns the backend's statistics."""
        torch.manual_seed(0)
        model = make().to(device)
        cmodel = torch.compile(model, backend="cinn_like", dynamic=dynamic)
        for shape in shapes:
            with self.subTest(shape=shape, dynamic=dynamic, train=train):
                x = torch.randn(*shape, device=device, requires_grad=train)
                if train:
                    got = cmodel(x)
                    got.square().mean().backward()
                    grad, x.grad = x.grad.clone(), None
                    want = model(x)
                    want.square().mean().backward()
                    torch.testing.assert_close(grad, x.grad, rtol=1e-4, atol=1e-5)
                else:
                    with torch.no_grad():
                        got, want = cmodel(x), model(x)
                torch.testing.assert_close(got.detach(), want.detach(), rtol=1e-4, atol=1e-5)
        return ct.stats()

    def check_once(self, make, shapes, train=False, modes=(True, None)):
        for device, dynamic in [(d, dyn) for d in devices() for dyn in modes]:
            torch._dynamo.reset()
            ct.reset()
            stats = self.run_sizes(make, shapes, dynamic, train, device)
            # Programs compiled: forward (and backward), one static and one symbolic. (Dynamo
            # may trace one more graph, batch 1's for the CNN, whose Program is a cache hit.)
            programs = 2 * (2 if train else 1)
            note = (device, dynamic, stats)
            self.assertLessEqual(stats["compiles"], programs, note)
            self.assertEqual(stats["ops_fallback"], 0, (note, ct.fallback_report()))
            self.assertEqual(stats.get("symbolic_specializations", 0), 0)

    def test_mlp(self):
        self.check_once(MLP, [(b, 32) for b in BATCHES])

    def test_mlp_training(self):
        self.check_once(MLP, [(b, 32) for b in BATCHES], train=True)

    def test_gpt2_block(self):
        self.check_once(GPT2Block, [(b, t, 32) for b, t in SEQUENCES])

    def test_gpt2_block_training(self):
        self.check_once(GPT2Block, [(b, t, 32) for b, t in SEQUENCES], train=True)

    def test_small_cnn(self):
        # Convolution, batch norm (eval), pooling and the flatten into a linear layer over a
        # symbolic batch. Under dynamic=True the image's height and width are symbolic too;
        # the sizes after pooling are floor divisions of them, which no Program can hold, so
        # those two symbols are fixed to the trace's values (symbolic.specialize_non_polynomial)
        # and the batch stays symbolic.
        self.check_once(lambda: SmallCNN().eval(), [(b, 3, 16, 16) for b in BATCHES])

    def test_image_sizes_are_fixed_and_the_batch_stays_symbolic(self):
        # dynamic=True over two image sizes: one compile per image size (Dynamo's guard on the
        # fixed height and width traces the second), each serving every batch size, nothing in
        # PyTorch.
        shapes = [(b, 3, 16, 16) for b in (1, 5, 8)] + [(b, 3, 8, 32) for b in (2, 7, 13)]
        stats = self.run_sizes(lambda: SmallCNN().eval(), shapes, True, False)
        self.assertLessEqual(stats["compiles"], 2, stats)
        self.assertEqual(stats["ops_fallback"], 0, (stats, ct.fallback_report()))
        # Height and width fixed in each graph Dynamo traced (PyTorch 2.11 traces batch 1's
        # graph apart too: a cache hit).
        self.assertEqual(stats.get("symbols_specialized"), 2 * stats["graphs"], stats)

    def test_a_converter_that_asks_for_a_size_is_refused_not_specialised(self):
        # Training batch norm updates its running variance with n / (n - 1) over a symbolic n:
        # its converter would need that value, so the op stays in PyTorch with that reason,
        # nothing is specialised (one symbolic graph serves every batch), and results match.
        stats = self.run_sizes(SmallCNN, [(b, 3, 16, 16) for b in BATCHES], None, False)
        # The static first graph, the symbolic one, and one for batch 1: a guard of training
        # batch norm's decomposition (Dynamo's, not cinn_like's).
        self.assertLessEqual(stats["graphs"], 3, stats)
        self.assertEqual(stats.get("symbolic_specializations", 0), 0)
        reasons = [why for op, why in ct.fallback_report() if "batch_norm" in op]
        self.assertTrue(reasons and "symbolic shape: converting" in reasons[0] and
                        "needs to know whether" in reasons[0], ct.fallback_report())
        self.assertGreater(stats["ops_compiled"], 0)

    def test_a_variance_over_a_symbolic_batch(self):
        # Over symbolic extents the population variance (correction 0) is a mean and compiles;
        # a correction needs the count, so var_mean falls back naming the extents (it raised
        # a TypeError inside its converter before).
        class Var(torch.nn.Module):
            def __init__(self, correction):
                super().__init__()
                self.correction = correction

            def forward(self, x):
                v, m = torch.var_mean(x, dim=0, correction=self.correction)
                return v + m

        shapes = [(b, 6) for b in (3, 5, 9)]
        stats = self.run_sizes(lambda: Var(0), shapes, True, False)
        self.assertEqual(stats["ops_fallback"], 0, ct.fallback_report())
        torch._dynamo.reset()
        ct.reset()
        self.run_sizes(lambda: Var(1), shapes, True, False)
        reasons = [why for op, why in ct.fallback_report() if "var_mean" in op]
        self.assertTrue(reasons and "symbolic extents" in reasons[0], ct.fallback_report())

if __name__ == "__main__":
    unittest.main()
