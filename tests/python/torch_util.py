"""Shared by the torch.compile tests: skip cleanly without PyTorch, the models, a report table."""
import unittest
import zlib

try:
    import torch
    import torch.nn as nn
    import cinn_like.torch  # noqa: F401 (registers backend="cinn_like")
    HAVE_TORCH = True
except ImportError as e:  # only PyTorch's absence skips; a broken cinn_like.torch fails
    if "torch" != getattr(e, "name", None):
        raise
    HAVE_TORCH = False

needs_torch = unittest.skipUnless(HAVE_TORCH, "PyTorch is not importable: install it "
                                  "(scripts/setup.sh) to run the torch.compile tests")

if HAVE_TORCH:
    class MLP(nn.Module):
        def __init__(self, d_in=32, hidden=64, d_out=10):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.GELU(), nn.Linear(hidden, hidden),
                                     nn.ReLU(), nn.Linear(hidden, d_out))

        def forward(self, x):
            return self.net(x)

    class SmallCNN(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(2)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=2, bias=False)
            self.fc = nn.Linear(8 * 4 * 4, classes)

        def forward(self, x):
            x = self.pool(torch.relu(self.bn(self.conv(x))))
            x = torch.relu(self.conv2(x))
            x = nn.functional.avg_pool2d(x, 2)
            return self.fc(x.flatten(1))

    class GPT2Block(nn.Module):
        """Pre-norm block from torch ops: causal attention by matmul/softmax, tanh-GELU MLP."""
        def __init__(self, d=32, heads=4):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (d // self.heads) ** 0.5)
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            att = torch.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.out(nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class SwiGLU(nn.Module):
        """LLaMA's feed-forward block: w2(silu(w1 x) * w3 x), no biases."""
        def __init__(self, d=32, hidden=88):
            super().__init__()
            self.w1 = nn.Linear(d, hidden, bias=False)
            self.w3 = nn.Linear(d, hidden, bias=False)
            self.w2 = nn.Linear(hidden, d, bias=False)

        def forward(self, x):
            return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))

    # Eager references in full float32 on CUDA too (no TF32 in cuBLAS/cuDNN).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    def compiled(model):
        torch._dynamo.reset()
        return torch.compile(model, backend="cinn_like", dynamic=False)

    def check_refusals(test, cases):
        """Each (op, fn, args, reason): fn compiled matches eager, and op fell back with a
        reason containing `reason`."""
        for op, fn, args, reason in cases:
            with test.subTest(op):
                cinn_like.torch.reset()
                with torch.no_grad():
                    torch.testing.assert_close(compiled(fn)(*args), fn(*args))
                report = cinn_like.torch.fallback_report()
                reasons = [why for name, why in report if name.startswith(op)]
                test.assertTrue(reasons and reason in reasons[0], report)

    def seed_case(name):
        """Seeds torch's generator from a case's name, the same in every process (Python's
        hash() of a str changes with each interpreter, which made data, and failures, vary)."""
        torch.manual_seed(zlib.crc32(name.encode()) % 1000)

    def devices():
        return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def report(title, before, after):
    """Prints one table row: ops compiled / fell back, partitions, compiles (deltas)."""
    d = {k: after[k] - before.get(k, 0) for k in after}
    print(f"\n{title:<28} ops compiled {d['ops_compiled']:>4}  fell back {d['ops_fallback']:>3}  "
          f"kernels(partitions) {d['partitions']:>3}  compiles {d['compiles']:>3}  "
          f"cache hits {d['cache_hits']:>3}", flush=True)
    return d
