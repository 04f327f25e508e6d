"""Data-parallel training through cinn_like on two processes (gloo on the CPU): FSDP2
(fully_shard) with each block compiled, and DDP with the whole model compiled. Each run's
per-step losses on every rank and its final full parameters match the same run in eager, and
cinn_like compiled every op of the compiled graphs (strict mode: a fallback fails the run)."""
import datetime
import os
import tempfile
import time
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn as nn
    import cinn_like.torch as ct
    from torch._subclasses import FakeTensor
    from torch_util import GPT2Block

WORLD = 2
STEPS = 8
VOCAB, WIDTH, HEADS, BLOCKS, BATCH, SEQ = 256, 128, 4, 3, 4, 16
# A child that has not finished by then is killed and the test fails (a collective waiting for
# a dead peer gives up after COLLECTIVE_TIMEOUT).
SPAWN_TIMEOUT_S, COLLECTIVE_TIMEOUT = 240, datetime.timedelta(seconds=90)


def distributed_available():
    return HAVE_TORCH and dist.is_available() and dist.is_gloo_available()


if HAVE_TORCH:
    class TinyLM(nn.Module):
        """Embedding, BLOCKS pre-norm transformer blocks (torch_util.GPT2Block: causal attention
        by matmul and softmax, LayerNorm, tanh-GELU MLP), a final LayerNorm and a head. About
        2.4 MB of float32 parameters: DDP's 1 MB buckets split it, so Dynamo's DDPOptimizer
        compiles it as several graphs, one per bucket."""

        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, WIDTH)
            self.blocks = nn.ModuleList(GPT2Block(WIDTH, HEADS) for _ in range(BLOCKS))
            self.norm = nn.LayerNorm(WIDTH)
            self.head = nn.Linear(WIDTH, VOCAB)

        def forward(self, ids):
            x = self.embed(ids)
            for block in self.blocks:
                x = block(x)
            return self.head(self.norm(x))


def _batch(rank, step):
    """Rank `rank`'s token ids at `step`, fresh random, the same for the eager and compiled
    runs."""
    g = torch.Generator().manual_seed(1000 * step + rank)
    return torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=g)


def _train(model, forward, rank):
    """STEPS SGD steps (momentum: per-parameter optimizer state, sharded by FSDP2) of
    next-token prediction; the loss of each, as a float. Not Adam: Adam divides each gradient
    by its running RMS, so a gradient that is zero but for rounding (the attention's key bias:
    softmax ignores a shift common to a row) moves its weight by the full learning rate in a
    direction the rounding picks, and two correct runs differ by lr per step there."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for step in range(STEPS):
        ids = _batch(rank, step)
        logits = forward(ids[:, :-1])
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _counting_cinn_like(calls):
    """backend="cinn_like" that appends 1 to `calls` at each call of a graph it compiled with
    real tensors: the test counts them to know that every block ran compiled code at every step
    (Dynamo runs a frame in eager, silently, where it gives up on it). DDPOptimizer calls each
    graph once with fake tensors while it compiles (AOTAutograd answers that call): not
    counted. One such backend serves all blocks: Dynamo keys its compiled code by the backend
    too, and a backend per block would compile each block anew."""
    def backend(gm, example_inputs, **kwargs):
        compiled = ct.cinn_like_backend(gm, example_inputs, **kwargs)

        def run(*args):
            if not any(isinstance(a, FakeTensor) for a in args):
                calls.append(1)
            return compiled(*args)
        return run
    return backend


def _fsdp2(compile_blocks):
    """FSDP2 as PyTorch documents it with torch.compile: each block compiled, then each block
    and the root sharded (the embedding, final norm and head stay eager, in the root). Returns
    (losses, full parameters by name, cinn_like's stats, calls of the compiled graphs)."""
    from torch.distributed.fsdp import fully_shard  # noqa: PLC0415 (after the distributed check)
    torch.manual_seed(0)  # the same full weights on every rank, sharded by fully_shard
    model, calls = TinyLM(), []
    backend = _counting_cinn_like(calls)
    for block in model.blocks:
        if compile_blocks:
            block.compile(backend=backend, options={"strict": True})
        fully_shard(block)
    fully_shard(model)
    ct.reset()
    losses = _train(model, model, dist.get_rank())
    # full_tensor() all-gathers a DTensor shard: every rank calls it for every parameter.
    params = {name: p.full_tensor().detach().clone() for name, p in model.named_parameters()}
    return losses, params, ct.stats(), len(calls)


def _ddp(compile_model):
    """DDP (1 MB buckets) with the whole wrapped model compiled. Returns as _fsdp2."""
    from torch.nn.parallel import DistributedDataParallel  # noqa: PLC0415
    torch.manual_seed(0)
    model, calls = DistributedDataParallel(TinyLM(), bucket_cap_mb=1), []
    forward = (torch.compile(model, backend=_counting_cinn_like(calls), options={"strict": True})
               if compile_model else model)
    ct.reset()
    losses = _train(model, forward, dist.get_rank())
    params = {name: p.detach().clone() for name, p in model.module.named_parameters()}
    return losses, params, ct.stats(), len(calls)


def _child(rank, init_file, out_dir, kind):
    """One rank: the eager run, then the compiled one (a fresh model from the same seed, the
    same batches); both results saved to out_dir/<rank>.pt for the parent to compare. An
    exception here reaches the parent through torch.multiprocessing as a failure."""
    torch.set_num_threads(1)  # two ranks on CI's two cores
    dist.init_process_group("gloo", init_method="file://" + init_file, rank=rank,
                            world_size=WORLD, timeout=COLLECTIVE_TIMEOUT)
    try:
        run = {"fsdp2": _fsdp2, "ddp": _ddp}[kind]
        eager, mine = run(False), run(True)
        torch.save({"eager": eager, "cinn_like": mine}, os.path.join(out_dir, f"{rank}.pt"))
    finally:
        dist.destroy_process_group()


def _spawn(kind):
    """Runs _child on WORLD processes; returns each rank's results. A child's exception fails
    the caller with the child's traceback; a child still running after SPAWN_TIMEOUT_S is
    killed, with the others, and fails it too."""
    with tempfile.TemporaryDirectory() as tmp:
        context = mp.spawn(_child, args=(os.path.join(tmp, "init"), tmp, kind), nprocs=WORLD,
                           join=False)
        deadline = time.monotonic() + SPAWN_TIMEOUT_S
        # join raises as soon as one child fails (and terminates the others).
        while not context.join(timeout=5):
            if time.monotonic() > deadline:
                running = [r for r, p in enumerate(context.processes) if p.is_alive()]
                for p in context.processes:
                    p.kill()
                    p.join()
                raise AssertionError(f"{kind}: ranks {running} still running after "
                                     f"{SPAWN_TIMEOUT_S} s: killed")
        return [torch.load(os.path.join(tmp, f"{r}.pt")) for r in range(WORLD)]


@needs_torch
@unittest.skipUnless(distributed_available(), "this PyTorch has no torch.distributed with gloo")
class TorchDistributedTest(unittest.TestCase):
    # Tolerances, float32: cinn_like's matmuls and row reductions (LayerNorm, softmax, the
    # gradients' sums over tokens) add in other orders than ATen's, a few ulps apart per op, and
    # 8 steps carry that into the weights. Measured on x86 (both kinds alike): losses within
    # 5e-7, weights within 1.2e-7, the worst element at 0.02 of the bound below; a margin of 50
    # for other CPUs' vector widths. A gradient 0.1% off would not pass: training moves every
    # tensor by at least 1.8e-3 here (checked), so 0.1% of that is above ATOL.
    RTOL, ATOL = 1e-5, 1e-6

    def check(self, kind):
        """Runs `kind` on WORLD ranks and checks losses and weights against eager; returns each
        rank's (stats, calls of compiled graphs)."""
        start = time.perf_counter()
        ranks = _spawn(kind)
        torch.manual_seed(0)
        initial = dict(TinyLM().named_parameters())
        out = []
        for rank, got in enumerate(ranks):
            (e_losses, e_params, *_), (c_losses, c_params, stats, calls) = \
                got["eager"], got["cinn_like"]
            self.assertEqual(len(c_losses), STEPS)
            for step, (c, e) in enumerate(zip(c_losses, e_losses, strict=True)):
                self.assertAlmostEqual(c, e, delta=self.ATOL + self.RTOL * abs(e),
                                       msg=f"{kind} rank {rank} step {step}: loss")
            self.assertEqual(sorted(c_params), sorted(e_params))
            for name, e in e_params.items():
                # Training moved every weight well past the tolerance: a compiled run that
                # left one as it was (its gradient lost) cannot pass.
                self.assertGreater((e - initial[name]).abs().max().item(), 1000 * self.ATOL, name)
                torch.testing.assert_close(
                    c_params[name], e, rtol=self.RTOL, atol=self.ATOL,
                    msg=lambda m, r=rank, n=name: f"{kind} rank {r} {n}: {m}")
            # cinn_like compiled the graphs (strict mode made any fallback raise in the child).
            self.assertGreater(stats["ops_compiled"], 0, stats)
            self.assertGreater(stats["partitions"], 0, stats)
            self.assertEqual(stats["ops_fallback"], 0, stats)
            out.append((stats, calls))
        print(f"\n{kind}: {STEPS} steps on {WORLD} ranks, eager and cinn_like, "
              f"{time.perf_counter() - start:.1f} s; cinn_like's stats on rank 0: {out[0][0]}",
              flush=True)
        return out

    def test_fsdp2_blocks_compiled(self):
        for stats, calls in self.check("fsdp2"):
            # One forward graph and its backward, shared by the blocks (their parameters are
            # the graph's inputs); each block called it at each step.
            self.assertEqual(stats["graphs"], 2, stats)
            self.assertEqual(calls, BLOCKS * STEPS)

    def test_ddp_whole_model_compiled(self):
        for stats, calls in self.check("ddp"):
            # DDPOptimizer splits the model's graph at its buckets: several forward graphs (and
            # their backwards), each called once a step.
            graphs = stats["graphs"] // 2
            self.assertGreater(graphs, 1, stats)
            self.assertEqual(calls, graphs * STEPS)


if __name__ == "__main__":
    unittest.main()
