#!/usr/bin/env python3
"""Compile time, each measurement in a fresh process: cinn_like cold (an empty persistent
cache), cinn_like warm (the cache the cold run left) and Inductor cold (its caches off), per
model, with the cold compile's breakdown by stage.

For each model: the first call's wall time (Dynamo's tracing, AOTAutograd, the backend's
compile and the call); the seconds spent inside the backend as Dynamo calls it, for both
backends alike (AOTAutograd, the compiler, loading its code: the compile, less Dynamo's
tracing, which both share); cinn_like's own compile seconds (cinn_like.torch.stats()
"compile_seconds": partitioning, conversion, compiling) and its summed stages
(cinn_like.compile_stats(): lowering, CUDA C, NVRTC, module load, host LLVM IR, O3, ORC link,
cache). Ratios are Inductor / cinn_like, in the backend and on the first call.

    CINN_LIKE_LIBRARY=build/libcinn_like.so PYTHONPATH=cinn_like/python:tools \
        python3 tools/compile_bench.py [--device cuda] [--models gpt2_block,resnet18] [--zoo]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))

# One measurement: build the model, compile it, call it once; print a JSON line.
_CHILD = r"""
import json, os, sys, time
sys.path.insert(0, os.environ["CB_TOOLS"])
sys.path.insert(0, os.path.join(os.environ["CB_TOOLS"], "..", "tests", "python"))
import torch
task = json.loads(sys.argv[1])
device, backend, name = task["device"], task["backend"], task["model"]
if name.startswith("zoo:"):
    import model_zoo as zoo
    e = zoo.get(name[4:])
    model = e.build("realistic").to(device).eval()
    kwargs = {k: v.to(device) for k, v in e.inputs("realistic", train=False).items()
              if not k.startswith("_")}
    args = ()
else:
    import torch_models_bench as tmb
    model, args = next((m, a) for n, m, a in tmb.models(device) if n == name)
    model = model.to(device).eval()
    args = tuple(a.to(device) for a in args)
    kwargs = {}
if backend == "cinn_like":
    import cinn_like, cinn_like.torch
# The seconds Dynamo spends in the backend (AOTAutograd, the compiler, loading its code), for
# either backend: the first call less Dynamo's own tracing and the call.
if backend == "inductor" and hasattr(torch, "_TorchCompileInductorWrapper"):
    inner = torch._TorchCompileInductorWrapper(None, None, None)  # what backend="inductor" makes
else:
    inner = torch._dynamo.lookup_backend(backend)
in_backend = [0.0]
def timed(gm, example_inputs, **kw):
    t = time.perf_counter()
    try:
        return inner(gm, example_inputs, **kw)
    finally:
        in_backend[0] += time.perf_counter() - t
compiled = torch.compile(model, backend=timed)
with torch.no_grad():
    if device == "cuda":
        torch.cuda.synchronize()
    t = time.perf_counter()
    compiled(*args, **kwargs)
    if device == "cuda":
        torch.cuda.synchronize()
    first = time.perf_counter() - t
out = {"first_s": first, "in_backend_s": in_backend[0]}
if backend == "cinn_like":
    out["backend_s"] = cinn_like.torch.stats()["compile_seconds"]
    out["stages"] = cinn_like.compile_stats()
    out["cache"] = cinn_like.cache_stats()
    out["torch"] = cinn_like.torch.stats()
print("CB " + json.dumps(out))
"""


def measure(task, env):
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(task)], env=env,
                          capture_output=True, text=True, timeout=1800)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("CB ")]
    if done.returncode != 0 or not lines:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"{task}: exit {done.returncode}: {tail}")
    return json.loads(lines[-1][3:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--models", default="gpt2_block,transformer_encoder_layer,resnet18,swiglu")
    ap.add_argument("--zoo", action="store_true", help="also the model zoo's realistic models")
    ap.add_argument("--skip-inductor", action="store_true")
    ap.add_argument("--warm-machine", type=int, default=None, metavar="GIB",
                    help="first write GIB GiB of memory and compile swiglu with both backends, "
                         "not reported: the libraries are read from disk once before measuring")
    args = ap.parse_args()
    import torch  # noqa: PLC0415 (only for the default device and the header)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    names = [m for m in args.models.split(",") if m]
    if args.zoo:
        sys.path.insert(0, _HERE)
        import model_zoo  # noqa: PLC0415
        names += ["zoo:" + n for n in model_zoo.names()]
    print(f"device={device} torch={torch.__version__}; each figure from a fresh process")
    print(f"{'model':<28}{'cold: first':>12}{'backend':>8}{'own':>7}{'warm: first':>12}"
          f"{'backend':>8}{'own':>7}{'inductor: first':>16}{'backend':>8}"
          f"{'ind/cinn: backend':>18}{'first':>6}   cold stages (ms)")
    if args.warm_machine is not None:
        import numpy  # noqa: PLC0415
        touched = numpy.ones(args.warm_machine << 30, numpy.uint8)
        del touched
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, CB_TOOLS=_HERE, CINN_LIKE_CACHE_DIR=cache,
                       TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
            for backend in ("cinn_like",) + (() if args.skip_inductor else ("inductor",)):
                try:
                    measure({"device": device, "model": "swiglu", "backend": backend}, env)
                except RuntimeError as e:
                    print(f"warming the machine: {e}")
    for name in names:
        with tempfile.TemporaryDirectory() as cache:
            # Each process gets an empty NVIDIA ComputeCache, where NVRTC (and the driver)
            # keep the machine code ptxas made, by the PTX: a compile that hits it skips
            # ptxas, nine tenths of NVRTC's time. Triton's cache likewise, for Inductor.
            env = dict(os.environ, CB_TOOLS=_HERE, CINN_LIKE_CACHE_DIR=cache,
                       FLAGS_cinn_like_cache="true")
            task = {"device": device, "model": name, "backend": "cinn_like"}
            try:
                cold = measure(task, dict(env, CUDA_CACHE_PATH=os.path.join(cache, "nv1")))
                warm = measure(task, dict(env, CUDA_CACHE_PATH=os.path.join(cache, "nv2")))
                ind = None if args.skip_inductor else measure(
                    dict(task, backend="inductor"),
                    dict(env, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1",
                         CUDA_CACHE_PATH=os.path.join(cache, "nv3"),
                         TRITON_CACHE_DIR=os.path.join(cache, "triton")))
            except RuntimeError as e:
                print(f"{name:<28} failed: {e}")
                continue
        st = cold["stages"]
        stages = " ".join(f"{k[:-3]} {st[k]:.0f}" for k in (
            "lower_ms", "library_check_ms", "device_codegen_ms", "nvrtc_ms", "module_load_ms",
            "host_codegen_ms", "host_optimize_ms", "orc_link_ms", "cache_ms"))
        stages += f" prebuilt kernels {st.get('prebuilt_kernels', 0)}"
        nan = float("nan")
        ind_first, ind_backend = (ind["first_s"], ind["in_backend_s"]) if ind else (nan, nan)
        print(f"{name:<28}{cold['first_s']:>12.2f}{cold['in_backend_s']:>8.3f}"
              f"{cold['backend_s']:>7.3f}{warm['first_s']:>12.2f}{warm['in_backend_s']:>8.3f}"
              f"{warm['backend_s']:>7.3f}"
              f"{ind_first:>16.2f}{ind_backend:>8.2f}"
              f"{ind_backend / max(cold['in_backend_s'], 1e-9):>18.1f}"
              f"{ind_first / cold['first_s']:>6.1f}"
              f"   {stages}; {cold['torch']['graphs']} graphs, "
              f"{cold['torch']['partitions']} partitions, programs {st['compiled']} compiled, "
              f"warm: {warm['stages']['loaded']} loaded {warm['stages']['compiled']} compiled, "
              f"{warm['torch'].get('plan_hits', 0)} of {warm['torch']['graphs']} graphs planned",
              flush=True)


if __name__ == "__main__":
    main()
