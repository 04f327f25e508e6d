#!/usr/bin/env python3
"""Attention side by side: cinn_like's fused kernel against PyTorch's SDPA backends, one process.

Rows: scaled_dot_product_attention at the model zoo's sizes (batch 8 x 12 heads x 512 tokens,
head dim 64; head dim 128 at batch 4 x 16 heads x 1024 tokens), float32 and float16, causal
without a mask (is_causal) and with the masks HF models pass: the causal float mask that
transformers materializes as [B, 1, S, S] under torch.compile, a [B, 1, S, S] float padding mask
(BERT's: the last quarter of the last sequence dropped), a bool [B, 1, 1, S] padding mask, the
float [B, 1, 1, S] keys' mask BERT's becomes in cinn_like (hlir/pass/narrow_attention_masks.h),
and a [1, 1, S, S] 128-key sliding window; rows ending in "HF" take q, k and v as HF's layers
hold them, [B, S, H, D] transposed to [B, H, S, D], and return the output transposed back and
made contiguous (every backend reads and writes the strided views its own way). Per row: cinn_like's output checked against PyTorch's math
backend (max |got - want| / max |want|, 1e-3 for float32, 1e-2 for float16), then the kernel
time of a call (torch.profiler, every kernel of the call) of torch.compile(backend="cinn_like")
and of each PyTorch backend that takes the row (flash, memory-efficient, cuDNN), and the best
of those over cinn_like's (above 1: cinn_like faster). On the CPU the rows run at 64 tokens,
timed by wall clock against the math backend, float32 only. A row fails when its output is off or
an op of it fell back to PyTorch.

    CINN_LIKE_LIBRARY=build/libcinn_like.so PYTHONPATH=cinn_like/python \\
        python3 tools/attention_bench.py [--device cuda|cpu] [--only gpt2,window]
"""
import argparse
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(__file__))
import cinn_like.torch as ct  # noqa: E402 (registers backend="cinn_like")
from kernel_profile import kernels_per_step  # noqa: E402 (one home of the kernel time)
from roofline_bench import geomean  # noqa: E402
from torch_models_bench import median_ms  # noqa: E402 (one timing method)

TOLERANCE = {torch.float32: 1e-3, torch.float16: 1e-2}
BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
            ("cudnn", SDPBackend.CUDNN_ATTENTION)]
# (name, batch, heads, tokens, head dim, mask kind[, "hf"]: HF's [B, S, H, D] layout)
ROWS = [("gpt2 causal", 8, 12, 512, 64, "is_causal"),
        ("gpt2 causal mask", 8, 12, 512, 64, "causal"),
        ("bert padding mask", 8, 12, 512, 64, "padding"),
        ("bert bool padding", 8, 12, 512, 64, "bool"),
        ("bert keys mask", 8, 12, 512, 64, "keys"),
        ("bert keys HF", 8, 12, 512, 64, "keys", "hf"),
        ("gpt2 causal HF", 8, 12, 512, 64, "is_causal", "hf"),
        ("window 128", 8, 12, 512, 64, "window"),
        ("d128 causal", 4, 16, 1024, 128, "is_causal")]


def make_mask(kind, batch, tokens, dtype, device):
    """The attention mask of `kind` (None for is_causal)."""
    i = torch.arange(tokens, device=device)[:, None]
    j = torch.arange(tokens, device=device)[None, :]
    if kind == "is_causal":
        return None
    if kind in ("bool", "keys"):
        keep = torch.ones(batch, 1, 1, tokens, dtype=torch.bool, device=device)
        keep[-1, ..., tokens - tokens // 4:] = False
        if kind == "bool":
            return keep
    if kind == "causal":
        keep = (j <= i).expand(batch, 1, tokens, tokens)
    elif kind == "padding":
        keep = torch.ones(batch, 1, tokens, tokens, dtype=torch.bool, device=device)
        keep[-1, ..., tokens - tokens // 4:] = False
    elif kind == "window":  # the 128 keys up to the query
        keep = ((j <= i) & (j > i - 128))[None, None]
    zero = torch.zeros((), dtype=dtype, device=device)
    return torch.where(keep, zero, torch.tensor(-math.inf, dtype=dtype, device=device))


def attention(q, k, v, mask, is_causal):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)


def attention_hf(q, k, v, mask, is_causal):
    """attention as HF's layers call it: [B, S, H, D] operands, the output made [B, S, H, D]."""
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         attn_mask=mask, is_causal=is_causal)
    return out.transpose(1, 2).contiguous()


def call_ms(step, device):
    """ms of one call: its kernels' time on the GPU, wall time on the CPU."""
    if device == "cuda":
        for _ in range(3):
            step()
        return kernels_per_step(step, reps=10)[0]
    return median_ms(step, device, reps=10)


def run_row(name, batch, heads, tokens, dim, kind, dtype, device, layout="bhsd"):
    g = torch.Generator(device=device).manual_seed(0)
    shape = (batch, tokens, heads, dim) if layout == "hf" else (batch, heads, tokens, dim)
    q, k, v = (torch.randn(*shape, generator=g, device=device, dtype=dtype) for _ in range(3))
    call = attention_hf if layout == "hf" else attention
    mask = make_mask(kind, batch, tokens, dtype, device)
    is_causal = kind == "is_causal"
    torch._dynamo.reset()  # a row's shapes and dtype are its own compile, not a recompile
    ct.reset()
    compiled = torch.compile(call, backend="cinn_like", dynamic=False)
    got = compiled(q, k, v, mask, is_causal)
    fell_back = ct.stats()["ops_fallback"]
    with sdpa_kernel([SDPBackend.MATH]):
        want = call(q.double(), k.double(), v.double(),
                         mask.double() if mask is not None and mask.is_floating_point() else mask,
                         is_causal)
    err = ((got.double() - want).abs().max() / want.abs().max()).item()
    ok = err <= TOLERANCE[dtype] and not fell_back
    times = {"cinn_like": call_ms(lambda: compiled(q, k, v, mask, is_causal), device)}
    backends = BACKENDS if device == "cuda" else [("math", SDPBackend.MATH)]
    for label, backend in backends:
        try:
            with sdpa_kernel([backend]):
                call(q, k, v, mask, is_causal)
                times[label] = call_ms(lambda: call(q, k, v, mask, is_causal), device)
        except RuntimeError:  # the backend does not take this row
            times[label] = None
    best = min(t for label, t in times.items() if label != "cinn_like" and t is not None)
    cells = " ".join(f"{times[label] * 1e3:9.1f}" if times[label] is not None else f"{'-':>9}"
                     for label in ["cinn_like"] + [b[0] for b in backends])
    dt = str(dtype).replace("torch.", "")
    print(f"{name:20s} {dt:8s} {cells} {best / times['cinn_like']:8.2f}x  err {err:.1e}"
          f"{f'  {fell_back} ops fell back' if fell_back else ''}{'' if ok else '  FAILED'}",
          flush=True)
    return ok, best / times["cinn_like"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--only", default="", help="comma-separated substrings of row names")
    args = p.parse_args()
    only = [s for s in args.only.split(",") if s]
    backends = [b[0] for b in BACKENDS] if args.device == "cuda" else ["math"]
    unit = "kernel us a call" if args.device == "cuda" else "wall us a call"
    print(f"{'row':20s} {'dtype':8s} " + " ".join(f"{c:>9}" for c in ["cinn_like"] + backends) +
          f" {'best/cl':>9}  ({unit})")
    ratios, failed = [], 0
    for name, batch, heads, tokens, dim, kind, *layout in ROWS:
        if only and not any(s in name for s in only):
            continue
        if args.device == "cpu":
            batch, heads, tokens = 2, 2, 64
        for dtype in (torch.float32, torch.float16) if args.device == "cuda" else (torch.float32,):
            ok, ratio = run_row(name, batch, heads, tokens, dim, kind, dtype, args.device, *layout)
            failed += not ok
            ratios.append(ratio)
    if ratios:
        print(f"geomean best PyTorch / cinn_like: {geomean(ratios):.2f}x over {len(ratios)} rows")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
