#!/usr/bin/env python3
"""Eager vs torch.compile(backend="cinn_like") on the issue's models, side by side in one run.

For each model (the test models of tests/python/torch_util.py at benchmark sizes): outputs
checked against eager first, then median device times (CUDA events, or wall time on CPU) of
eager and compiled calls, and what cinn_like compiled: ops compiled vs fell back, partitions.

    CINN_LIKE_LIBRARY=build/libcinn_like.so PYTHONPATH=cinn_like/python python3 tools/torch_models_bench.py
"""
import os
import statistics
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
import cinn_like.torch  # noqa: E402,F401 (registers backend="cinn_like")
from torch_util import MLP, GPT2Block, SmallCNN, SwiGLU  # noqa: E402 (one definition of the models)

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
# nn.TransformerEncoderLayer under no_grad takes one fused op (its "fast path") that cinn_like
# leaves to PyTorch; without it the layer's ops are what torch.compile sees, in eager too.
torch.backends.mha.set_fastpath_enabled(False)


def call_ms(fn, device):
    """Milliseconds of one call of `fn`: CUDA events around it, synchronized after it, on the
    GPU; the host's clock on the CPU. The one timing of a call the benchmarks share."""
    if device == "cuda":
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e)
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1e3


def median_ms(fn, device, reps=30):
    for _ in range(3):
        fn()
    return statistics.median(call_ms(fn, device) for _ in range(reps))


def host_us(fn, device, calls=2000, rounds=7):
    """Microseconds per call of `fn` over `calls` calls in a row (median over rounds): the
    host's time, the device synchronised only between rounds (a dispatch-bound call's cost)."""
    for _ in range(200):
        fn()
    means = []
    for _ in range(rounds):
        if device == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        means.append((time.perf_counter() - t) / calls * 1e6)
        if device == "cuda":
            torch.cuda.synchronize()
    return statistics.median(means)


def models(device):
    yield "mlp", MLP(512, 2048, 512), (torch.randn(4096, 512),)
    layer = nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.0, batch_first=True)
    yield "transformer_encoder_layer", layer, (torch.randn(16, 128, 256),)
    yield "small_cnn", SmallCNN(), (torch.randn(256, 3, 16, 16),)
    yield "gpt2_block", GPT2Block(256, 8), (torch.randn(8, 128, 256),)
    yield "swiglu", SwiGLU(512, 1408), (torch.randn(8, 512, 512),)
    try:
        import torchvision  # noqa: PLC0415 (optional: present on the GPU machine)
        yield "resnet18", torchvision.models.resnet18(weights=None), (torch.randn(16, 3, 224, 224),)
    except ImportError:
        pass


def main():
    device = sys.argv[1] if len(sys.argv) > 1 else ("cuda" if torch.cuda.is_available() else "cpu")
    print(f"device={device} torch={torch.__version__}")
    print(f"{'model':<28}{'ops compiled':>13}{'fell back':>10}{'partitions':>11}"
          f"{'eager ms':>10}{'cinn_like ms':>13}{'speedup':>9}{'max rel err':>12}")
    for name, model, inputs in models(device):
        model = model.to(device).eval()
        inputs = tuple(x.to(device) for x in inputs)
        torch._dynamo.reset()
        cinn_like.torch.reset()
        compiled = torch.compile(model, backend="cinn_like", dynamic=False)
        with torch.no_grad():
            want = model(*inputs)
            got = compiled(*inputs)
            err = ((got - want).abs().max() / want.abs().max().clamp_min(1e-12)).item()
            s = cinn_like.torch.stats()
            eager = median_ms(lambda: model(*inputs), device)
            ours = median_ms(lambda: compiled(*inputs), device)
        print(f"{name:<28}{s['ops_compiled']:>13}{s['ops_fallback']:>10}{s['partitions']:>11}"
              f"{eager:>10.3f}{ours:>13.3f}{eager / ours:>9.2f}{err:>12.2e}", flush=True)


if __name__ == "__main__":
    main()
