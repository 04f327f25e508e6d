#!/usr/bin/env python3
"""The call path alone: host microseconds per call of a compiled partition too small for its
kernel to matter (4 inputs of 16 floats, `relu(a * b + c) * sigmoid(d)`), beside eager's cost
of dispatching one op, in one process.

Rows (each the median over rounds of the mean wall time of many calls; on the GPU the device
is synchronised only after each round, so a row is the host's time, as long as the host is
slower than the kernels it queues):
  eager_one_op         torch.add(a, b): PyTorch's per-op dispatch cost
  eager                the four ops in eager mode
  inductor             torch.compile(f)
  cinn_like            torch.compile(f, backend="cinn_like")
  cinn_like_cudagraph  the same with options={"cudagraphs": True} (GPU only)
  partition            the compiled partition's module called directly (no Dynamo, no
                       AOTAutograd): what cinn_like adds per partition
  plan_run             the C call plan run through ctypes with fixed pointers: the entry, its
                       argument checks and the kernel launch, without Python's part

Then the anchor's 4-op tiny chain (tiny_ew_chain_f32 of ../shared/bench/torch_anchor.py,
imported), called under no_grad as an inference model is: eager, cinn_like and, on the GPU,
cinn_like's CUDA-graph mode and Inductor's (mode="reduce-overhead"), each with its ratio to
eager's time.

    CINN_LIKE_LIBRARY=build/libcinn_like.so PYTHONPATH=cinn_like/python \\
        python3 tools/call_path_bench.py [--device cpu|cuda]
"""
import argparse

import torch
from torch.fx.experimental.proxy_tensor import make_fx

import cinn_like.torch  # noqa: F401 (registers backend="cinn_like")
from cinn_like._lib import lib
from cinn_like.torch.kernel import compile_partition
from roofline_bench import anchor_workloads, load_anchor
from torch_models_bench import host_us


def f(a, b, c, d):
    return torch.relu(a * b + c) * torch.sigmoid(d)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--anchor", help="path of torch_anchor.py (default: ../shared/bench/)")
    a = p.parse_args()
    dev = a.device
    xs = [torch.randn(16, device=dev) for _ in range(4)]
    want = f(*xs)
    rows = [("eager_one_op", lambda: torch.add(xs[0], xs[1])), ("eager", lambda: f(*xs))]
    inductor = torch.compile(f)
    rows.append(("inductor", lambda: inductor(*xs)))
    compiled = torch.compile(f, backend="cinn_like")
    rows.append(("cinn_like", lambda: compiled(*xs)))
    if dev == "cuda":
        graphed = torch.compile(f, backend="cinn_like", options={"cudagraphs": True})
        rows.append(("cinn_like_cudagraph", lambda: graphed(*xs)))
    kernel = compile_partition(make_fx(f)(*xs), "cuda" if dev == "cuda" else "x86")
    rows.append(("partition", lambda: kernel(*xs)))
    for name, fn in rows[2:]:
        got = fn()
        got = got[0] if isinstance(got, (tuple, list)) else got
        if not torch.allclose(got, want, rtol=1e-5, atol=1e-6):
            raise SystemExit(f"call_path_bench: {name} differs from eager")
    out = torch.empty(16, device=dev)
    ptrs = kernel._ptrs_type(*[t.data_ptr() for t in xs + [out]])
    stream = kernel._stream() if kernel._stream else None
    rows.append(("plan_run", lambda: lib.cinn_like_call_plan_run(kernel._plan, ptrs, stream)))
    name = torch.cuda.get_device_name() if dev == "cuda" else "cpu"
    print(f"device={name} torch={torch.__version__} (host us per call; 4 inputs of 16 floats)")
    one = None
    for row, fn in rows:
        us = host_us(fn, dev)
        one = one or us
        print(f"{row:22s} {us:8.2f} us  {us / one:6.2f}x eager_one_op")
    tiny_chain(load_anchor(a.anchor), dev)


def tiny_chain(anchor, dev):
    """The anchor's tiny chain: eager, cinn_like and its CUDA-graph mode, under no_grad."""
    rows = [r for r in anchor_workloads(anchor, dev) if r[0] == "tiny_ew_chain_f32"]
    if not rows:
        return
    _, fn, args, _, _ = rows[0]
    with torch.no_grad():
        want = fn(*args)
        calls = [("eager", fn), ("cinn_like", torch.compile(fn, backend="cinn_like"))]
        if dev == "cuda":
            calls.append(("cinn_like_cudagraph", torch.compile(
                fn, backend="cinn_like", options={"cudagraphs": True})))
            # Inductor's CUDA graphs (its cudagraph trees): what Dynamo's own per-call cost
            # leaves to any backend's replay.
            calls.append(("inductor_cudagraph", torch.compile(fn, mode="reduce-overhead")))
        print(f"tiny_ew_chain_f32 (anchor, {list(args[0].shape)} floats, no_grad)")
        eager = None
        for name, f in calls:
            if not torch.allclose(f(*args), want, rtol=1e-5, atol=1e-6):
                raise SystemExit(f"call_path_bench: tiny chain {name} differs from eager")
            us = host_us(lambda f=f: f(*args), dev)
            eager = eager or us
            print(f"  {name:20s} {us:8.2f} us  eager/this {eager / us:5.2f}")


if __name__ == "__main__":
    main()
