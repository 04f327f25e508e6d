"""Scaled dot-product attention with dropout as two PyTorch custom ops of cinn_like's, so that a
training graph keeps it fused: AOTAutograd sees `cinn_like::attention_dropout` in the forward
and `cinn_like::attention_dropout_backward` in the backward (the autograd formula below), and
the converters (ops/attention.py) make them cinn_like's attention op with dropout (one fused
kernel on GPUs, drawing its mask inside) and a backward that draws the same mask again from the
seed and stream the forward returns. Nothing of [B, H, Lq, Lk] is saved between them.

  attention_dropout(q [B, H, Lq, D], k [B, Hkv, Lk, D], v [B, Hkv, Lk, Dv], mask?, p, causal,
                    scale, seed?, stream) -> (out, logsumexp [B, H, Lq] float32, seed, stream)

The mask is drawn as cinn_like draws it (hlir/ops/attention.h): probability (b, h, i, j) is
kept where the Philox uniform of (seed, stream, its row-major index in [B, H, Lq, Lk]) is below
1 - p, and scaled by 1 / (1 - p); the logsumexp is the undropped softmax's, +inf on a row with
no kept key (whose output is 0). The seed is an int64 [1] tensor: seeds.add_seeds gives the op
the graph's seed and a stream of its own; without one (the op outside a cinn_like graph) the
eager form draws a seed from PyTorch's generator. The eager forms (PyTorch ops, philox.py for
the mask) run wherever cinn_like does not take a call, so a forward and a backward agree on the
mask whichever of them was compiled.
"""
import math

import torch

from . import philox


def _wide(x):
    """x in the type attention accumulates in: float64 stays, others become float32."""
    return x if x.dtype == torch.float64 else x.float()


def _expand_heads(x, heads):
    """k or v [B, Hkv, L, .] as [B, heads, L, .] (each key/value head read by its query group)."""
    group = heads // x.shape[1]
    return x if group == 1 else x.repeat_interleave(group, dim=1)


def _probabilities(q, k, mask, causal, scale):
    """(scores [B, H, Lq, Lk] (float32, or float64) with -inf where a key is not kept,
    logsumexp with +inf on a row without a kept key)."""
    lq, lk = q.shape[2], k.shape[2]
    s = torch.matmul(_wide(q), _wide(_expand_heads(k, q.shape[1])).transpose(-2, -1)) * scale
    keep = None
    if causal:
        keep = torch.ones(lq, lk, dtype=torch.bool, device=q.device).tril()
    if mask is not None:
        if mask.dtype == torch.bool:
            keep = mask if keep is None else keep & mask
        else:
            s = s + mask.to(s.dtype)
    if keep is not None:
        s = s.masked_fill(~keep, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    lse = lse.masked_fill(lse == float("-inf"), float("inf"))
    return s, lse


def _weights(q, k, p, seed, stream):
    """Dropout's weight of each probability: 1 / (1 - p) kept, 0 dropped."""
    shape = (q.shape[0], q.shape[1], q.shape[2], k.shape[2])
    u = philox.uniform(seed, stream, shape, q.device)
    keep_below = torch.tensor(1.0 - p, dtype=torch.float32).item()  # as the kernels compare
    return torch.where(u < keep_below, 1.0 / (1.0 - p), 0.0)


@torch.library.custom_op("cinn_like::attention_dropout", mutates_args=(),
                         tags=(torch.Tag.nondeterministic_seeded,))
def attention_dropout(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      mask: torch.Tensor | None, p: float, causal: bool, scale: float,
                      seed: torch.Tensor | None, stream: int
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    if seed is None:
        seed = torch.randint(0, philox.SEED_LIMIT, (1,), dtype=torch.int64, device=q.device)
    s, lse = _probabilities(q, k, mask, causal, scale)
    probs = torch.exp(s - lse.unsqueeze(-1)) * _weights(q, k, p, seed, stream)
    out = torch.matmul(probs.to(_wide(v).dtype), _wide(_expand_heads(v, q.shape[1])))
    streams = torch.full((1,), stream, dtype=torch.int64, device=q.device)
    return out.to(q.dtype), lse.float(), seed.clone(), streams


@attention_dropout.register_fake
def _(q, k, v, mask, p, causal, scale, seed, stream):
    b, h, lq = q.shape[:3]
    return (q.new_empty((b, h, lq, v.shape[3])), q.new_empty((b, h, lq), dtype=torch.float32),
            q.new_empty((1,), dtype=torch.int64), q.new_empty((1,), dtype=torch.int64))


@torch.library.custom_op("cinn_like::attention_dropout_backward", mutates_args=())
def attention_dropout_backward(grad: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                               v: torch.Tensor, mask: torch.Tensor | None, out: torch.Tensor,
                               lse: torch.Tensor, seed: torch.Tensor, stream: torch.Tensor,
                               p: float, causal: bool, scale: float
                               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dq, dk, dv): dV = (P∘W)ᵀ dO, dP = (dO Vᵀ)∘W, dS = P∘(dP − rowsum(dO∘O)), dQ = dS K·scale,
    dK = dSᵀ Q·scale, with P = exp(s − logsumexp) and W the dropout weights."""
    heads, kv_heads = q.shape[1], k.shape[1]
    s, _ = _probabilities(q, k, mask, causal, scale)
    probs = torch.exp(s - lse.to(s.dtype).unsqueeze(-1))
    w = _weights(q, k, p, seed, stream).to(s.dtype)
    do = _wide(grad)
    dv = torch.matmul((probs * w).transpose(-2, -1), do)
    dp = torch.matmul(do, _wide(_expand_heads(v, heads)).transpose(-2, -1)) * w
    ds = probs * (dp - (do * _wide(out)).sum(-1, keepdim=True))
    dq = torch.matmul(ds, _wide(_expand_heads(k, heads))) * scale
    dk = torch.matmul(ds.transpose(-2, -1), _wide(q)) * scale

    def fold(x):  # the query heads of a group summed into their key/value head
        b, _, length, d = x.shape
        return x.reshape(b, kv_heads, heads // kv_heads, length, d).sum(2)

    return dq.to(q.dtype), fold(dk).to(k.dtype), fold(dv).to(v.dtype)


@attention_dropout_backward.register_fake
def _(grad, q, k, v, mask, out, lse, seed, stream, p, causal, scale):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _setup_context(ctx, inputs, output):
    q, k, v, mask, p, causal, scale, _seed, _stream = inputs
    out, lse, seed, stream = output
    ctx.save_for_backward(q, k, v, mask, out, lse, seed, stream)
    ctx.args = (p, causal, scale)


def _backward(ctx, grad, _grad_lse, _grad_seed, _grad_stream):
    q, k, v, mask, out, lse, seed, stream = ctx.saved_tensors
    dq, dk, dv = attention_dropout_backward(grad, q, k, v, mask, out, lse, seed, stream,
                                            *ctx.args)
    return dq, dk, dv, None, None, None, None, None, None


attention_dropout.register_autograd(_backward, setup_context=_setup_context)


def arguments(node):
    """An fx call of attention_dropout or attention_dropout_backward: its arguments by name, in
    the schema's order."""
    names = [x.name for x in node.target._schema.arguments]
    given = dict(zip(names, node.args), **node.kwargs)
    return {n: given.get(n) for n in names}


def attention(q, k, v, mask, p, causal, scale):
    """The attention output of `attention_dropout` (scale None: 1 / sqrt(head dim))."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    return attention_dropout(q, k, v, mask, float(p), bool(causal), scale, None, 0)[0]
