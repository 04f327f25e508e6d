"""The OpInfo suite's verdicts against Inductor (tests/opinfo/opinfo_inductor.py) on made-up
results: a sample where cinn_like differs from eager and Inductor does not is a finding, unless
cinn_like is nearer the float64 result than eager, over the whole output or at every element
beyond the tolerance (instance_norm's float16 backward: one element, eager 3.375, cinn_like
3.38086, float64 3.38048)."""
import os
import sys
import unittest

from torch_util import HAVE_TORCH, needs_torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "opinfo"))
if HAVE_TORCH:
    import torch
    import opinfo_inductor as oi


@needs_torch
class InductorVerdictTest(unittest.TestCase):
    def verdict(self, got, want, ind, ref):
        t = lambda v: [torch.tensor(v, dtype=torch.float16)]  # noqa: E731
        ref = [torch.tensor(ref, dtype=torch.float64)]
        rec = oi.record(torch, None, torch.float16, (1e-3, 1e-3), t(got), t(want), t(ind), None,
                        None, ref)
        return rec["verdict"]

    def setUp(self):
        # sample_text of no sample: the verdict does not depend on it.
        self.saved = oi.sample_text
        oi.sample_text = lambda torch, sample: "()"

    def tearDown(self):
        oi.sample_text = self.saved

    def test_nearer_at_the_differing_element_is_not_a_finding(self):
        # The largest errors against float64 are elsewhere and equal (0.5 each); at the one
        # element beyond the tolerance cinn_like rounds correctly and eager does not.
        got, want = [3.38086, 10.5], [3.375, 10.5]
        self.assertEqual(self.verdict(got, want, want, [3.38048, 11.0]), oi.NEARER)

    def test_farther_at_the_differing_element_is_a_finding(self):
        got, want = [3.375, 10.5], [3.38086, 10.5]
        self.assertEqual(self.verdict(got, want, want, [3.38048, 11.0]), oi.FINDING)
        # A NaN where eager has a number is beyond the tolerance, and never nearer.
        got, want = [float("nan"), 3.38086], [1.0, 3.375]
        self.assertEqual(self.verdict(got, want, want, [1.0, 3.38048]), oi.FINDING)
        self.assertFalse(oi.nearer_where_beyond(
            torch, [torch.tensor([1.0])], [torch.tensor([1.0])], [torch.tensor([1.5])], 0, 0))


if __name__ == "__main__":
    unittest.main()
