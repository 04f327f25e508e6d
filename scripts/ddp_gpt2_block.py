#!/usr/bin/env python3
"""Trains the GPT-2 block under DistributedDataParallel on every GPU of this machine (one
process a GPU, NCCL), twice from the same weights and data: in eager and under
torch.compile(backend="cinn_like"). Prints each step's loss of both, their relative
difference, each rank's compile-cache counters and exits non-zero when a step differs by more
than --rtol or a rank fails.

The ranks share one compile-cache directory (CINN_LIKE_CACHE_DIR, a fresh temporary one unless
set): a Program two ranks compile at once is compiled by one of them while the other waits for
its entry (the cache's compile lock) and loads it, so one rank's misses are the other's hits.
DDP's bucket cap is small (--bucket-mb) so that Dynamo's DDP optimizer splits the graph at
bucket boundaries, as it does in large models.

    CINN_LIKE_LIBRARY=build/libcinn_like.so PYTHONPATH=cinn_like/python \
        python3 scripts/ddp_gpt2_block.py [--steps 20] [--gpus 2]
"""
import argparse
import os
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "tests", "python"))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _train(model, batches, lr):
    """Losses of SGD steps over `batches` (x, target), as floats; the model is changed."""
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    for x, target in batches:
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _rank(rank, world, port, args, results):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    try:
        import cinn_like  # noqa: PLC0415 (after the environment is set)
        import cinn_like.torch  # noqa: PLC0415,F401 (registers backend="cinn_like")
        from torch_util import GPT2Block  # noqa: PLC0415
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        device = torch.device("cuda", rank)
        torch.manual_seed(0)
        init = GPT2Block(args.dim, args.heads).state_dict()
        gen = torch.Generator().manual_seed(1000 + rank)  # each rank its own data
        batches = [(torch.randn(args.batch, args.seq, args.dim, generator=gen).to(device),
                    torch.randn(args.batch, args.seq, args.dim, generator=gen).to(device))
                   for _ in range(args.steps)]

        def ddp_model():
            m = GPT2Block(args.dim, args.heads)
            m.load_state_dict(init)
            return torch.nn.parallel.DistributedDataParallel(
                m.to(device), device_ids=[rank], bucket_cap_mb=args.bucket_mb)

        eager = _train(ddp_model(), batches, args.lr)
        compiled = _train(torch.compile(ddp_model(), backend="cinn_like"), batches, args.lr)
        stats = cinn_like.torch.stats()
        results[rank] = {"eager": eager, "compiled": compiled, "cache": cinn_like.cache_stats(),
                         "graphs": stats["graphs"], "partitions": stats["partitions"],
                         "fallback": stats["ops_fallback"], "compiled_ops": stats["ops_compiled"]}
        dist.barrier()
    except Exception as e:  # noqa: BLE001 (reported by the parent)
        results[rank] = {"error": f"{type(e).__name__}: {e}"}
        raise
    finally:
        dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpus", type=int, default=None, help="ranks (default: every GPU)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--bucket-mb", type=float, default=1.0)
    ap.add_argument("--rtol", type=float, default=1e-3)
    args = ap.parse_args()
    world = args.gpus or torch.cuda.device_count()
    if world < 1:
        sys.exit("no GPU: this script trains on CUDA devices")
    cache = None
    if not os.environ.get("CINN_LIKE_CACHE_DIR"):
        cache = tempfile.TemporaryDirectory(prefix="cinn_like_ddp_cache_")
        os.environ["CINN_LIKE_CACHE_DIR"] = cache.name
    os.environ["FLAGS_cinn_like_cache"] = "true"
    print(f"{world} ranks, torch {torch.__version__}, {torch.cuda.get_device_name(0)}, "
          f"cache {os.environ['CINN_LIKE_CACHE_DIR']}", flush=True)
    with mp.Manager() as manager:
        results = manager.dict()
        try:
            mp.spawn(_rank, args=(world, _free_port(), args, results), nprocs=world, join=True)
        except Exception as e:  # noqa: BLE001 (each rank's error is printed below)
            print(f"a rank failed: {e}")
        results = dict(results)
    failed = False
    for rank in range(world):
        r = results.get(rank, {"error": "no result"})
        if "error" in r:
            print(f"rank {rank}: {r['error']}")
            failed = True
            continue
        print(f"rank {rank}: {r['graphs']} graphs, {r['partitions']} partitions, "
              f"{r['compiled_ops']} ops compiled, {r['fallback']} fell back; cache {r['cache']}")
        print(f"  {'step':>4} {'eager loss':>12} {'cinn_like loss':>15} {'rel diff':>10}")
        for step, (a, b) in enumerate(zip(r["eager"], r["compiled"])):
            rel = abs(a - b) / max(abs(a), 1e-12)
            bad = rel > args.rtol
            failed |= bad
            print(f"  {step:>4} {a:>12.6f} {b:>15.6f} {rel:>10.2e}{'  > rtol' if bad else ''}")
    hits = sum(results[r]["cache"]["hits"] for r in range(world) if "cache" in results.get(r, {}))
    print(f"{'FAILED' if failed else 'OK'}: {args.steps} steps on {world} ranks, losses within "
          f"{args.rtol:g} relative of eager DDP: {not failed}; cache hits over all ranks {hits}")
    if cache is not None:
        cache.cleanup()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
