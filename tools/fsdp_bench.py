#!/usr/bin/env python3
"""FSDP2 training steps, each transformer block compiled by Inductor or cinn_like, vs eager.

One process per GPU (nccl), FSDP2 (torch.distributed.fsdp.fully_shard) over them all. The
model is a row of tools/train_bench.py (its Hugging Face config, batches, loss and optimizer),
dropout off. Each mode runs on WORLD fresh processes of its own, so that modes share no Dynamo
state (what torch._dynamo.reset() would clear), compiled code or GPU memory: the model is built
from one seed, each transformer block (the model's longest nn.ModuleList: GPT-2's
transformer.h) is compiled with the mode's backend (`block.compile(backend=...)`; none for
eager) and sharded with `fully_shard`, then the root. Each rank trains on batches of its own:
--check-steps steps on fresh batches, whose losses are compared with eager's, then --warm steps
and --steps timed steps of one batch.

Per mode the table gives the median ms per step (CUDA events; the slowest rank's), the peak
memory (the largest rank's), the first step's seconds (compiles), the last loss (rank 0), the
largest |loss - eager's| over the check steps and every rank, the graphs Dynamo compiled
(forward graphs: the blocks share one unless something recompiles) and for cinn_like its
fallbacks and partitions; then the ratios inductor/cinn_like and eager/cinn_like (above 1:
cinn_like faster). The exit status is 1 where a mode failed or a loss differs from eager's by
more than train_bench's tolerance (1e-3 relative, 2e-2 under autocast).

    CINN_LIKE_LIBRARY=build/libcinn_like.so PYTHONPATH=cinn_like/python \\
        python3 tools/fsdp_bench.py [--row gpt2] [--modes eager,inductor,cinn_like]
        [--world 2] [--steps 20] [--warm 3] [--check-steps 10] [--mode-timeout 300]

The same code on the CPU (gloo, a GPT-2 of 2 narrow layers), to try it without GPUs:

    python3 tools/fsdp_bench.py --device cpu --tiny --steps 3 --check-steps 4
"""
import argparse
import datetime
import json
import os
import sys
import tempfile
import time
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch._dynamo.utils import counters

sys.path.insert(0, os.path.dirname(__file__))
import cinn_like.torch as ct  # noqa: E402
import train_bench  # noqa: E402 (tools/: the rows, their steps and dropout switch)
from torch_models_bench import median_ms  # noqa: E402 (one timing method)

MODES = ("eager", "inductor", "cinn_like")
# GPT-2 as train_bench's gpt2 row builds it, cut to a size the CPU trains in seconds.
TINY = train_bench.Row(
    "gpt2-tiny",
    train_bench._hf("GPT2Config", "GPT2LMHeadModel", n_layer=2, n_embd=64, n_head=4,
                    vocab_size=512, n_positions=64, bos_token_id=0, eos_token_id=0),
    train_bench._text_batch(512, 2, 32), train_bench._hf_loss, train_bench._adamw)


def transformer_blocks(model):
    """The model's transformer blocks: its longest nn.ModuleList (GPT-2's transformer.h,
    Llama's model.layers, RoBERTa's encoder.layer)."""
    lists = [m for m in model.modules() if isinstance(m, torch.nn.ModuleList)]
    if not lists:
        raise ValueError(f"{type(model).__name__} has no nn.ModuleList of blocks to shard")
    return max(lists, key=len)


def sharded_model(row, mode, device, world):
    """The row's model from seed 0, dropout off, on `device`, each block compiled with the mode's
    backend, then each block and the root fully_shard'ed over a mesh of the `world` ranks."""
    from torch.distributed.device_mesh import init_device_mesh  # noqa: PLC0415
    from torch.distributed.fsdp import fully_shard  # noqa: PLC0415
    torch.manual_seed(0)
    model = train_bench.set_dropout(row.build(), on=False).to(device)
    mesh = init_device_mesh(device.type, (world,))
    for block in transformer_blocks(model):
        if mode != "eager":
            block.compile(backend=mode, dynamic=False)
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def run_mode(rank, row, mode, device, args):
    """One rank of one mode: the losses of the check steps, then the median step time.
    Returns what the parent tabulates."""
    model = sharded_model(row, mode, device, args.world)
    opt = row.opt(model.parameters())
    ct.reset()
    losses, first = [], None
    for s in range(args.check_steps):
        inputs, target = row.batch(device, 1000 * rank + s)
        start = time.perf_counter()
        losses.append(train_bench.make_step(row, model, model, opt, inputs, target)().item())
        if first is None:
            first = time.perf_counter() - start
    inputs, target = row.batch(device, 1000 * rank + args.check_steps)
    step = train_bench.make_step(row, model, model, opt, inputs, target)
    for _ in range(args.warm):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    ms = median_ms(step, device.type, args.steps)
    peak = torch.cuda.max_memory_allocated() / 2**20 if device.type == "cuda" else float("nan")
    stats = ct.stats()
    return {"losses": losses, "ms": ms, "peak": peak, "first": first,
            "graphs": counters["stats"]["unique_graphs"],
            "fallbacks": stats["ops_fallback"] if mode == "cinn_like" else 0,
            "parts": stats["partitions"] if mode == "cinn_like" else 0,
            "report": ct.fallback_report()[:5] if mode == "cinn_like" else []}


def rank_main(rank, row_name, mode, init_file, out_dir, args):
    """A spawned rank: joins the process group, runs the mode and writes its results as
    <out_dir>/<rank>.json. An exception reaches the parent through torch.multiprocessing."""
    row = TINY if args.tiny else {r.name: r for r in train_bench.ROWS}[row_name]
    if args.device == "cuda":
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
    else:
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // args.world))
        device = torch.device("cpu")
    backend = "nccl" if device.type == "cuda" else "gloo"
    extra = {"device_id": device} if device.type == "cuda" else {}
    dist.init_process_group(backend, init_method="file://" + init_file, rank=rank,
                            world_size=args.world,
                            timeout=datetime.timedelta(seconds=args.mode_timeout), **extra)
    try:
        got = run_mode(rank, row, mode, device, args)
        with open(os.path.join(out_dir, f"{rank}.json"), "w") as f:
            json.dump(got, f)
    finally:
        dist.destroy_process_group()


def spawn_mode(row_name, mode, args):
    """Runs `mode` on args.world new processes. Returns each rank's results, or raises with the
    failing rank's error (the other ranks are ended) or after args.mode_timeout seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        context = mp.spawn(rank_main, args=(row_name, mode, os.path.join(tmp, "init"), tmp, args),
                           nprocs=args.world, join=False)
        deadline = time.monotonic() + args.mode_timeout
        while not context.join(timeout=5):
            if time.monotonic() > deadline:
                for p in context.processes:
                    p.kill()
                    p.join()
                raise TimeoutError(f"ranks still running after {args.mode_timeout} s: killed")
        ranks = []
        for r in range(args.world):
            with open(os.path.join(tmp, f"{r}.json")) as f:
                ranks.append(json.load(f))
        return ranks


def merged(ranks, eager):
    """The ranks' results as one row: the slowest rank's ms, the largest peak and first step,
    rank 0's losses, and the largest |loss - eager's loss| over ranks and steps (None without
    eager, or for eager itself)."""
    row = dict(ranks[0])
    for key in ("ms", "peak", "first", "graphs"):
        row[key] = max(r[key] for r in ranks)
    row["diff"] = row["scale"] = None
    if eager is not None and eager is not ranks:
        row["diff"] = max(abs(a - b) for r, e in zip(ranks, eager, strict=True)
                          for a, b in zip(r["losses"], e["losses"], strict=True))
        row["scale"] = max(abs(b) for e in eager for b in e["losses"])
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--row", default="gpt2", help="a train_bench.py row of a Hugging Face model")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--world", type=int, default=2, help="processes (GPUs)")
    p.add_argument("--steps", type=int, default=20, help="timed steps per mode")
    p.add_argument("--warm", type=int, default=3, help="untimed steps after the check steps")
    p.add_argument("--check-steps", type=int, default=10, help="steps whose losses are compared")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--tiny", action="store_true", help="a GPT-2 of 2 narrow layers (CPU tries)")
    p.add_argument("--mode-timeout", type=int, default=300,
                   help="seconds a mode may take before its processes are killed")
    args = p.parse_args()
    rows = {r.name: r for r in train_bench.ROWS}
    unknown = set(args.modes.split(",")) - set(MODES)
    if unknown:
        p.error(f"--modes: unknown {', '.join(sorted(unknown))} (known: {', '.join(MODES)})")
    if not args.tiny and args.row not in rows:
        p.error(f"--row: unknown {args.row} (known: {', '.join(rows)})")
    modes = [m for m in MODES if m in args.modes.split(",")]  # eager first: the losses' reference
    if args.device == "cuda" and torch.cuda.device_count() < args.world:
        sys.exit(f"fsdp_bench: {torch.cuda.device_count()} CUDA devices, {args.world} needed "
                 "(--device cpu runs on gloo)")
    row_name = TINY.name if args.tiny else args.row
    amp = (TINY if args.tiny else rows[row_name]).amp
    tol = 2e-2 if amp else 1e-3
    dev, clock = ((torch.cuda.get_device_name(), "CUDA events") if args.device == "cuda"
                  else ("cpu", "wall time"))
    print(f"{row_name}: FSDP2 on {args.world} x {dev}, each block compiled; dropout off; "
          f"ms/step: median of {args.steps} ({clock}), slowest rank; loss |d|: largest "
          f"difference to eager over {args.check_steps} steps and every rank", flush=True)
    print(f"{'mode':10s} {'ms/step':>8s} {'peak MiB':>9s} {'first s':>8s} {'last loss':>10s} "
          f"{'loss |d|':>9s} {'graphs':>6s} {'fb':>4s} {'parts':>5s}", flush=True)
    failed, far, got, eager = [], [], {}, None
    for mode in modes:
        start = time.perf_counter()
        try:
            ranks = spawn_mode(row_name, mode, args)
        except Exception as e:  # noqa: BLE001 (report the mode, go on with the next)
            failed.append(mode)
            text = "".join(traceback.format_exception_only(type(e), e)).strip().splitlines()
            print(f"{mode:10s} FAILED after {time.perf_counter() - start:.0f} s:", flush=True)
            for line in text[-20:]:
                print(f"    {line[:200]}")
            continue
        if mode == "eager":
            eager = ranks
        got[mode] = r = merged(ranks, eager)
        diff = "-" if r["diff"] is None else f"{r['diff']:.1e}"
        if r["diff"] is not None and not r["diff"] <= tol * max(1.0, r["scale"]):  # NaN too
            far.append(mode)
            diff += " !"
        print(f"{mode:10s} {r['ms']:8.2f} {r['peak']:9.0f} {r['first']:8.1f} "
              f"{r['losses'][-1]:10.4f} {diff:>9s} {r['graphs']:6d} {r['fallbacks']:4d} "
              f"{r['parts']:5d}", flush=True)
        for op, reason in r["report"]:
            print(f"    fell back: {op}: {reason[:160]}")
    if "cinn_like" in got:
        line = [f"{base}/cinn_like {got[base]['ms'] / got['cinn_like']['ms']:.2f}x"
                for base in ("inductor", "eager") if base in got]
        print(f"{'ratio':10s} " + ", ".join(line) + " (above 1: cinn_like faster)")
    if eager is not None:
        print(f"losses against eager over {args.check_steps} steps (at most {tol:g} relative): "
              + (f"DIFFER for {', '.join(far)} ('!')" if far else "ok"))
    if failed:
        print(f"failed: {', '.join(failed)}")
    sys.exit(1 if failed or far else 0)


if __name__ == "__main__":
    main()
