"""Scaled dot-product attention through cinn_like: F.scaled_dot_product_attention with masks,
causal, scale and grouped-query heads, forward and backward through torch.compile against eager
on fresh random data with no op falling back; and the CUDA forms' converters (efficient, cuDNN,
flash: their argument lists, logsumexp layouts and extra outputs) on hand-built aten graphs that
the backend compiles for the CPU, against float64 math."""
import math
import operator
import unittest

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import torch.nn.functional as F
    import cinn_like.torch as ct
    from cinn_like.torch.backend import compile_graph
    from torch_util import compiled, devices

    aten = torch.ops.aten


def _delta(before):
    after = ct.stats()
    return {k: after[k] - before.get(k, 0) for k in after}


def _reference(q, k, v, mask=None, causal=False, scale=None):
    """float64 attention with grouped heads and PyTorch's mask semantics: (out, logsumexp)."""
    q, k, v = (t.double() for t in (q, k, v))
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = (q @ k.transpose(-1, -2)) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).tril().logical_not(),
                          float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask.double()
    lse = torch.logsumexp(s, -1)
    return torch.softmax(s, -1) @ v, lse


@needs_torch
class TorchAttentionTest(unittest.TestCase):
    def check(self, b=2, h=4, hkv=4, lq=7, lk=9, d=16, dv=None, dtype=torch.float32, mask=None,
              grad=True, tol=2e-5, **kw):
        dv = dv or d
        for dev in devices():
            gen = torch.Generator().manual_seed(torch.seed() % 2**31)
            make = lambda *s: torch.randn(*s, generator=gen, dtype=torch.float32).to(  # noqa: E731
                dev, dtype).requires_grad_(grad)
            q, k, v = make(b, h, lq, d), make(b, hkv, lk, d), make(b, hkv, lk, dv)
            m = None
            if mask == "bool":
                m = (torch.rand(lq, lk, generator=gen) > 0.3).to(dev)
                m[:, 0] = True  # every row keeps a key: eager's gradient is defined
            elif mask == "float":
                m = torch.randn(b, 1, lq, lk, generator=gen).to(dev, dtype)
            f = lambda q, k, v: F.scaled_dot_product_attention(  # noqa: E731
                q, k, v, attn_mask=m, enable_gqa=hkv != h, **kw)
            before = ct.stats()
            out = compiled(f)(q, k, v)
            want = f(q, k, v)
            torch.testing.assert_close(out, want, rtol=tol, atol=tol)
            if grad:
                g = torch.randn(out.shape, generator=gen).to(dev, dtype)
                got = torch.autograd.grad(out, (q, k, v), g)
                exp = torch.autograd.grad(want, (q, k, v), g)
                for name, a, e in zip("qkv", got, exp):
                    torch.testing.assert_close(a, e, rtol=tol, atol=tol, msg=f"d{name} [{dev}]")
            d_ = _delta(before)
            self.assertEqual(d_["ops_fallback"], 0, ct.fallback_report())
            self.assertGreater(d_["ops_compiled"], 0)

    def test_plain_forward_only(self):
        self.check(grad=False)

    def test_plain(self):
        self.check()

    def test_bool_mask(self):
        self.check(mask="bool")

    def test_float_mask_and_value_head_dim(self):
        self.check(mask="float", dv=12)

    def test_causal_with_scale(self):
        self.check(is_causal=True, scale=0.3, lq=9, lk=9)

    def test_grouped_query_heads(self):
        self.check(h=8, hkv=2, is_causal=True, lq=6, lk=6)

    def test_bfloat16(self):
        self.check(dtype=torch.bfloat16, mask="bool", tol=2e-2)

    def test_sixteen_bit_backward_matmuls_read_what_fused_kernels_read(self):
        # A 16-bit attention's backward, as FlashAttention and cuDNN compute it: q kᵀ and dO vᵀ
        # read 16-bit values, which TF32 holds, so they may take TF32 tensor cores (matmul's
        # allow_tf32); dV = Pᵀ dO, dQ = dS K and dK = dSᵀ Q read P and dS rounded to the
        # 16-bit type (16-bit tensor cores, float32 accumulation). A float32 attention's
        # backward keeps float32 products.
        from unittest import mock  # noqa: PLC0415
        from cinn_like.torch import kernel, plan_cache  # noqa: PLC0415
        plan_cache.enabled = False  # a stored plan would skip the conversion this test watches
        self.addCleanup(setattr, plan_cache, "enabled", True)
        for dtype in (torch.bfloat16, torch.float16, torch.float32):
            kinds = []

            def build(sub, real=kernel.build_program):
                program = real(sub)
                d = program[0].to_dict()
                dtypes = {x["name"]: x["dtype"] for x in d["inputs"]}
                for ins in d["instructions"]:
                    if ins["op"] == "cast":
                        dtypes[ins["outputs"][0]] = ins["attrs"]["dtype"]["string"]
                    if ins["op"] == "matmul":
                        operands = {dtypes.get(x, "float32") for x in ins["inputs"]}
                        tf32 = ins["attrs"].get("allow_tf32", {}).get("bool", False)
                        kinds.append((tuple(sorted(operands)), tf32))
                return program
            q, k, v = (torch.randn(2, 4, 8, 16, dtype=dtype, requires_grad=True)
                       for _ in range(3))
            with mock.patch.object(kernel, "build_program", build):
                out = compiled(lambda q, k, v: F.scaled_dot_product_attention(q, k, v))(q, k, v)
                torch.autograd.grad(out.float().sum(), (q, k, v))
            name = str(dtype).split(".")[1]
            if dtype == torch.float32:
                self.assertEqual(kinds, [(("float32",), False)] * 5)
            else:
                self.assertEqual(sorted(kinds), sorted([(("float32",), True)] * 2 +
                                                       [((name,), True)] * 3), dtype)

    def test_gpt2_style_module_training(self):
        """A causal attention block whose backward runs through cinn_like: 3 SGD steps."""
        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.qkv, self.proj = torch.nn.Linear(32, 96), torch.nn.Linear(32, 32)

            def forward(self, x):
                b, t, _ = x.shape
                q, k, v = (z.view(b, t, 4, 8).transpose(1, 2) for z in self.qkv(x).split(32, 2))
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                return self.proj(y.transpose(1, 2).reshape(b, t, 32)).pow(2).sum() / (b * t)
        torch.manual_seed(0)
        eager = Block()
        mine = Block()
        mine.load_state_dict(eager.state_dict())
        cm = compiled(mine)
        before = ct.stats()
        for _ in range(3):
            x = torch.randn(2, 10, 32)
            for model in (eager, cm):
                model.zero_grad()
                model(x).backward()
            for pe, pc in zip(eager.parameters(), mine.parameters()):
                scale = pe.grad.abs().max().item()
                torch.testing.assert_close(pc.grad, pe.grad, rtol=1e-4, atol=1e-5 * scale)
                with torch.no_grad():
                    pe -= 0.01 * pe.grad
                    pc -= 0.01 * pc.grad
        self.assertEqual(_delta(before)["ops_fallback"], 0, ct.fallback_report())


def _meta(t):
    return t if isinstance(t, torch.Tensor) else tuple(t)


def _graph(target, args, kwargs, vals, inputs, read=None):
    """An aten graph calling `target` once on placeholders (`inputs`: name -> tensor; an arg
    that is a str names one), returning its outputs `read` (default: every tensor) through
    getitem; compiled by the backend (the node's metadata is `vals`): (its result on `inputs`,
    the change of cinn_like.torch.stats())."""
    g = torch.fx.Graph()
    nodes = {}
    for name, t in inputs.items():
        nodes[name] = g.placeholder(name)
        nodes[name].meta["val"] = t
    sub = lambda a: nodes[a] if isinstance(a, str) else a  # noqa: E731
    call = g.call_function(target, tuple(sub(a) for a in args),
                           {k: sub(a) for k, a in kwargs.items()})
    call.meta["val"] = tuple(vals)
    outs = []
    for i, v in enumerate(vals):
        if isinstance(v, torch.Tensor) and (read is None or i in read):
            item = g.call_function(operator.getitem, (call, i))
            item.meta["val"] = v
            outs.append(item)
    g.output(tuple(outs))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    before = ct.stats()
    fn = compile_graph(gm, list(inputs.values()))
    result = fn(list(inputs.values()))
    return result, _delta(before)


@needs_torch
class CudaFormConvertersTest(unittest.TestCase):
    """The CUDA aten forms, compiled for the CPU: their converters run the same Program."""

    def setUp(self):
        torch.manual_seed(torch.seed() % 2**31)
        self.b, self.h, self.hkv, self.lq, self.lk, self.d = 2, 4, 2, 37, 20, 8
        self.q = torch.randn(self.b, self.h, self.lq, self.d)
        self.k = torch.randn(self.b, self.hkv, self.lk, self.d)
        self.v = torch.randn(self.b, self.hkv, self.lk, self.d)
        self.bias = torch.randn(self.b, 1, self.lq, self.lk)
        self.scale = 0.4

    def want(self, causal=False, bias=None):
        return _reference(self.q, self.k, self.v, bias, causal, self.scale)

    def check_forward(self, target, args, vals, lse_shape, causal=False, bias=None, read=None):
        inputs = {"q": self.q, "k": self.k, "v": self.v}
        if bias is not None:
            inputs["bias"] = bias
        got, d = _graph(target, args, {"scale": self.scale}, vals, inputs, read)
        self.assertEqual(d["ops_fallback"], 0, ct.fallback_report())
        out, lse = self.want(causal, bias)
        torch.testing.assert_close(got[0].double(), out, rtol=1e-5, atol=1e-5)
        self.assertEqual(list(got[1].shape), lse_shape)
        torch.testing.assert_close(got[1].reshape(self.b, self.h, -1)[..., :self.lq].double(), lse,
                                   rtol=1e-5, atol=1e-5)
        return got

    def test_efficient_forward_pads_logsumexp_to_32(self):
        i64 = torch.empty((), dtype=torch.int64)
        out = torch.empty(self.b, self.h, self.lq, self.d)
        lse = torch.empty(self.b, self.h, 64)  # ceil(37 / 32) * 32
        got = self.check_forward(aten._scaled_dot_product_efficient_attention.default,
                                 ("q", "k", "v", "bias", True, 0.0, True), [out, lse, i64, i64],
                                 [self.b, self.h, 64], causal=True, bias=self.bias)
        self.assertEqual(got[2].shape, torch.Size([]))
        self.assertEqual(got[2].dtype, torch.int64)

    def test_cudnn_forward_logsumexp_has_a_trailing_one(self):
        i64 = torch.empty((), dtype=torch.int64)
        out = torch.empty(self.b, self.h, self.lq, self.d)
        lse = torch.empty(self.b, self.h, self.lq, 1)
        self.check_forward(aten._scaled_dot_product_cudnn_attention.default,
                           ("q", "k", "v", None, True), [out, lse, None, None, self.lq, self.lk,
                                                         i64, i64, None],
                           [self.b, self.h, self.lq, 1])

    def flash_vals(self):
        """The flash form's outputs as PyTorch's meta function makes them on CUDA."""
        return [torch.empty(self.b, self.h, self.lq, self.d), torch.empty(self.b, self.h, self.lq),
                None, None, self.lq, self.lk, torch.empty(2, dtype=torch.uint64, device="meta"),
                torch.empty((), dtype=torch.uint64, device="meta"), torch.empty(0)]

    def test_flash_forward(self):
        self.check_forward(aten._scaled_dot_product_flash_attention.default,
                           ("q", "k", "v", 0.0, True), self.flash_vals(),
                           [self.b, self.h, self.lq], causal=True, read=[0, 1])

    def test_flash_forward_whose_random_state_is_read_stays_in_pytorch(self):
        g = torch.fx.Graph()
        ins = []
        for name, t in (("q", self.q), ("k", self.k), ("v", self.v)):
            ins.append(g.placeholder(name))
            ins[-1].meta["val"] = t
        call = g.call_function(aten._scaled_dot_product_flash_attention.default, (*ins, 0.0))
        call.meta["val"] = tuple(self.flash_vals())
        g.call_function(operator.getitem, (call, 6)).meta["val"] = self.flash_vals()[6]
        from cinn_like.torch.partition import check_node  # noqa: PLC0415
        self.assertIn("output 6 of _scaled_dot_product_flash_attention (its uint64 random-number "
                      "state) is read", check_node(call))

    def test_dropout_is_refused(self):
        out = torch.empty(self.b, self.h, self.lq, self.d)
        lse = torch.empty(self.b, self.h, self.lq)
        g = torch.fx.Graph()
        ins = []
        for name, t in (("q", self.q), ("k", self.k), ("v", self.v)):
            ins.append(g.placeholder(name))
            ins[-1].meta["val"] = t
        call = g.call_function(aten._scaled_dot_product_flash_attention_for_cpu.default,
                               (*ins, 0.1, False))
        call.meta["val"] = (out, lse)
        from cinn_like.torch.partition import check_node  # noqa: PLC0415
        self.assertIn("dropout_p=0.1", check_node(call))

    def check_backward(self, target, args, lse, causal=False, bias=None, n_out=3):
        q, k, v = (t.double().requires_grad_() for t in (self.q, self.k, self.v))
        b = bias.double().requires_grad_() if bias is not None else None
        out, _ = _reference(q, k, v, b, causal, self.scale)
        grad_out = torch.randn(out.shape)
        wanted = torch.autograd.grad(out, [q, k, v] + ([b] if b is not None else []),
                                     grad_out.double())
        inputs = {"grad_out": grad_out, "q": self.q, "k": self.k, "v": self.v,
                  "out": out.detach().float(), "lse": lse,
                  "seed": torch.zeros((), dtype=torch.int64),
                  "offset": torch.zeros((), dtype=torch.int64)}
        if bias is not None:
            inputs["bias"] = bias
        vals = [self.q, self.k, self.v] + ([bias] if n_out == 4 else [])
        got, d = _graph(target, args, {"scale": self.scale}, vals, inputs)
        self.assertEqual(d["ops_fallback"], 0, ct.fallback_report())
        for name, a, e in zip(["dq", "dk", "dv", "dbias"], got, wanted):
            torch.testing.assert_close(a.double(), e, rtol=1e-4, atol=1e-4, msg=name)

    def lse(self, causal=False, bias=None):
        return self.want(causal, bias)[1].float()

    def test_efficient_backward_with_bias_gradient(self):
        lse = torch.nn.functional.pad(self.lse(True, self.bias), (0, 64 - self.lq))
        self.check_backward(aten._scaled_dot_product_efficient_attention_backward.default,
                            ("grad_out", "q", "k", "v", "bias", "out", "lse", "seed", "offset",
                             0.0, [True, True, True, True], True), lse, causal=True,
                            bias=self.bias, n_out=4)

    def test_cudnn_backward(self):
        lse = self.lse(False, self.bias).unsqueeze(-1)
        self.check_backward(aten._scaled_dot_product_cudnn_attention_backward.default,
                            ("grad_out", "q", "k", "v", "out", "lse", "seed", "offset", "bias",
                             None, None, self.lq, self.lk, 0.0, False), lse, bias=self.bias)

    def test_flash_backward(self):
        self.check_backward(aten._scaled_dot_product_flash_attention_backward.default,
                            ("grad_out", "q", "k", "v", "out", "lse", None, None, self.lq,
                             self.lk, 0.0, True, "seed", "offset"), self.lse(True), causal=True)

    def test_backward_forms_as_attention_grad(self):
        # On CUDA the backward forms become the op attention_grad (one fused kernel) and a
        # matmul for dq; here the op's decomposed compute runs them on the CPU, grouped heads
        # with a float bias and causal, against float64 autograd.
        from unittest import mock  # noqa: PLC0415
        from cinn_like.torch import plan_cache  # noqa: PLC0415
        from cinn_like.torch.ops import attention as forms  # noqa: PLC0415
        plan_cache.enabled = False  # a stored plan would skip the conversion
        self.addCleanup(setattr, plan_cache, "enabled", True)
        with mock.patch.object(forms, "_fused", lambda q, v: True), \
                mock.patch.object(forms, "_grad_op", wraps=forms._grad_op) as grad_op:
            self.test_cudnn_backward()
            self.test_flash_backward()
        self.assertEqual(grad_op.call_count, 2)


if __name__ == "__main__":
    unittest.main()
