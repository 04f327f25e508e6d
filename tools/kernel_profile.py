"""Where a step's GPU time goes, from torch.profiler: the kernel time and launches of a
callable, and its kernels by kind and by name (one home for tools/train_bench.py and
tools/zoo_bench.py)."""
import torch


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def kernels_per_step(step, reps=3, top=0):
    """(GPU kernel ms, kernel launches, the `top` kernels by time as (ms, launches, name)) per
    step, from torch.profiler; memory copies and sets count in the time, not the launches."""
    sync("cuda")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            step()
        sync("cuda")
    us, launches, by_name = 0.0, 0, {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        t = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
        us += t
        name = e.name.lower()
        if not name.startswith("memcpy") and not name.startswith("memset"):
            launches += 1
        total, count = by_name.get(e.name, (0.0, 0))
        by_name[e.name] = (total + t, count + 1)
    ranked = sorted(by_name.items(), key=lambda kv: -kv[1][0])[:top]
    kinds = {}
    for name, (t, n) in by_name.items():
        total, count = kinds.get(kernel_kind(name), (0.0, 0))
        kinds[kernel_kind(name)] = (total + t, count + n)
    kinds = sorted(kinds.items(), key=lambda kv: -kv[1][0]) if top else []
    return (us / reps / 1e3, launches / reps,
            [(t / reps / 1e3, n / reps, f"[{kind}]") for kind, (t, n) in kinds] +
            [(t / reps / 1e3, n / reps, name) for name, (t, n) in ranked])


def kernel_kind(name):
    """A kernel's kind by its name: generated (cinn_like's or Triton's), GEMM (cuBLAS, CUTLASS),
    attention (fused), convolution (cuDNN), PyTorch (ATen's own kernels), copy or other."""
    low = name.lower()
    if low.startswith("memcpy") or low.startswith("memset"):
        return "copy"
    if "fmha" in low or "flash" in low or "attention" in low:
        return "attention"
    if "cinn_like" in low or low.startswith("triton"):
        return "generated"
    if any(k in low for k in ("gemm", "cutlass", "cublas", "splitk", "nvjet")):
        return "GEMM"
    if any(k in low for k in ("conv", "cudnn", "wgrad", "dgrad", "implicit")):
        return "convolution"
    if "at::native" in low:
        return "PyTorch"
    return "other"
