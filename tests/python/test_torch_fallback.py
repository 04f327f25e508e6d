"""What cinn_like cannot run stays in PyTorch and is reported; the Program cache; bad inputs
(non-contiguous, dtypes outside the library, another device) run correctly or raise clearly."""
import unittest

from torch_util import HAVE_TORCH, needs_torch, report

if HAVE_TORCH:
    import torch
    import cinn_like.torch as ct
    from torch_util import MLP, compiled


@needs_torch
class TorchFallbackTest(unittest.TestCase):
    def ops_reported(self):
        return {op for op, _ in ct.fallback_report()}

    def test_sort_and_rfft_fall_back_and_match(self):
        def f(x):
            s = torch.sort(torch.relu(x) * 2.0 + 1.0, dim=-1).values
            spec = torch.fft.rfft(x, dim=-1).abs()
            return torch.tanh(s).sum(-1) + spec.mean(-1)
        ct.reset()
        before = ct.stats()
        cf = compiled(f)
        x = torch.randn(2, 3000)  # rows past the sort converter's all-pairs cap
        torch.testing.assert_close(cf(x), f(x), rtol=1e-5, atol=1e-5)
        d = report("sort + rfft", before, ct.stats())
        ops = self.ops_reported()
        self.assertTrue(any("sort" in o for o in ops), ops)
        self.assertTrue(any("fft" in o for o in ops), ops)
        self.assertGreater(d["ops_compiled"], 0)
        self.assertGreater(d["ops_fallback"], 0)

    def test_partitioner_runs_only_where_something_falls_back(self):
        # A graph whose ops all run in cinn_like is one partition without PyTorch's partitioner
        # (partition.propose); a graph with a fallback (tanh denied) is cut by it, and matches.
        from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner  # noqa: PLC0415
        from cinn_like.torch import plan_cache  # noqa: PLC0415
        plan_cache.enabled = False  # a plan would skip the partitioner
        self.addCleanup(setattr, plan_cache, "enabled", True)
        calls = []
        propose = CapabilityBasedPartitioner.propose_partitions

        def counted(self_):
            calls.append(1)
            return propose(self_)
        CapabilityBasedPartitioner.propose_partitions = counted
        self.addCleanup(setattr, CapabilityBasedPartitioner, "propose_partitions", propose)
        x = torch.randn(4, 300)
        ct.reset()
        whole = compiled(lambda t: torch.relu(t * 2.0 + 1.0).sum(-1))
        torch.testing.assert_close(whole(x), torch.relu(x * 2.0 + 1.0).sum(-1))
        self.assertEqual(ct.stats()["partitions"], 1)
        self.assertEqual(calls, [])

        old = ct.set_options(deny=["tanh"])
        self.addCleanup(ct.set_options, **old)
        ct.reset()

        def cut(t):
            return torch.exp(torch.tanh(torch.relu(t) + 1.0)).sum(-1)
        torch.testing.assert_close(compiled(cut)(x), cut(x), rtol=1e-5, atol=1e-5)
        self.assertGreaterEqual(ct.stats()["partitions"], 1)
        self.assertIn("tanh", {op.split(".")[0] for op, _ in ct.fallback_report()})
        self.assertGreater(len(calls), 0)

    def test_cache_same_shape_compiles_nothing_new_shape_once(self):
        torch.manual_seed(0)
        model = MLP().eval()
        cm = compiled(model)
        with torch.no_grad():
            cm(torch.randn(4, 32))
            n = ct.stats()["compiles"]
            x = torch.randn(4, 32)
            torch.testing.assert_close(cm(x), model(x), rtol=1e-4, atol=1e-5)
            self.assertEqual(ct.stats()["compiles"], n, "same shapes compiled again")
            x = torch.randn(7, 32)
            torch.testing.assert_close(cm(x), model(x), rtol=1e-4, atol=1e-5)
            self.assertGreater(ct.stats()["compiles"], n, "a new shape compiled nothing")
            n2 = ct.stats()["compiles"]
            # A second compiled copy of the same model: every Program comes from the cache.
            hits = ct.stats()["cache_hits"]
            compiled(model)(torch.randn(7, 32))
            self.assertEqual(ct.stats()["compiles"], n2)
            self.assertGreater(ct.stats()["cache_hits"], hits)

    def test_non_contiguous_inputs(self):
        def f(a, b):
            return torch.exp(a) * b + 1.0
        cf = compiled(f)
        a = torch.randn(16, 8).t()  # non-contiguous
        b = torch.randn(8, 32)[:, ::2]
        self.assertFalse(a.is_contiguous() or b.is_contiguous())
        torch.testing.assert_close(cf(a, b), f(a, b), rtol=1e-5, atol=1e-6)

    def test_dtypes_outside_the_library(self):
        def f(x):
            return (x * x + x).abs()
        cf = compiled(f)
        z = torch.randn(4, 4, dtype=torch.complex64)
        torch.testing.assert_close(cf(z), f(z))
        i = torch.randint(-5, 5, (4, 4), dtype=torch.int16)
        torch.testing.assert_close(cf(i), f(i))
        self.assertTrue(any("complex64" in r for _, r in ct.fallback_report()), ct.fallback_report())

    def test_integer_and_bool_math(self):
        def f(x, y):
            return torch.where(x > y, x - y, y * 3), (x == y)
        cf = compiled(f)
        x = torch.randint(-9, 9, (5, 6))
        y = torch.randint(-9, 9, (5, 6))
        for got, ref in zip(cf(x, y), f(x, y)):
            torch.testing.assert_close(got, ref)

    def test_erf_and_scalar_outputs(self):
        def f(x):
            return torch.special.erf(x).sum() + x.mean()  # erf: no op; rank-0 results
        cf = compiled(f)
        x = torch.randn(6, 7)
        torch.testing.assert_close(cf(x), f(x), rtol=1e-5, atol=1e-5)

    def test_meta_device_raises_or_falls_back(self):
        # Tensors on a device cinn_like has no target for: PyTorch runs everything.
        def f(x):
            return torch.relu(x) + 1
        cf = compiled(f)
        out = cf(torch.randn(3, 3, device="meta"))
        self.assertEqual(out.device.type, "meta")

    def test_kernel_rejects_wrong_inputs_clearly(self):
        from cinn_like.torch.kernel import compile_partition  # noqa: PLC0415
        from cinn_like.torch.partition import CinnLikeSupport, propose  # noqa: PLC0415
        from torch.fx.experimental.proxy_tensor import make_fx  # noqa: PLC0415
        from torch.fx.passes.utils.fuser_utils import fuse_as_graphmodule  # noqa: PLC0415
        gm = make_fx(lambda x: torch.exp(x) + 1, tracing_mode="fake")(torch.randn(3, 4))
        [nodes] = propose(gm, CinnLikeSupport())
        sub, _, _ = fuse_as_graphmodule(gm, nodes, "partition")
        k = compile_partition(sub, "x86")
        x = torch.randn(3, 4)
        torch.testing.assert_close(k(x), torch.exp(x) + 1)
        with self.assertRaisesRegex(ValueError, r"input 0 is torch.float64\[3, 4\]"):
            k(x.double())
        with self.assertRaisesRegex(ValueError, "compiled for torch.float32"):
            k(torch.randn(5, 4))


@needs_torch
class TorchIsolationTest(unittest.TestCase):
    """A partition that fails to compile gives back only the op at fault: the debug flag
    cinn_like_debug_fail_op makes the graph compiler fail on named ops, as a bug would."""

    def run_failing(self, fail_ops, f, x):
        ct.reset()
        ct.set_flags(cinn_like_debug_fail_op=",".join(fail_ops))
        try:
            got = compiled(f)(x)
        finally:
            ct.set_flags(cinn_like_debug_fail_op="")
        torch.testing.assert_close(got, f(x), rtol=1e-5, atol=1e-5)
        return ct.stats(), ct.fallback_report()

    @staticmethod
    def chain(x):
        y = torch.exp(x * 0.5) + 1.0
        y = torch.tanh(y) * 3.0
        y = torch.sigmoid(y - x) + y.sum(-1, keepdim=True)
        return torch.relu(y) * torch.cos(x)

    def test_one_failing_op_falls_back_alone(self):
        s, report = self.run_failing(["tanh"], self.chain, torch.randn(6, 9))
        self.assertEqual([op for op, _ in report], ["tanh.default"], report)
        self.assertIn("fails as FLAGS_cinn_like_debug_fail_op asks", report[0][1])
        self.assertGreaterEqual(s["compile_failures"], 1, s)
        self.assertEqual(s["ops_fallback"], 1, s)
        self.assertEqual(s["partitions"], 2, s)  # the ops before tanh, and after
        self.assertGreaterEqual(s["ops_compiled"], 8, s)

    def test_two_failing_ops_in_one_partition(self):
        s, report = self.run_failing(["exp", "sigmoid"], self.chain, torch.randn(5, 7))
        self.assertEqual(sorted(op for op, _ in report), ["exp.default", "sigmoid.default"],
                         report)
        self.assertEqual(s["ops_fallback"], 2, s)
        self.assertGreaterEqual(s["ops_compiled"], 7, s)

    def test_without_the_flag_nothing_falls_back(self):
        ct.reset()
        x = torch.randn(4, 3)
        torch.testing.assert_close(compiled(self.chain)(x), self.chain(x), rtol=1e-5, atol=1e-5)
        s = ct.stats()
        self.assertEqual((s["ops_fallback"], s["compile_failures"], s["partitions"]), (0, 0, 1), s)


if __name__ == "__main__":
    unittest.main()


@needs_torch
class TorchAllocatorTest(unittest.TestCase):
    def test_workspaces_from_pytorch(self):
        # In a child process: the hook is global and stays installed.
        import subprocess  # noqa: PLC0415
        import sys  # noqa: PLC0415
        code = (
            "import torch, torch_util as u\n"
            "from cinn_like.torch import allocator\n"
            "assert allocator.install()\n"
            "torch.manual_seed(0); m = u.GPT2Block().eval(); c = u.compiled(m)\n"
            "x = torch.randn(2, 8, 32)\n"
            "with torch.no_grad(): torch.testing.assert_close(c(x), m(x), rtol=1e-4, atol=1e-4)\n"
            "assert allocator.counts['alloc'] > 0, allocator.counts\n"
            "assert allocator.counts['alloc'] == allocator.counts['free'], allocator.counts\n"
            "assert not allocator._cpu_buffers\n"
            "print('workspaces through PyTorch:', allocator.counts)\n")
        import os  # noqa: PLC0415
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                           cwd=os.path.dirname(os.path.abspath(__file__)))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        print("\n" + r.stdout.strip())


@needs_torch
@unittest.skipUnless(HAVE_TORCH and torch.cuda.is_available(), "needs a CUDA device")
class TorchCrossDeviceTest(unittest.TestCase):
    def test_cpu_scalar_tensor_with_cuda_tensor(self):
        def f(x, s):
            return torch.relu(x) * s + 1  # s: a 0-d CPU tensor, legal with a CUDA x
        cf = compiled(f)
        x, s = torch.randn(8, 8, device="cuda"), torch.tensor(3.0)
        torch.testing.assert_close(cf(x, s), f(x, s))

    def test_work_on_the_cpu_beside_cuda_work_is_a_partition_of_its_own(self):
        # A mask built on the CPU inside forward (torchvision's swin_t) beside CUDA math: the
        # partitioner merged the two, and the kernel refused its CPU argument.
        def f(x):
            mask = (torch.arange(8.0) * 2).reshape(1, 8) - 3
            y = torch.tanh(x) * 2
            return y + mask.to(x.device)
        cf = compiled(f)
        x = torch.randn(4, 8, device="cuda")
        torch.testing.assert_close(cf(x), f(x))
        self.assertNotIn("cinn_like_kernel", " ".join(r for _, r in ct.fallback_report()))

    def test_swin_t_runs_where_eager_does(self):
        try:
            import torchvision  # noqa: PLC0415 (optional dependency)
        except ImportError:
            self.skipTest("torchvision is not installed")
        torch.manual_seed(0)
        model = torchvision.models.swin_t().eval().cuda()
        x = torch.randn(2, 3, 224, 224, device="cuda")
        with torch.no_grad():
            want = model(x)
            got = compiled(model)(x)
        torch.testing.assert_close(got, want, rtol=1e-3, atol=1e-3)
