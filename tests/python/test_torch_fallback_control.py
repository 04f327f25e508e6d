"""Fallback control of the torch backend (cinn_like/torch/policy.py): allow and deny lists from
set_options, torch.compile's options and the environment, and strict mode, which raises on a
fallback the lists did not ask for and names every one."""
import os
import threading
import unittest
from unittest import mock

from torch_util import HAVE_TORCH, needs_torch

if HAVE_TORCH:
    import torch
    import cinn_like
    import cinn_like.torch as ct
    from cinn_like.torch import plan_cache
    from torch_util import compiled, seed_case

ENV = ("CINN_LIKE_TORCH_ALLOW", "CINN_LIKE_TORCH_DENY", "CINN_LIKE_TORCH_STRICT")


def chain(x):
    y = torch.exp(x * 0.5) + 1.0
    return torch.softmax(torch.tanh(y), dim=-1) * x


def sort_and_rfft(x):
    """Two ops that really fall back: a sort of rows past 2048 and rfft (complex results)."""
    s = torch.sort(torch.relu(x) * 2.0 + 1.0, dim=-1).values
    return torch.tanh(s).sum(-1) + torch.fft.rfft(x, dim=-1).abs().mean(-1)


def fallback_error(e):
    """The FallbackError that torch.compile wrapped (BackendCompilerFailed), or None."""
    while e is not None and not isinstance(e, ct.FallbackError):
        e = e.__cause__ or e.__context__
    return e


@needs_torch
class FallbackControlTest(unittest.TestCase):
    def setUp(self):
        ct.reset()
        old = ct.set_options(allow=[], deny=[], strict=False)
        self.addCleanup(ct.set_options, **old)
        self.addCleanup(ct.reset)
        env = mock.patch.dict(os.environ)  # restored, whatever a test sets
        env.start()
        self.addCleanup(env.stop)
        for var in ENV:
            os.environ.pop(var, None)
        seed_case(self.id())

    def run_and_compare(self, fn, x, cf=None):
        """fn compiled (or cf) against eager on x; returns the fallback report as a dict."""
        with torch.no_grad():
            torch.testing.assert_close((cf or compiled(fn))(x), fn(x), rtol=1e-5, atol=1e-5)
        return dict(ct.fallback_report())

    def test_deny_by_packet_name(self):
        ct.set_options(deny=["_softmax"])  # torch.softmax arrives as aten._softmax
        report = self.run_and_compare(chain, torch.randn(4, 9))
        self.assertEqual(report, {"_softmax.default": "denied by the deny option"})
        self.assertGreater(ct.stats()["ops_compiled"], 0)

    def test_partitions_compile_ahead_at_once_and_count_once(self):
        # tanh denied: the chain becomes two partitions, compiled together on threads
        # (cache.prefetch) before the loop that checks each; each counts as one compile. (Graph
        # plans off: a plan would load the Modules without the trial.)
        plan_cache.enabled = False
        self.addCleanup(setattr, plan_cache, "enabled", True)
        ct.reset(clear_cache=True)
        ct.set_options(deny=["tanh"])
        threads = []
        real = cinn_like.compile

        def recorded(*args, **kwargs):
            threads.append(threading.get_ident())
            return real(*args, **kwargs)

        with mock.patch.object(cinn_like, "compile", side_effect=recorded):
            self.run_and_compare(chain, torch.randn(6, 11))
        self.assertEqual(len(threads), 2)  # nothing compiled again after the threads
        self.assertNotIn(threading.get_ident(), threads)
        self.assertEqual(dict(ct.cache._prefetched), {})  # each taken by the partition it was for
        s = ct.stats()
        self.assertEqual((s["partitions"], s["compiles"], s["cache_hits"]), (2, 2, 0))

    def test_deny_by_full_name_through_torch_compile_options(self):
        torch._dynamo.reset()
        cf = torch.compile(chain, backend="cinn_like", dynamic=False,
                           options={"deny": ["aten.tanh.default", "exp.default"]})
        report = self.run_and_compare(chain, torch.randn(3, 7), cf)
        self.assertEqual(report, {"tanh.default": "denied by the deny option",
                                  "exp.default": "denied by the deny option"})
        self.assertEqual(ct.get_options()["deny"], (), "torch.compile's options leaked")

    def test_allow_list(self):
        ct.set_options(allow="exp, mul, add.Tensor")
        report = self.run_and_compare(chain, torch.randn(5, 6))
        self.assertEqual(set(report), {"tanh.default", "_softmax.default"}, report)
        self.assertEqual(set(report.values()), {"not in the allow list (the allow option)"})
        self.assertGreater(ct.stats()["ops_compiled"], 0)

    def test_environment_is_read_at_each_compile(self):
        with mock.patch.dict(os.environ, {"CINN_LIKE_TORCH_DENY": "tanh"}):
            report = self.run_and_compare(chain, torch.randn(4, 5))
        self.assertEqual(report, {"tanh.default": "denied by CINN_LIKE_TORCH_DENY"})
        self.assertNotIn("CINN_LIKE_TORCH_DENY", os.environ)
        ct.reset()
        self.assertEqual(self.run_and_compare(chain, torch.randn(4, 5)), {})
        with mock.patch.dict(os.environ, {"CINN_LIKE_TORCH_ALLOW": "aten::exp,mul,add,tanh"}):
            report = self.run_and_compare(chain, torch.randn(4, 5))
        self.assertEqual(report, {"_softmax.default": "not in the allow list "
                                                      "(CINN_LIKE_TORCH_ALLOW)"})

    def test_environment_narrows_the_options(self):
        ct.set_options(allow=["exp", "mul", "add", "tanh"])
        with mock.patch.dict(os.environ, {"CINN_LIKE_TORCH_ALLOW": "exp,mul,add,_softmax"}):
            report = self.run_and_compare(chain, torch.randn(4, 5))
        self.assertEqual(report, {"tanh.default": "not in the allow list (CINN_LIKE_TORCH_ALLOW)",
                                  "_softmax.default": "not in the allow list (the allow option)"})

    def test_strict_raises_naming_every_fallback(self):
        ct.set_options(strict=True)
        with self.assertRaises(Exception) as caught:
            compiled(sort_and_rfft)(torch.randn(2, 3000))
        error = fallback_error(caught.exception)
        self.assertIsNotNone(error, caught.exception)
        message = str(error)
        self.assertIn("strict mode", message)
        self.assertIn("sort.default: sort of 3000 elements", message)
        self.assertIn("_fft_r2c.default: dtype torch.complex64", message)
        self.assertNotIn("getitem", message)

    def test_strict_from_environment_raises_on_a_compile_failure(self):
        ct.set_flags(cinn_like_debug_fail_op="tanh")
        self.addCleanup(ct.set_flags, cinn_like_debug_fail_op="")
        with mock.patch.dict(os.environ, {"CINN_LIKE_TORCH_STRICT": "1"}):
            with self.assertRaises(Exception) as caught:
                compiled(chain)(torch.randn(3, 4))
        error = fallback_error(caught.exception)
        self.assertIsNotNone(error, caught.exception)
        self.assertIn("tanh.default: failed to compile", str(error))
        # Without strict mode the same graph runs, tanh in PyTorch.
        report = self.run_and_compare(chain, torch.randn(3, 4))
        self.assertIn("failed to compile", report["tanh.default"])

    def test_strict_accepts_what_the_lists_keep_away(self):
        # Denied ops and ops outside the allow list are the user's choice: no error.
        ct.set_options(strict=True, deny=["sort", "_fft_r2c", "abs"])
        report = self.run_and_compare(sort_and_rfft, torch.randn(2, 3000))
        self.assertEqual(report["sort.default"], "denied by the deny option")
        ct.reset()
        ct.set_options(deny=[], allow=["exp", "mul", "add"])
        report = self.run_and_compare(chain, torch.randn(3, 8))
        self.assertEqual(set(report), {"tanh.default", "_softmax.default"}, report)

    def test_strict_without_fallbacks_compiles(self):
        ct.set_options(strict=True)
        self.assertEqual(self.run_and_compare(chain, torch.randn(6, 5)), {})
        self.assertGreater(ct.stats()["partitions"], 0)

    def test_options_hold_for_the_backward_graph(self):
        # The backward graph, compiled at the first backward(), is the only one with a sum
        # (tanh's and softmax's derivatives are decomposed to core aten).
        torch._dynamo.reset()
        cf = torch.compile(chain, backend="cinn_like", dynamic=False,
                           options={"deny": ["sum"], "strict": True})
        x = torch.randn(4, 6, requires_grad=True)
        x_ref = x.detach().clone().requires_grad_()
        cf(x).sum().backward()
        chain(x_ref).sum().backward()
        torch.testing.assert_close(x.grad, x_ref.grad, rtol=1e-5, atol=1e-5)
        self.assertEqual(dict(ct.fallback_report()),
                         {"sum.dim_IntList": "denied by the deny option"})

    def test_bad_options_are_clear_errors(self):
        with self.assertRaisesRegex(ValueError, "'sofmax' is not an aten op"):
            ct.set_options(deny=["sofmax"])
        with self.assertRaisesRegex(ValueError, "'exp.nosuch' is not an aten op"):
            ct.set_options(allow="exp.nosuch")
        with self.assertRaisesRegex(ValueError, r"unknown cinn_like.torch option\(s\) \['denny'\]"):
            ct.set_options(denny=["exp"])
        with self.assertRaisesRegex(ValueError, "strict='yes': expected True or False"):
            ct.set_options(strict="yes")
        self.assertEqual(ct.get_options(),
                         {"allow": (), "deny": (), "strict": False, "cudagraphs": False,
                          "cpu_target": "x86", "emulate_precision_casts": False})
        with mock.patch.dict(os.environ, {"CINN_LIKE_TORCH_DENY": "tahn"}):
            with self.assertRaisesRegex(Exception,
                                        "CINN_LIKE_TORCH_DENY: 'tahn' is not an aten op"):
                compiled(chain)(torch.randn(2, 3))


if __name__ == "__main__":
    unittest.main()
