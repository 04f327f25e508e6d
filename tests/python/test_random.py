"""Random ops (issue 49): the Program op random_uniform against a numpy Philox4x32-10 written
here, bit for bit on x86 and in CUDA source (and the PyTorch spelling of the eager forms,
cinn_like/torch/philox.py); dropout, rand_like and bernoulli through torch.compile: compiled
whole (one forward and one backward partition, no fallback), the same numbers from the same
torch.manual_seed and new ones at each call, the backward through the forward's mask; attention
with dropout as cinn_like's fused op, whose backward draws the forward's mask again."""
import os
import unittest
from unittest import mock

import numpy as np

import cinn_like
from api_util import files_ending, saved_cuda_sources
from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import torch.nn.functional as F
    import cinn_like.torch as ct
    from cinn_like.torch import attention_dropout, kernel, philox
    from torch_util import compiled, devices


def philox_uniform(seed, stream, index):
    """Philox4x32-10's first word at counter (index, stream), key seed, as a float32 uniform:
    numpy's uint64 arithmetic, independent of the library's three spellings."""
    m = np.uint64(0xFFFFFFFF)
    index = np.asarray(index, np.uint64)
    c0, c1 = index & m, index >> np.uint64(32)
    c2 = np.full_like(c0, np.uint64(stream) & m)
    c3 = np.full_like(c0, np.uint64(stream) >> np.uint64(32))
    k0, k1 = np.uint64(seed) & m, np.uint64(seed) >> np.uint64(32)
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & m,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & m)
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m, (k1 + np.uint64(0xBB67AE85)) & m
    return (c0 >> np.uint64(8)).astype(np.float32) * np.float32(2.0 ** -24)


def uniform_program(shape, dtype="float32", stream=0):
    b = cinn_like.ProgramBuilder()
    seed = b.input("seed", "int64", [1])
    b.output(b.op("random_uniform", [seed], {"shape": shape, "dtype": dtype, "stream": stream}))
    return b


class RandomUniformTest(unittest.TestCase):
    def test_x86_equals_philox_bit_for_bit(self):
        rng = np.random.default_rng()
        for shape, stream in (([5, 7], 0), ([33, 200], 5), ([4096], 1 << 40)):
            m = cinn_like.compile(uniform_program(shape, stream=stream), "x86", "u")
            seed = int(rng.integers(0, 2**53))
            out = np.full(shape, np.nan, np.float32)
            m(np.array([seed], np.int64), out)
            want = philox_uniform(seed, stream, np.arange(out.size)).reshape(shape)
            np.testing.assert_array_equal(out, want, err_msg=f"seed {seed}, stream {stream}")
            self.assertTrue(0.45 < out.mean() < 0.55 or out.size < 100)

    def test_other_dtypes_round_the_float32_uniform(self):
        m = cinn_like.compile(uniform_program([9, 9], "float64", 2), "x86", "u64")
        out = np.empty((9, 9), np.float64)
        m(np.array([12345], np.int64), out)
        np.testing.assert_array_equal(out, philox_uniform(12345, 2, np.arange(81))
                                      .reshape(9, 9).astype(np.float64))

    def test_errors_name_the_op_and_the_seed(self):
        b = cinn_like.ProgramBuilder()
        seed = b.input("seed", "int32", [1])
        b.output(b.op("random_uniform", [seed], {"shape": [4]}))
        with self.assertRaisesRegex(cinn_like.CinnLikeError,
                                    r"op random_uniform: seed \(input 0, int32\[1\]\) must be one "
                                    r"int64 element"):
            cinn_like.compile(b, "x86", "bad")
        with self.assertRaisesRegex(cinn_like.CinnLikeError, "must be a float type"):
            cinn_like.compile(uniform_program([4], "int32"), "x86", "bad2")

    def test_cuda_source_defines_philox_and_vectorizes(self):
        with saved_cuda_sources() as d:
            try:
                cinn_like.compile(uniform_program([1024, 256], "float16"), "cuda -arch=sm_90",
                                  "cu")
            except cinn_like.CinnLikeError as e:
                if "not available" in str(e) or "unavailable" in str(e):
                    self.skipTest(f"no CUDA target in this build: {e}")
                self.assertRegex(str(e), "CUDA driver|loading the CUDA module")
            sources = files_ending(d, ".cu")
            self.assertTrue(sources, os.listdir(d))
            with open(sources[0]) as f:
                text = f.read()
            self.assertIn("float cinn_like_philox_uniform(int64_t seed", text)
            self.assertIn("0xD2511F53u", text)
            self.assertGreaterEqual(text.count("cinn_like_philox_uniform("), 3, text[-2000:])
            with open(files_ending(d, ".ptx")[0]) as f:
                ptx = f.read()
            # 32-bit high and low products, never the 64-bit multiplies of a widened product.
            self.assertIn("mul.hi.u32", ptx)
            self.assertNotIn("mul.lo.s64", ptx)


@needs_torch
class TorchRandomTest(unittest.TestCase):
    def step(self, model, x):
        out = model(x)
        loss = (out * out).sum()
        loss.backward()
        return out, loss

    def test_dropout_compiles_whole_and_is_reproducible(self):
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = torch.nn.Linear(64, 64), torch.nn.Linear(64, 64)

            def forward(self, x):
                return self.b(F.dropout(torch.relu(self.a(x)), 0.25, self.training))

        for dev in devices():
            torch.manual_seed(0)
            net = Net().train().to(dev)
            x = torch.randn(32, 64, device=dev, requires_grad=True)
            cnet = compiled(net)
            ct.reset()
            runs = []
            for _ in range(2):
                torch.manual_seed(7)
                runs.append([self.step(cnet, x)[1].item() for _ in range(3)])
                x.grad = None
            s = ct.stats()
            self.assertEqual(s["ops_fallback"], 0, ct.fallback_report())
            self.assertEqual(s["partitions"], 2, "one forward and one backward partition")
            self.assertEqual(runs[0], runs[1], f"[{dev}] the same seed gives the same losses")
            self.assertEqual(len(set(runs[0])), 3, f"[{dev}] each call draws new numbers")

    def test_dropout_mask_statistics_and_backward(self):
        p = 0.3

        def f(x):
            return F.dropout(x, p, True) * 2.0

        for dev in devices():
            x = torch.randn(256, 512, device=dev, requires_grad=True)
            cf = compiled(f)
            ct.reset()
            torch.manual_seed(1)
            y = cf(x)
            g = torch.randn_like(y)
            y.backward(g)
            self.assertEqual(ct.stats()["ops_fallback"], 0, ct.fallback_report())
            kept = y != 0
            frac = kept.float().mean().item()
            self.assertAlmostEqual(frac, 1 - p, delta=0.01, msg=dev)  # 131072 draws: sd 0.0013
            scale = 2.0 / (1 - p)
            torch.testing.assert_close(y[kept], (x * scale)[kept].detach())
            # The backward reads the forward's mask: the gradient is zero exactly where y is.
            want = torch.where(kept, g * scale, torch.zeros_like(g))
            torch.testing.assert_close(x.grad, want)

    def test_rand_like_and_bernoulli(self):
        def f(x):
            return torch.rand_like(x) + torch.bernoulli(x, 0.75) * 10

        for dev in devices():
            x = torch.zeros(64, 128, device=dev)
            cf = compiled(f)
            ct.reset()
            with torch.no_grad():
                torch.manual_seed(3)
                a = cf(x)
                torch.manual_seed(3)
                b = cf(x)
                c = cf(x)
            self.assertEqual(ct.stats()["ops_fallback"], 0, ct.fallback_report())
            torch.testing.assert_close(a, b, rtol=0, atol=0)
            self.assertFalse(torch.equal(a, c))
            u, hit = a % 10, a >= 10
            self.assertTrue(bool(((u >= 0) & (u < 1)).all()))
            self.assertAlmostEqual(hit.float().mean().item(), 0.75, delta=0.02, msg=dev)
            self.assertAlmostEqual(u.mean().item(), 0.5, delta=0.02, msg=dev)


    def test_sixteen_bit_dropout_scales_in_float32_and_uniforms_stay_below_one(self):
        for dt in (torch.bfloat16, torch.float16):
            x = torch.randn(128, 256).to(dt)
            ct.reset()
            torch.manual_seed(2)
            y = compiled(lambda x: F.dropout(x, 0.1, True))(x)
            self.assertEqual(ct.stats()["ops_fallback"], 0, ct.fallback_report())
            kept = y != 0
            # PyTorch's rounding: x * (1 / 0.9) in float32, rounded once (bfloat16 1.109375 was
            # off by 2^-9 of the value).
            want = (x.float() * (1 / 0.9)).to(dt)
            torch.testing.assert_close(y[kept], want[kept], rtol=0, atol=0)
            with torch.no_grad():
                u = compiled(lambda x: torch.rand_like(x))(torch.empty(1 << 20, dtype=dt))
            self.assertLess(float(u.max()), 1.0, dt)
            self.assertGreaterEqual(float(u.min()), 0.0)

    def test_attention_with_dropout_and_masks_keeps_pytorchs_meaning(self):
        # A bool mask with a row that keeps no key (PyTorch gives 0 there), an additive mask,
        # an explicit scale; p = 1e-9 keeps every element (see below).
        q, k, v = (torch.randn(2, 2, 5, 8) for _ in range(3))
        keep = torch.rand(5, 5) > 0.3
        keep[1] = False
        bias = torch.randn(2, 1, 5, 5)
        dead_bias = bias.clone()
        dead_bias[1, 0, 3] = float("-inf")  # a row with no key, in one batch element only
        for mask in (keep, bias, dead_bias):
            want = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.7)
            ct.reset()
            got = compiled(lambda q, k, v: F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=1e-9, scale=0.7))(q, k, v)
            self.assertEqual(ct.stats()["ops_fallback"], 0, ct.fallback_report())
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)

    def test_torch_philox_equals_numpy_philox_bit_for_bit(self):
        rng = np.random.default_rng()
        for shape, stream in (([5, 7], 0), ([3, 4, 50], 5), ([4096], 1 << 40)):
            seed = int(rng.integers(0, 2**53))
            got = philox.uniform(torch.tensor([seed]), stream, shape, "cpu").numpy()
            want = philox_uniform(seed, stream, np.arange(got.size)).reshape(shape)
            np.testing.assert_array_equal(got, want, err_msg=f"seed {seed}, stream {stream}")

    def test_torch_philox_draws_in_chunks_the_same_uniforms(self):
        # Drawn a chunk at a time (the eager fallback of a large attention would otherwise hold
        # ten int64 temporaries of B * H * L * L elements): chunk edges inside the draw, a last
        # partial chunk, indices past 2^32 (the counter's second word) in a later chunk.
        seed = int(np.random.default_rng().integers(0, 2**53))
        whole = philox.uniform(seed, 3, [2500], "cpu").numpy()
        saved = philox.CHUNK
        try:
            philox.CHUNK = 1000
            chunked = philox.uniform(seed, 3, [2500], "cpu").numpy()
        finally:
            philox.CHUNK = saved
        np.testing.assert_array_equal(chunked, whole)
        np.testing.assert_array_equal(whole, philox_uniform(seed, 3, np.arange(2500)))
        far = philox._draw(seed, 3, torch.arange(2**32 - 2, 2**32 + 2, dtype=torch.int64))
        np.testing.assert_array_equal(
            far.numpy(), philox_uniform(seed, 3, np.arange(2**32 - 2, 2**32 + 2)))

    def test_attention_dropout_ops_backward_is_autograd_of_its_meaning(self):
        # The eager forms (which run where cinn_like does not take a call) against autograd of
        # the op's meaning in plain ops with the same Philox weights: grouped heads, a bool
        # mask with a dead row, causal, p = 0.3.
        q = torch.randn(2, 4, 9, 8, requires_grad=True)
        k, v = (torch.randn(2, 2, 11, 8, requires_grad=True) for _ in range(2))
        mask = torch.rand(9, 11) > 0.3
        mask[4] = False
        seed, p, scale = torch.tensor([12345]), 0.3, 0.4
        out, lse, seed_out, stream = attention_dropout.attention_dropout(
            q, k, v, mask, p, True, scale, seed, 2)
        self.assertEqual((int(seed_out), int(stream)), (12345, 2))
        g = torch.randn_like(out)
        grads = torch.autograd.grad(out, (q, k, v), g)
        s = torch.matmul(q, k.repeat_interleave(2, 1).transpose(-2, -1)) * scale
        keep = mask & torch.ones(9, 11, dtype=torch.bool).tril()
        probs = torch.softmax(s.masked_fill(~keep, float("-inf")), -1).nan_to_num(0.0)
        u = philox.uniform(seed, 2, (2, 4, 9, 11), "cpu")
        w = torch.where(u < 0.7, 1 / 0.7, 0.0)
        self.assertTrue(0.2 < float((w == 0).float().mean()) < 0.4)
        want = torch.matmul(probs * w, v.repeat_interleave(2, 1))
        torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
        self.assertTrue(torch.all(out[:, :, 4] == 0) and torch.all(lse[:, :, 4] == float("inf")))
        for a, b in zip(grads, torch.autograd.grad(want, (q, k, v), g)):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)

    def test_attention_with_dropout_is_one_fused_op_saving_no_scores(self):
        # Compiled forward and backward against the eager op from the same torch.manual_seed
        # (the seed the graph draws is the one the eager op draws): the fused kernel's mask
        # (forward) and random_uniform's (backward) are the eager Philox's. Nothing of
        # [B, H, L, L] is saved for the backward (the written-out form saved the mask and the
        # probabilities).
        for dev in devices():
            q, k, v = (torch.randn(2, 4, 16, 8, device=dev, requires_grad=True) for _ in range(3))
            g = torch.randn(2, 4, 16, 8, device=dev)
            saved, written = [], []
            ct.reset()
            cf = compiled(lambda q, k, v: F.scaled_dot_product_attention(
                q, k, v, dropout_p=0.3, is_causal=True))
            torch.manual_seed(11)

            def build(sub, real=kernel.build_program):  # the Program results of each partition
                program = real(sub)
                written.extend(tuple(o[2].shape) for o in program[2] if o[0] == "prog")
                return program
            with mock.patch.object(kernel, "build_program", build), \
                    torch.autograd.graph.saved_tensors_hooks(
                        lambda t: saved.append(tuple(t.shape)) or t, lambda t: t):
                got = cf(q, k, v)
            grads = torch.autograd.grad(got, (q, k, v), g)
            self.assertEqual(ct.stats()["ops_fallback"], 0, ct.fallback_report())
            self.assertTrue(saved, dev)
            self.assertNotIn((2, 4, 16, 16), saved, dev)
            # The seed is saved as the graph drew it (the partition returns its input): the one
            # tensor of one element the forward writes is the stream (a constant, saved for the
            # backward, which AOTAutograd traced before seeds.add_seeds numbered the streams).
            self.assertEqual(saved.count((1,)), 2, (dev, saved))
            self.assertTrue(written, dev)
            self.assertEqual(written.count((1,)), 1, (dev, written))
            torch.manual_seed(11)
            want = attention_dropout.attention(q, k, v, None, 0.3, True, None)
            tol = dict(rtol=1e-4, atol=1e-5)
            torch.testing.assert_close(got, want, **tol, msg=dev)
            for a, b in zip(grads, torch.autograd.grad(want, (q, k, v), g)):
                torch.testing.assert_close(a, b, **tol, msg=dev)

    def test_attention_dropout_calls_the_fused_op_does_not_take_are_written_out(self):
        # A float mask that needs a gradient (the fused op's backward gives none): matmuls, a
        # softmax and F.dropout, compiled whole; p = 1e-9 keeps every element, so results and
        # gradients (the mask's included) equal PyTorch's attention without dropout.
        for dev in devices():
            q, k, v = (torch.randn(2, 2, 8, 16, device=dev, requires_grad=True) for _ in range(3))
            bias = torch.randn(2, 1, 8, 8, device=dev, requires_grad=True)
            g = torch.randn(2, 2, 8, 16, device=dev)
            fn = lambda q, k, v, b, p: F.scaled_dot_product_attention(  # noqa: E731
                q, k, v, attn_mask=b, dropout_p=p)
            want = fn(q, k, v, bias, 0.0)
            want_grads = torch.autograd.grad(want, (q, k, v, bias), g)
            ct.reset()
            got = compiled(lambda q, k, v, b: fn(q, k, v, b, 1e-9))(q, k, v, bias)
            grads = torch.autograd.grad(got, (q, k, v, bias), g)
            self.assertEqual(ct.stats()["ops_fallback"], 0, ct.fallback_report())
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
            for a, b in zip(grads, want_grads):
                torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)

    def test_two_attentions_with_dropout_draw_their_own_masks_in_the_backward(self):
        # Each random op of a graph gets a stream of its own (seeds.add_seeds, in graph order:
        # 0, then 1); the backward of each must draw its forward's mask again, with its stream.
        # Against the eager ops given the graph's seed (drawn as philox_seed draws it, from the
        # same torch.manual_seed) and those streams, gradients included.
        q, k, v = (torch.randn(2, 2, 16, 8, requires_grad=True) for _ in range(3))
        g = torch.randn(2, 2, 16, 8)
        op = attention_dropout.attention_dropout

        def f(q, k, v):
            h = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3)
            return F.scaled_dot_product_attention(h, k, v, dropout_p=0.3)

        ct.reset()
        torch.manual_seed(5)
        got = compiled(f)(q, k, v)
        grads = torch.autograd.grad(got, (q, k, v), g)
        self.assertEqual(ct.stats()["ops_fallback"], 0, ct.fallback_report())
        torch.manual_seed(5)
        seed = torch.randint(0, philox.SEED_LIMIT, (1,), dtype=torch.int64)
        scale = 1.0 / 8 ** 0.5
        h = op(q, k, v, None, 0.3, False, scale, seed, 0)[0]
        want = op(h, k, v, None, 0.3, False, scale, seed, 1)[0]
        want_grads = torch.autograd.grad(want, (q, k, v), g)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
        for a, b in zip(grads, want_grads):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)

    def test_a_callers_own_seed_for_attention_dropout_is_kept(self):
        # attention_dropout called with a seed of the caller's: compiled, it draws what the
        # eager op draws from that seed (the graph's seed is for calls without one).
        q, k, v = (torch.randn(1, 2, 8, 16) for _ in range(3))
        seed = torch.tensor([987654321])
        op = attention_dropout.attention_dropout
        want = op(q, k, v, None, 0.5, False, 0.25, seed, 3)[0]
        ct.reset()
        got = compiled(lambda q, k, v: op(q, k, v, None, 0.5, False, 0.25, seed, 3)[0])(q, k, v)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)

    def test_attention_with_dropout_compiles_whole(self):
        def f(q, k, v, p):
            return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)

        for dev in devices():
            q, k, v = (torch.randn(2, 4, 16, 8, device=dev, requires_grad=True) for _ in range(3))
            # p = 1e-9 keeps every element (1 - p rounds to 1 in float32, every uniform is
            # below 1): the fused op with dropout must then equal PyTorch's attention without.
            g = torch.randn(2, 4, 16, 8, device=dev)
            want = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            want_grads = torch.autograd.grad(want, (q, k, v), g)
            ct.reset()
            got = compiled(lambda q, k, v: f(q, k, v, 1e-9))(q, k, v)
            grads = torch.autograd.grad(got, (q, k, v), g)
            self.assertEqual(ct.stats()["ops_fallback"], 0, ct.fallback_report())
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
            for a, b in zip(grads, want_grads):
                torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
            ct.reset()
            cf = compiled(lambda q, k, v: f(q, k, v, 0.5))
            torch.manual_seed(5)
            a = cf(q, k, v)
            torch.manual_seed(5)
            b = cf(q, k, v)
            self.assertEqual(ct.stats()["ops_fallback"], 0, ct.fallback_report())
            torch.testing.assert_close(a, b, rtol=0, atol=0)
            self.assertFalse(torch.allclose(a, want, rtol=1e-3, atol=1e-3), "p=0.5 drops")


if __name__ == "__main__":
    unittest.main()
