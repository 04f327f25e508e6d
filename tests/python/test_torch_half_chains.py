"""Chains of float16/bfloat16 elementwise ops round once (issue 50, class 9): Dynamo and
AOTAutograd decompose addcdiv into div, mul and add, and a converter that rounded each op's
result to 16 bits differed from eager's fused kernel and from Inductor, which compute the chain
in float32 and round where a value is stored. Through torch.compile(backend="cinn_like") on the
CPU, bit for bit on fresh random data: chains against the float32 chain rounded once; with the
emulate_precision_casts option, against each op rounded; a value that a reduction or a matmul
reads, or that a partition returns, is the rounded one, and so is what ops with steps (floor,
remainders, comparisons) read, as in eager; and the converters' fragments read an input's
unrounded value only where its producer is in the same partition."""
import os
import unittest
from unittest import mock

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx
    import cinn_like.torch as ct
    from cinn_like.torch import plan_cache, policy, registry
    from torch_util import seed_case

    LOW = [torch.float16, torch.bfloat16]
    EMULATE = {"emulate_precision_casts": True}


def run(fn, args, options=None):
    """fn compiled by cinn_like (options: torch.compile's) on args, with no op in PyTorch."""
    torch._dynamo.reset()
    ct.reset()
    with torch.no_grad():
        got = torch.compile(fn, backend="cinn_like", dynamic=False, options=options)(*args)
    assert ct.fallback_report() == [], ct.fallback_report()
    return got


def per_op(steps, first, others):
    """The chain of `steps` (f(value, other)) with each step compiled alone: each op's result
    rounded to its dtype, with cinn_like's own kernels."""
    value = first
    for step, other in zip(steps, others):
        value = run(step, (value, other))
    return value


def differing(a, b):
    return int((a != b).sum())


@needs_torch
class HalfChainTest(unittest.TestCase):
    def assert_same(self, got, want):
        self.assertEqual(got.dtype, want.dtype)
        self.assertEqual(differing(got, want), 0,
                         f"{differing(got, want)} of {want.numel()} elements differ")

    def test_addcdiv_and_addcmul_round_once(self):
        # Each formula in the order of the decomposition the backend sees: addcdiv is div(t1,
        # t2), times value, plus input (value 0.5 scales exactly: input + value * t1 / t2 then
        # gives the same floats); addcmul upcasts to float32 itself and rounds once already.
        cases = [("addcdiv", lambda a, t1, t2, v: torch.addcdiv(a, t1, t2, value=v),
                  lambda a, t1, t2, v: a + (t1 / t2) * v),
                 ("addcmul", lambda a, t1, t2, v: torch.addcmul(a, t1, t2, value=v),
                  lambda a, t1, t2, v: a + t1 * v * t2)]
        for name, fn, formula in cases:
            for dt in LOW:
                for value in (0.5, 0.3):
                    with self.subTest(name, dtype=dt, value=value):
                        seed_case(f"{name} {dt} {value}")
                        a, t1 = torch.randn(4096) * 3, torch.randn(4096)
                        t2 = torch.randn(4096) + 2.0
                        args = [t.to(dt) for t in (a, t1, t2)]
                        wide = [t.float() for t in args]
                        once = formula(*wide, value).to(dt)
                        f = lambda a, t1, t2, v=value, fn=fn: fn(a, t1, t2, v)  # noqa: E731
                        self.assert_same(run(f, args), once)
                        # emulate_precision_casts: each op of the graph rounded.
                        r = lambda t: t.to(dt).float()  # noqa: E731
                        each = (r(wide[0] + r(r(wide[1] / wide[2]) * value)).to(dt)
                                if name == "addcdiv" else once)
                        self.assert_same(run(f, args, EMULATE), each)

    def test_a_longer_chain_rounds_once(self):
        # sigmoid's float32 result is cinn_like's own (one unit of float32 from PyTorch's now and
        # then): the reference is the chain compiled by cinn_like in float32, rounded once.
        chains = [("sigmoid", lambda x, y, z, w: (x * y + z).sigmoid() * w,
                   [lambda t, y: t * y, lambda t, z: t + z, lambda t, _: t.sigmoid(),
                    lambda t, w: t * w]),
                  ("arithmetic", lambda x, y, z, w: (x * y + z) / w - x,
                   [lambda t, y: t * y, lambda t, z: t + z, lambda t, w: t / w,
                    lambda t, x: t - x]),
                  # relu's value is relu in 16 bits (it commutes with rounding), its unrounded
                  # value the chain's
                  ("relu", lambda x, y, z, w: (x * y + z).relu() * w,
                   [lambda t, y: t * y, lambda t, z: t + z, lambda t, _: t.relu(),
                    lambda t, w: t * w])]
        for name, fn, steps in chains:
            for dt in LOW:
                with self.subTest(name, dtype=dt):
                    seed_case(f"chain {name} {dt}")
                    x, y, z = (torch.randn(4096) * 2).to(dt), torch.randn(4096).to(dt), \
                        torch.randn(4096).to(dt)
                    w = (torch.rand(4096) + 0.5).to(dt)
                    once = run(fn, [t.float() for t in (x, y, z, w)]).to(dt)
                    self.assert_same(run(fn, (x, y, z, w)), once)
                    each = per_op(steps, x, [y, z, w, x] if name == "arithmetic" else [y, z, z, w])
                    self.assertGreater(differing(once, each), 0, "the data tell nothing apart")
                    self.assert_same(run(fn, (x, y, z, w), EMULATE), each)

    def test_a_chain_through_moved_values_rounds_once(self):
        # Products moved by views, slices, a concatenation and scatters of slices, then added
        # (a cumulative_trapezoid backward's shape: the middle element sums two products of
        # nearly equal size): the moves carry the products' float32 values, so the chain is the
        # float32 chain rounded once, as Inductor computes it. Each op rounded is the emulation.
        def fn(x, y):
            p = x * y
            z = torch.zeros(x.shape[0], x.shape[1] + 1, dtype=x.dtype)
            a = torch.slice_scatter(z, p, 1, 1) + torch.slice_scatter(z, p, 1, 0, -1)
            b = torch.cat([p[:, 1:], p[:, :1]], 1).t().reshape(x.shape) - p.flip(1)
            return a, b.unsqueeze(0).expand(2, -1, -1) * 3
        for dt in LOW:
            with self.subTest(dtype=dt):
                seed_case(f"moves {dt}")
                x, y = (torch.randn(256, 64) * 4).to(dt), (torch.randn(256, 64) * 4).to(dt)
                got = run(fn, (x, y))
                once = [t.to(dt) for t in run(fn, (x.float(), y.float()))]
                each = run(fn, (x, y), EMULATE)
                for g, o, e in zip(got, once, each):
                    self.assert_same(g, o)
                    self.assertGreater(differing(o, e), 0, "the data tell nothing apart")

    def test_values_that_others_read_are_the_rounded_ones(self):
        # y = x * w is returned, summed and multiplied by a matrix (non-elementwise readers: the
        # rounded value, as eager's), and read by an add (the unrounded float32 product, rounded
        # once with the sum). x and w in [1, 2) and m of small integers: the float32 sums of the
        # rounded products are exact, so each reference is one rounding of an exact value.
        def fn(x, w, z, m):
            y = x * w
            return y, y.sum(-1), y @ m, y + z
        for dt in LOW:
            with self.subTest(dtype=dt):
                seed_case(f"shared {dt}")
                x, w = (torch.rand(512, 8) + 1).to(dt), (torch.rand(512, 8) + 1).to(dt)
                z = torch.randn(512, 8).to(dt)
                m = torch.randint(-2, 3, (8, 16)).to(dt)
                y, s, p, q = run(fn, (x, w, z, m))
                eager_y = x * w
                self.assert_same(y, eager_y)
                exact = x.float() * w.float()  # the product unrounded (exact in float32)
                self.assert_same(s, eager_y.float().sum(-1).to(dt))
                self.assert_same(p, (eager_y.float() @ m.float()).to(dt))
                self.assert_same(q, (exact + z.float()).to(dt))
                self.assertGreater(differing(s, exact.sum(-1).to(dt)), 0,
                                   "the data tell nothing apart")

    def test_ops_with_steps_read_the_rounded_value(self):
        # A product a hair below an integer (a multiple, zero) rounds onto it in 16 bits:
        # floor, trunc, sign, remainders, a floor division and comparisons read the rounded
        # product t, as eager's separate ops do (from the float32 product, trunc(x * 9) was a
        # whole unit off eager's in bfloat16). t itself is the chain x * 9 * y rounded once;
        # after it each op is eager's on that t. Their results are exact: the add after floor
        # starts a chain of its own.
        def steps(t, z):
            return (t.floor() + z, t.trunc(), t.sign(), torch.remainder(t, z), torch.fmod(t, z),
                    torch.div(t, z, rounding_mode="floor"), t > z, torch.where(t >= 1, z, t))
        for dt in LOW:
            with self.subTest(dtype=dt):
                seed_case(f"steps {dt}")
                x, y = torch.randn(4096).to(dt), (torch.rand(4096) + 0.5).to(dt)
                z = (torch.rand(4096) + 0.5).to(dt)
                got = run(lambda x, y, z: steps(x * 9.0 * y, z), (x, y, z))
                t = (x.float() * 9.0 * y.float()).to(dt)
                for k, (g, want) in enumerate(zip(got, steps(t, z))):
                    with self.subTest(output=k):
                        self.assert_same(g, want)

    def test_a_value_from_another_partition_is_read_rounded(self):
        # sigmoid denied: x * y is one partition's output (stored in 16 bits), u * z + t
        # another's, which reads t and u as stored and rounds its own chain once.
        old = ct.set_options(deny=["sigmoid"])
        self.addCleanup(ct.set_options, **old)

        def fn(x, y, z):
            t = x * y
            return t.sigmoid() * z + t
        for dt in LOW:
            with self.subTest(dtype=dt):
                seed_case(f"two partitions {dt}")
                x, y, z = (torch.randn(4096).to(dt) for _ in range(3))
                torch._dynamo.reset()
                ct.reset()
                with torch.no_grad():
                    got = torch.compile(fn, backend="cinn_like", dynamic=False)(x, y, z)
                self.assertEqual([op for op, _ in ct.fallback_report()], ["sigmoid.default"])
                self.assertEqual(ct.stats()["partitions"], 2)
                t = x * y
                self.assert_same(got, (t.sigmoid().float() * z.float() + t.float()).to(dt))

    def test_fragments_read_unrounded_values_of_their_own_partition(self):
        # The partitioner converts each node alone (a Fragment); replayed into a partition's
        # Converter, add's fragment reads mul's unrounded float32 product where mul is in the
        # partition (its value: the float32 sum rounded), and the stored product where mul is
        # an input (its value: the add in 16 bits, as without chains); with round_each_op, the
        # 16-bit add in both. A chain's first op (mul, of inputs) is its op in 16 bits.
        args = [torch.randn(64, dtype=torch.float16) for _ in range(3)]
        gm = make_fx(lambda x, y, z: x * y + z, tracing_mode="fake")(*args)
        x, y, z, mul, add = [n for n in gm.graph.nodes if n.op in ("placeholder",
                                                                     "call_function")]
        for round_each_op in (False, True):
            with self.subTest(round_each_op=round_each_op):
                for n in (mul, add):
                    registry.convert_alone(n, round_each_op)
                whole = registry.Converter()
                for i, p in enumerate((x, y, z)):
                    whole.add_input(p, f"in{i}")
                for n in (mul, add):
                    whole.env[n] = registry.convert_node(whole, n)
                cut = registry.Converter()
                for i, p in enumerate((mul, z)):
                    cut.add_input(p, f"in{i}")
                cut.env[add] = registry.convert_node(cut, add)
                self.assertEqual(self.writer(whole, whole.env[mul])[:2],
                                 ("mul", [whole.env[x], whole.env[y]]))
                self.assertEqual(self.writer(cut, cut.env[add])[:2],
                                 ("add", [cut.env[mul], cut.env[z]]))
                if round_each_op:
                    self.assertEqual(whole.unrounded, {})
                    self.assertEqual(self.writer(whole, whole.env[add])[:2],
                                     ("add", [whole.env[mul], whole.env[z]]))
                    continue
                op, inputs, attrs, _ = self.writer(whole, whole.env[add])
                self.assertEqual((op, attrs), ("cast", {"dtype": "float16"}))
                op, inputs, _, _ = self.writer(whole, inputs[0])
                self.assertEqual((op, inputs[0]), ("add", whole.unrounded[mul]))
                self.assertEqual(self.writer(whole, whole.unrounded[mul])[0], "mul")

    @staticmethod
    def writer(c, name):
        """The (op, inputs, attrs, outputs) that wrote Program name `name` in Converter c."""
        return next(w for w in c.written if name in w[3])

    def test_the_option(self):
        self.assertFalse(policy.resolve().emulate_precision_casts)
        self.assertTrue(policy.resolve(EMULATE).emulate_precision_casts)
        with mock.patch.dict(os.environ, {policy.ENV_EMULATE: "1"}):
            self.assertTrue(policy.resolve().emulate_precision_casts)
        with self.assertRaisesRegex(ValueError, "emulate_precision_casts='yes'"):
            ct.set_options(emulate_precision_casts="yes")
        # A graph's stored plan (its Programs) is the plan of one setting.
        gm = make_fx(lambda x: x * 2.0 + 1.0)(torch.randn(4, dtype=torch.float16))
        self.assertNotEqual(plan_cache._graph_key(gm, policy.resolve()),
                            plan_cache._graph_key(gm, policy.resolve(EMULATE)))


if __name__ == "__main__":
    unittest.main()
