"""Training through cinn_like: AOTAutograd compiles the forward and the backward graphs; 20 SGD
steps of the MLP and the CNN track eager's losses step by step, first-step gradients match."""
import copy
import unittest

from torch_util import HAVE_TORCH, needs_torch, report

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    from torch_util import GPT2Block, MLP, SmallCNN, compiled, devices


@needs_torch
class TorchTrainingTest(unittest.TestCase):
    def train(self, title, make, x_shape, classes=10, steps=20, rtol=1e-3):
        for dev in devices():
            torch.manual_seed(0)
            eager = make().to(dev)
            mine = copy.deepcopy(eager)
            cmodel = compiled(mine)
            opt_e = torch.optim.SGD(eager.parameters(), lr=0.05)
            opt_c = torch.optim.SGD(mine.parameters(), lr=0.05)
            before = ct.stats()
            gen = torch.Generator().manual_seed(1)
            for step in range(steps):
                x = torch.randn(*x_shape, generator=gen).to(dev)
                y = torch.randint(0, classes, (x_shape[0],), generator=gen).to(dev)
                losses = []
                for model, opt in ((eager, opt_e), (cmodel, opt_c)):
                    opt.zero_grad()
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    loss.backward()
                    losses.append(loss.item())
                if step == 0:
                    for (name, pe), pc in zip(eager.named_parameters(), mine.parameters()):
                        torch.testing.assert_close(pc.grad, pe.grad, rtol=1e-4, atol=1e-5,
                                                   msg=lambda m: f"{title} grad {name}: {m}")
                opt_e.step()
                opt_c.step()
                self.assertAlmostEqual(losses[1], losses[0], delta=rtol * max(1.0, abs(losses[0])),
                                       msg=f"{title} [{dev}] step {step}")
            d = report(f"{title} training [{dev}]", before, ct.stats())
            self.assertGreater(d["ops_compiled"], 0)

    def test_mlp_sgd(self):
        self.train("MLP", MLP, (16, 32))

    def test_gpt2_block_sgd(self):
        class Head(torch.nn.Module):  # the block, then a classifier over the mean token
            def __init__(self):
                super().__init__()
                self.block, self.fc = GPT2Block(), torch.nn.Linear(32, 10)

            def forward(self, x):
                return self.fc(self.block(x).mean(1))
        self.train("GPT-2 block", Head, (4, 8, 32), steps=10)

    def test_cnn_sgd(self):
        self.train("CNN", SmallCNN, (4, 3, 16, 16))


if __name__ == "__main__":
    unittest.main()
