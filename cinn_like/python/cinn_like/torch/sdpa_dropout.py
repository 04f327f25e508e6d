"""Scaled dot-product attention with dropout, rewritten before AOTAutograd traces it.

The fused attention forms PyTorch picks on CUDA draw their dropout mask inside the kernel from
a random-number state of PyTorch's generator that their backward forms read again, which
cinn_like cannot reproduce; left as they are, such a call would stay in PyTorch and split the
training graph around it. Here, in Dynamo's graph, a call of F.scaled_dot_product_attention
whose dropout_p is a number in (0, 1) becomes cinn_like's own attention with dropout
(attention_dropout.py: one fused forward op and one backward op, the mask drawn from cinn_like's
Philox in both). Calls the op does not take (not of rank 4, heads that do not group, a float
mask that needs a gradient) become `attention_with_dropout` below instead: matmuls, a softmax
and F.dropout, which AOTAutograd differentiates op by op (the backward reads the saved mask).
Calls without dropout keep PyTorch's fused forms.
"""
import math

import torch
import torch.nn.functional as F

from . import attention_dropout


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


def fused_attention_with_dropout(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    """F.scaled_dot_product_attention as cinn_like's attention op with dropout."""
    return attention_dropout.attention(q, k, v, attn_mask, dropout_p, is_causal, scale)


_SDPA = (F.scaled_dot_product_attention, torch._C._nn.scaled_dot_product_attention)
_PARAMETERS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale",
               "enable_gqa")


def _fusible(args):
    """Whether attention_dropout takes a call with these arguments (by name)."""
    value = lambda n: n.meta.get("example_value") if isinstance(n, torch.fx.Node) else n  # noqa
    q, k, v = (value(args.get(n)) for n in _PARAMETERS[:3])
    mask = value(args.get("attn_mask"))
    tensors = (q, k, v)
    if not all(isinstance(t, torch.Tensor) and t.dim() == 4 for t in tensors):
        return False
    if q.shape[1] % k.shape[1] or k.shape[1] != v.shape[1]:
        return False
    if k.shape[1] != q.shape[1] and not args.get("enable_gqa", False):
        return False
    if mask is not None and (not isinstance(mask, torch.Tensor) or mask.requires_grad):
        return False
    scale = args.get("scale")
    return scale is None or isinstance(scale, (int, float))


def write_out(gm):
    """Rewrites gm's (Dynamo's graph) attention calls with dropout; returns how many."""
    count = 0
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target not in _SDPA:
            continue
        args = dict(zip(_PARAMETERS, node.args), **node.kwargs)
        p = args.get("dropout_p", 0.0)
        if isinstance(p, (int, float)) and 0 < p < 1 and isinstance(args.get("is_causal", False),
                                                                    bool):
            fused = _fusible(args)
            node.target = fused_attention_with_dropout if fused else attention_with_dropout
            count += 1
    if count:
        gm.recompile()
    return count
