"""The demo's PyTorch part: torch.compile(model, backend="cinn_like") on a small MLP and a
GPT-2-style attention block, checked against eager, then what ran where.

    PYTHONPATH=cinn_like/python python3 tools/torch_demo.py
"""
import sys

import torch
import torch.nn as nn

import cinn_like.torch  # noqa: F401 (registers backend="cinn_like")


def main():
    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64), nn.LayerNorm(64),
                          nn.Softmax(dim=-1)).to(dev).eval()
    compiled = torch.compile(model, backend="cinn_like", dynamic=False)
    x = torch.randn(32, 64, device=dev)
    with torch.no_grad():
        err = (compiled(x) - model(x)).abs().max().item()
    s = cinn_like.torch.stats()
    print(f"torch {torch.__version__} on {dev}: max |cinn_like - eager| = {err:.2e}; "
          f"{s['ops_compiled']} ops in {s['partitions']} cinn_like kernels, "
          f"{s['ops_fallback']} ops in PyTorch")
    for op, reason in cinn_like.torch.fallback_report():
        print(f"  fell back: {op}: {reason}")
    return 0 if err < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
