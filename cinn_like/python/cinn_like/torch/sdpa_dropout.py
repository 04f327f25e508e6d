"""Scaled dot-product attention with dropout, written out before AOTAutograd traces it.

The fused attention forms PyTorch picks on CUDA draw their dropout mask inside the kernel, from
a random-number state that their backward forms read again; cinn_like's attention op has no
dropout, so such a call would stay in PyTorch and split the training graph around it. Here, in
Dynamo's graph (before AOTAutograd), a call of F.scaled_dot_product_attention whose dropout_p
is a nonzero number becomes `attention_with_dropout` below: matmuls, a softmax and F.dropout,
which AOTAutograd differentiates op by op (the backward reads the saved mask), so every part is
a cinn_like op and the dropout draws from cinn_like's Philox (seeds.py). Calls without dropout
keep the fused forms.
"""
import math

import torch
import torch.nn.functional as F


def attention_with_dropout(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                           enable_gqa=False):
    """F.scaled_dot_product_attention's meaning, as PyTorch documents it, in plain ops."""
    length, keys = q.size(-2), k.size(-2)
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    if enable_gqa and k.size(-3) != q.size(-3):
        group = q.size(-3) // k.size(-3)
        k, v = k.repeat_interleave(group, -3), v.repeat_interleave(group, -3)
    s = torch.matmul(q, k.transpose(-2, -1)) * scale
    keep = None
    if is_causal:
        keep = torch.ones(length, keys, dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            s = s.masked_fill(~attn_mask, float("-inf"))
        else:
            s = s + attn_mask
    p = torch.softmax(s, dim=-1)
    if attn_mask is not None:
        # A row with no key kept gives 0, as PyTorch's attention does. Which rows keep none is
        # the mask's business: reduced over the mask ([.., L, S], often without batch or
        # heads), not over the scores (a second pass over [B, H, L, S] beside the softmax).
        if attn_mask.dtype == torch.bool:
            kept = attn_mask if keep is None else attn_mask & keep
            dead = ~kept.any(dim=-1, keepdim=True)
        else:
            m = attn_mask if keep is None else attn_mask.masked_fill(~keep, float("-inf"))
            dead = torch.amax(m, dim=-1, keepdim=True) == float("-inf")
        p = p.masked_fill(dead, 0.0)
    return torch.matmul(F.dropout(p, dropout_p, training=True), v)


_SDPA = (F.scaled_dot_product_attention, torch._C._nn.scaled_dot_product_attention)


def write_out(gm):
    """Rewrites gm's (Dynamo's graph) attention calls with dropout; returns how many."""
    count = 0
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target not in _SDPA:
            continue
        p = node.kwargs.get("dropout_p", node.args[4] if len(node.args) > 4 else 0.0)
        if isinstance(p, (int, float)) and p > 0:
            node.target = attention_with_dropout
            count += 1
    if count:
        gm.recompile()
    return count
