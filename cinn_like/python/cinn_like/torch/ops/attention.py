"""Converters of scaled dot-product attention: every fused aten form AOTAutograd hands the
backend (the backend keeps them whole: see KEEP_WHOLE) becomes the cinn_like op `attention`
(a fused flash-attention kernel on GPUs, matmuls and a softmax on x86), and each backward form
becomes, on CUDA where _fused says so, the op `attention_grad` (one fused kernel) and a matmul
for dq, elsewhere cinn_like's matmuls and elementwise ops (_Grad), all from the saved logsumexp.

Forms, by where PyTorch picks them: `_scaled_dot_product_flash_attention_for_cpu` (CPU),
`_scaled_dot_product_cudnn_attention`, `_scaled_dot_product_efficient_attention` and
`_scaled_dot_product_flash_attention` (CUDA), and `_scaled_dot_product_attention_math`
(composite: normally decomposed before it reaches a backend). Masks (bool: true keeps a key,
or additive floats), is_causal (top-left aligned), scale and grouped-query heads (k and v with
fewer heads than q) are supported; dropout is refused in these forms: attention with dropout
reaches the backend as cinn_like's own ops (attention_dropout.py), converted at the end of this
file (the op's dropout drawn in the kernel, the backward drawing the same mask with
random_uniform from the forward's seed and stream). Outputs the forms carry beside the
attention and its logsumexp (random-number state, sequence offsets) are zero-filled int64
placeholders when read, since nothing here is random; the flash form's uint64 state cannot be
represented, so a graph that reads it (training) keeps that form in PyTorch. A query row with
no kept key gets output 0 and logsumexp +inf (PyTorch's kernels differ there), so that every
backward, ours or PyTorch's, recomputes its probabilities exp(s - logsumexp) as 0.
"""
import math
import operator

import torch

from .. import attention_dropout
from ..registry import Unsupported, converts, dtype_name, val

aten = torch.ops.aten

# The fused forms that the backend's decomposition table must not decompose into matmuls and a
# softmax (PyTorch's CPU decomposition also hands its backward the attention weights in place
# of the logsumexp).
KEEP_WHOLE = [aten._scaled_dot_product_flash_attention_for_cpu.default,
              aten._scaled_dot_product_flash_attention.default,
              aten._scaled_dot_product_efficient_attention.default,
              aten._scaled_dot_product_cudnn_attention.default]


def _used(n):
    """The indices of the node's outputs that some getitem reads."""
    return {u.args[1] for u in n.users if u.target == operator.getitem}


def _check(q, k, v, dropout_p, scale):
    """The scale to use; refuses dropout and other ranks than 4."""
    if dropout_p:
        raise Unsupported(f"dropout_p={dropout_p}: cinn_like runs attention without dropout only")
    for name, t in (("query", q), ("key", k), ("value", v)):
        if val(t).dim() != 4:
            raise Unsupported(f"{name} of rank {val(t).dim()}: attention takes [batch, heads, "
                              "length, head dim]")
    return float(scale) if scale is not None else 1.0 / math.sqrt(val(q).shape[-1])


def _attrs(scale, causal):
    return {"scale": scale, "causal": bool(causal)}


def _inputs(c, q, k, v, mask):
    return [c.tensor(q), c.tensor(k), c.tensor(v)] + ([c.tensor(mask)] if mask is not None else [])


def _zero_int64(c):
    """A rank-0 int64 placeholder (random-number state that dropout-free attention never uses)."""
    return c.op("fill", [], {"shape": [1], "value": 0.0, "dtype": "int64"})


def _forward(c, q, k, v, mask, dropout_p, causal, scale):
    """(out, logsumexp [B, H, Lq] float32) of the attention op."""
    s = _check(q, k, v, dropout_p, scale)
    return c.op("attention", _inputs(c, q, k, v, mask), _attrs(s, causal), num_outputs=2)


def _only_used(n, outs, what):
    """`outs` with None where nothing reads an output; refuses a read output that is None."""
    used = _used(n)
    for i in used:
        if i >= len(outs) or outs[i] is None:
            raise Unsupported(f"output {i} of {what} is read and cinn_like does not compute it")
    return [o if i in used else None for i, o in enumerate(outs)]


@converts(aten._scaled_dot_product_flash_attention_for_cpu.default)
def _flash_cpu(c, n):
    q, k, v = n.args[:3]
    dropout_p = n.args[3] if len(n.args) > 3 else 0.0
    causal = n.args[4] if len(n.args) > 4 else False
    out, lse = _forward(c, q, k, v, n.kwargs.get("attn_mask"), dropout_p, causal,
                        n.kwargs.get("scale"))
    return [out, lse]


@converts(aten._scaled_dot_product_efficient_attention.default)
def _efficient(c, n):
    a = list(n.args) + [None] * 4
    q, k, v, bias, _compute_lse = a[:5]
    dropout_p = a[5] or 0.0
    causal = a[6] or False
    out, lse = _forward(c, q, k, v, bias, dropout_p, causal, n.kwargs.get("scale"))
    # logsumexp is [B, H, Lq rounded up to 32] (or [B, H, 0] when not asked for).
    lq, padded = val(q).shape[2], val(n)[1].shape[2]
    if padded == 0:
        lse = None
    elif padded != lq:
        lse = c.op("pad", [lse], {"paddings": [0, 0, 0, 0, 0, padded - lq], "value": 0.0})
    used = _used(n)
    seed = _zero_int64(c) if 2 in used else None
    offset = _zero_int64(c) if 3 in used else None
    return _only_used(n, [out, lse, seed, offset], "_scaled_dot_product_efficient_attention")


@converts(aten._scaled_dot_product_cudnn_attention.default)
def _cudnn(c, n):
    a = list(n.args) + [None] * 4
    q, k, v, bias, _compute_lse = a[:5]
    dropout_p, causal, debug = a[5] or 0.0, a[6] or False, a[7] or False
    if debug:
        raise Unsupported("_scaled_dot_product_cudnn_attention with return_debug_mask")
    out, lse = _forward(c, q, k, v, bias, dropout_p, causal, n.kwargs.get("scale"))
    lse = c.op("reshape", [lse], {"shape": [int(d) for d in val(n)[1].shape]})  # [B, H, Lq, 1]
    used = _used(n)
    seed = _zero_int64(c) if 6 in used else None
    offset = _zero_int64(c) if 7 in used else None
    return _only_used(n, [out, lse, None, None, None, None, seed, offset, None],
                      "_scaled_dot_product_cudnn_attention")


@converts(aten._scaled_dot_product_flash_attention.default)
def _flash(c, n):
    a = list(n.args) + [None] * 3
    q, k, v = a[:3]
    dropout_p, causal, debug = a[3] or 0.0, a[4] or False, a[5] or False
    if debug:
        raise Unsupported("_scaled_dot_product_flash_attention with return_debug_mask")
    out, lse = _forward(c, q, k, v, None, dropout_p, causal, n.kwargs.get("scale"))
    return _only_used(n, [out, lse, None, None, None, None, None, None, None],
                      "_scaled_dot_product_flash_attention (its uint64 random-number state)")


@converts(aten._scaled_dot_product_attention_math.default)
def _math(c, n):
    a = list(n.args) + [None] * 5
    q, k, v, mask = a[:4]
    dropout_p, causal, dropout_mask = a[4] or 0.0, a[5] or False, a[6]
    if dropout_mask is not None:
        raise Unsupported("_scaled_dot_product_attention_math with a dropout mask")
    s = _check(q, k, v, dropout_p, n.kwargs.get("scale"))
    out, lse = _forward(c, q, k, v, mask, dropout_p, causal, s)
    weights = None
    if 1 in _used(n):  # the attention weights exp(s - logsumexp), of q's dtype
        g = _Grad(c, q, k, v, mask, s, causal, lse)
        weights = c.op("cast", [g.p], {"dtype": dtype_name(val(q).dtype)})
    return [out, weights]


class _Grad:
    """The backward of attention in cinn_like ops, in float32: the probabilities P recomputed
    from q, k and the logsumexp, then dV = Pᵀ dO, dP = dO Vᵀ, dS = P ∘ (dP − rowsum(dO ∘ O)),
    dQ = dS K · scale and dK = dSᵀ Q · scale. Grouped heads: the g query heads of a key/value
    head are taken as g·Lq rows of it ([B, Hkv, g·Lq, ·], a reshape), so the matmuls read k
    and v as they are and dK, dV come out summed over the group."""

    def __init__(self, c, q, k, v, mask, scale, causal, lse, dropout=None):
        """dropout: None, or (p, seed node, stream node) of attention_dropout: the probabilities'
        dropout weights W drawn again (then dV = (P∘W)ᵀ dO and dP = (dO Vᵀ)∘W)."""
        self.c, self.scale = c, scale
        qt, kt = val(q), val(k)
        # 16-bit attention: q kᵀ and dO vᵀ read 16-bit values, which TF32 holds exactly, so
        # they run on TF32 tensor cores; dV, dQ and dK read P and dS rounded to the 16-bit
        # type, as fused kernels (FlashAttention, cuDNN) round them, on 16-bit tensor cores.
        self.low = qt.dtype if qt.dtype in (torch.float16, torch.bfloat16) else None
        self.q_in, self.k_in = q, k
        self.b, self.h, self.lq = (int(d) for d in qt.shape[:3])
        self.hkv, self.lk = int(kt.shape[1]), int(kt.shape[2])
        if self.h % self.hkv:
            raise Unsupported(f"query heads {self.h} not a multiple of key heads {self.hkv}")
        self.d, self.dv = int(qt.shape[3]), int(val(v).shape[3])
        self.q, self.k, self.v = self.grouped(self.f32(q), self.d), self.f32(k), self.f32(v)
        scores = self.mul(self.split(self.mm(self.q, self.k, ty=True)), scale)
        keep = None
        if causal:  # key j <= query i
            rows = c.op("arange", [], {"end": float(self.lq), "dtype": "int64"})
            cols = c.op("arange", [], {"end": float(self.lk), "dtype": "int64"})
            keep = c.op("greater_equal", [c.op("reshape", [rows], {"shape": [self.lq, 1]}), cols])
        if mask is not None:
            if val(mask).dtype == torch.bool:
                m = c.tensor(mask)
                keep = m if keep is None else c.op("logical_and", [keep, m])
            else:
                scores = c.op("add", [scores, self.f32(mask)])
        lse = c.op("reshape", [lse], {"shape": [self.b, self.h, self.lq, 1]})
        self.p = c.op("exp", [c.op("sub", [scores, lse])])  # [B, H, Lq, Lk]
        if keep is not None:
            self.p = c.op("where", [keep, self.p, self.const(0.0)])
        self.w = None if dropout is None else self.dropout_weights(*dropout)

    def dropout_weights(self, p, seed, stream):
        """1 / (1 - p) where the forward kept a probability, else 0: random_uniform's numbers at
        (seed, stream) over [B, H, Lq, Lk], as the attention op drew them."""
        c = self.c
        u = c.op("random_uniform", [c.tensor(seed), c.tensor(stream)],
                 {"shape": [self.b, self.h, self.lq, self.lk], "dtype": "float32", "stream": 0})
        return c.op("where", [c.op("less", [u, self.const(1.0 - p)]),
                              self.const(1.0 / (1.0 - p)), self.const(0.0)])

    def f32(self, x):
        return self.c.tensor(x, torch.float32)

    def const(self, value):
        return self.c.op("fill", [], {"shape": [1], "value": float(value), "dtype": "float32"})

    def mul(self, x, s):
        return self.c.op("mul", [x, self.const(s)])

    def mm(self, x, y, tx=False, ty=False):
        return self.c.op("matmul", [x, y], {"transpose_x": tx, "transpose_y": ty,
                                            "allow_tf32": self.low is not None})

    def grouped(self, x, last):
        """[B, H, L, last] as [B, Hkv, g·L, last]."""
        if self.h == self.hkv:
            return x
        return self.c.op("reshape", [x], {"shape": [self.b, self.hkv, -1, last]})

    def split(self, x):
        """[B, Hkv, g·Lq, X] as [B, H, Lq, X]."""
        if self.h == self.hkv:
            return x
        return self.c.op("reshape", [x], {"shape": [self.b, self.h, self.lq, -1]})

    def grads(self, grad_out, out):
        """(dq, dk, dv, ds): ds [B, H, Lq, Lk] float32 is the gradient of the scores; dq, dk
        and dv are float32, or of q's 16-bit type for 16-bit attention."""
        c = self.c
        do = self.f32(grad_out)
        pw = self.p if self.w is None else c.op("mul", [self.p, self.w])
        do_mm = do
        if self.low:
            pw, do_mm = self.cast(pw), c.tensor(grad_out, self.low)
        dv = self.mm(self.grouped(pw, self.lk), self.grouped(do_mm, self.dv), tx=True)
        dp = self.split(self.mm(self.grouped(do, self.dv), self.v, ty=True))
        if self.w is not None:
            dp = c.op("mul", [dp, self.w])
        di = c.op("reduce_sum", [c.op("mul", [do, self.f32(out)])], {"axes": [3], "keepdim": True})
        ds = c.op("mul", [self.p, c.op("sub", [dp, di])])
        if self.low:  # dS·scale rounded once; the scale is not applied to a rounded product
            dsg = self.grouped(self.cast(self.mul(ds, self.scale)), self.lk)
            q, k = self.grouped(c.tensor(self.q_in), self.d), c.tensor(self.k_in)
            return self.split(self.mm(dsg, k)), self.mm(dsg, q, tx=True), dv, ds
        dsg = self.grouped(ds, self.lk)
        dq = self.mul(self.split(self.mm(dsg, self.k)), self.scale)
        dk = self.mul(self.mm(dsg, self.q, tx=True), self.scale)
        return dq, dk, dv, ds

    def cast(self, x):
        return self.c.op("cast", [x], {"dtype": dtype_name(self.low)})


def _fused(q, v):
    """Whether a backward is the op attention_grad (one fused kernel on the GPU) rather than
    _Grad's matmuls: on CUDA, float32, and float16 or bfloat16 where the kernel runs on tensor
    cores (sm_80 and later, head dims up to 64; hlir/ops/attention_grad_kernel.cc). On the CPU,
    _Grad's library matmuls (oneDNN) are faster than the op's decomposed compute; the kernel's
    CUDA-core form took 117-192 us a layer on gpt2:bf16 and llama:bf16 of tools/train_bench.py
    (H200) where _Grad's matmuls on tensor cores took about 60. A float32 backward takes the
    same GPU time either way and the kernel saves about five launches a layer."""
    t = val(q)
    if t.device.type != "cuda":
        return False
    if t.dtype == torch.float32:
        return True
    return (t.dtype in (torch.float16, torch.bfloat16)
            and torch.cuda.get_device_capability(t.device) >= (8, 0)
            and max(int(t.shape[-1]), int(val(v).shape[-1])) <= 64)


def _grad_op(c, grad_out, q, k, v, out, lse, mask, scale, causal, dropout=None):
    """[dq, dk, dv] through attention_grad, whose dqk [B, H, Lq, Lk] (the gradient of q kᵀ, of
    q's dtype) times k is dq (a grouped head's g query heads as g·Lq rows of its key head);
    dropout: None or (p, seed node, stream node)."""
    t = val(q).dtype
    inputs = [c.tensor(q), c.tensor(k), c.tensor(v), c.tensor(out, t), c.tensor(grad_out, t),
              c.tensor(lse, torch.float32) if isinstance(lse, torch.fx.Node) else lse]
    inputs += [c.tensor(mask)] if mask is not None else []
    attrs = _attrs(scale, causal)
    if dropout is not None:
        attrs["dropout"] = dropout[0]
        inputs += [c.tensor(dropout[1]), c.tensor(dropout[2])]
    dk, dv, dqk = c.op("attention_grad", inputs, attrs, num_outputs=3)
    b, h, lq, d = (int(x) for x in val(q).shape)
    hkv, lk = int(val(k).shape[1]), int(val(k).shape[2])
    if h != hkv:
        dqk = c.op("reshape", [dqk], {"shape": [b, hkv, -1, lk]})
    dq = c.op("matmul", [dqk, c.tensor(k)], {"transpose_x": False, "transpose_y": False,
                                             "allow_tf32": False})
    if h != hkv:
        dq = c.op("reshape", [dq], {"shape": [b, h, lq, d]})
    return [dq, dk, dv]


def _backward(c, grad_out, q, k, v, out, lse, mask, dropout_p, causal, scale, need_ds=False):
    """[dq, dk, dv, ds] of the dtypes of q, k, v (ds float32, or None unless `need_ds`);
    `lse` is the Program name of the logsumexp as [B, H, Lq]."""
    s = _check(q, k, v, dropout_p, scale)
    for t, name in ((grad_out, "grad_out"), (out, "out")):
        if not isinstance(t, torch.fx.Node):
            raise Unsupported(f"{name} is not a tensor")
    if _fused(q, v) and not need_ds:
        return _grad_op(c, grad_out, q, k, v, out, lse, mask, s, causal) + [None]
    g = _Grad(c, q, k, v, mask, s, causal, lse)
    dq, dk, dv, ds = g.grads(grad_out, out)
    cast = lambda x, like: c.op("cast", [x], {"dtype": dtype_name(val(like).dtype)})  # noqa: E731
    return [cast(dq, q), cast(dk, k), cast(dv, v), ds]


@converts(aten._scaled_dot_product_flash_attention_for_cpu_backward.default)
def _flash_cpu_backward(c, n):
    grad_out, q, k, v, out, lse, dropout_p, causal = n.args[:8]
    return _backward(c, grad_out, q, k, v, out, c.tensor(lse), n.kwargs.get("attn_mask"),
                     dropout_p, causal, n.kwargs.get("scale"))[:3]


def _rows(c, lse, q):
    """The logsumexp as [B, H, Lq] from the [B, H, Lq rounded up] or [B, H, Lq, 1] of a form."""
    b, h, lq = (int(d) for d in val(q).shape[:3])
    shape = [int(d) for d in val(lse).shape]
    name = c.tensor(lse)
    if len(shape) == 3 and shape[2] > lq:
        name = c.op("slice", [name], {"axes": [2], "starts": [0], "ends": [lq], "steps": [1]})
    elif len(shape) != 3 and shape != [b, h, lq, 1]:
        raise Unsupported(f"logsumexp of shape {shape} for queries {list(val(q).shape)}")
    return c.op("reshape", [name], {"shape": [b, h, lq]})


@converts(aten._scaled_dot_product_efficient_attention_backward.default)
def _efficient_backward(c, n):
    a = list(n.args) + [None] * 2
    grad_out, q, k, v, bias, out, lse, _seed, _offset, dropout_p, grad_input_mask = a[:11]
    causal = a[11] or False
    need_ds = bias is not None and grad_input_mask is not None and grad_input_mask[3]
    grads = _backward(c, grad_out, q, k, v, out, _rows(c, lse, q), bias, dropout_p, causal,
                      n.kwargs.get("scale"), need_ds)
    dbias = _reduce_to(c, grads[3], val(bias)) if need_ds else None
    return grads[:3] + [dbias]


def _reduce_to(c, x, like):
    """x [B, H, Lq, Lk] summed over the dims where `like` broadcasts, as like's shape and dtype."""
    shape = [int(d) for d in like.shape]
    full = [1] * (4 - len(shape)) + shape
    axes = [d for d in range(4) if full[d] == 1]
    if axes:
        x = c.op("reduce_sum", [x], {"axes": axes, "keepdim": True})
    x = c.op("reshape", [x], {"shape": shape or [1]})
    return c.op("cast", [x], {"dtype": dtype_name(like.dtype)})


@converts(aten._scaled_dot_product_cudnn_attention_backward.default)
def _cudnn_backward(c, n):
    a = list(n.args) + [None] * 2
    grad_out, q, k, v, out, lse, _seed, _offset, bias = a[:9]
    dropout_p, causal = a[13] or 0.0, a[14] or False
    return _backward(c, grad_out, q, k, v, out, _rows(c, lse, q), bias, dropout_p, causal,
                     n.kwargs.get("scale"))[:3]


@converts(aten._scaled_dot_product_flash_attention_backward.default)
def _flash_backward(c, n):
    grad_out, q, k, v, out, lse = n.args[:6]
    dropout_p, causal = n.args[10], n.args[11]
    return _backward(c, grad_out, q, k, v, out, c.tensor(lse), None, dropout_p, causal,
                     n.kwargs.get("scale"))[:3]


@converts(torch.ops.cinn_like.attention_dropout.default)
def _attention_dropout(c, n):
    a = attention_dropout.arguments(n)
    q, k, v, mask, seed = a["q"], a["k"], a["v"], a["mask"], a["seed"]
    if not isinstance(seed, torch.fx.Node):
        raise Unsupported("attention_dropout without the graph's seed (seeds.add_seeds)")
    s = _check(q, k, v, 0.0, a["scale"])
    stream = c.op("fill", [], {"shape": [1], "value": float(a["stream"]), "dtype": "int64"})
    attrs = dict(_attrs(s, a["causal"]), dropout=float(a["p"]))
    out, lse = c.op("attention", _inputs(c, q, k, v, mask) + [c.tensor(seed), stream], attrs,
                    num_outputs=2)
    # The seed output is the seed input (int64 [1]), which the partition returns as it is.
    return [out, lse, c.tensor(seed), stream]


@converts(torch.ops.cinn_like.attention_dropout_backward.default)
def _attention_dropout_backward(c, n):
    a = attention_dropout.arguments(n)
    q, k, v, out, grad = a["q"], a["k"], a["v"], a["out"], a["grad"]
    s = _check(q, k, v, 0.0, a["scale"])
    for t, name in ((grad, "grad"), (out, "out")):
        if not isinstance(t, torch.fx.Node):
            raise Unsupported(f"{name} is not a tensor")
    dropout = (float(a["p"]), a["seed"], a["stream"])
    if _fused(q, v):
        return _grad_op(c, grad, q, k, v, out, a["lse"], a["mask"], s, a["causal"], dropout)
    g = _Grad(c, q, k, v, a["mask"], s, a["causal"], c.tensor(a["lse"]), dropout=dropout)
    dq, dk, dv, _ = g.grads(grad, out)
    cast = lambda x, like: c.op("cast", [x], {"dtype": dtype_name(val(like).dtype)})  # noqa: E731
    return [cast(dq, q), cast(dk, k), cast(dv, v)]
