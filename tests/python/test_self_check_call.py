"""The call-time self-check from Python (flag cinn_like_self_check): a matching module passes on
fresh random inputs; a planted wrong op (cinn_like_debug_wrong_op) makes the call raise, naming
its instruction, op, output and fusion group; without the flag at call time, or at compile time,
nothing is checked."""
import unittest

import numpy as np

import cinn_like


def chain_program():
    """out = relu(tanh(exp(x + y)) - y); instruction 2 is tanh, its output "t"."""
    b = cinn_like.ProgramBuilder()
    x = b.input("x", "float32", ["n", 5])
    y = b.input("y", "float32", [5])
    t = b.op("tanh", [b.op("exp", [b.op("add", [x, y])])], names=["t"])[0]
    b.output(b.op("relu", [b.op("sub", [t, y])], names=["out"])[0])
    return b


def chain_reference(x, y, planted=False):
    """The chain in float64; `planted`: with tanh negated, as cinn_like_debug_wrong_op=tanh
    compiles it."""
    t = np.tanh(np.exp(x.astype(np.float64) + y))
    return np.maximum((-t if planted else t) - y, 0)


class SelfCheckCallTest(unittest.TestCase):
    def setUp(self):
        self.addCleanup(cinn_like.set_flags, cinn_like_self_check=False,
                        cinn_like_debug_wrong_op="")
        seed = np.random.SeedSequence().entropy
        self.rng = np.random.default_rng(seed)
        self.seed = seed  # in every failure's message

    def call(self, module, n=11):
        x = self.rng.uniform(-2, 2, (n, 5)).astype(np.float32)
        # y <= 0 keeps tanh(..) - y positive: relu never hides the planted negation
        y = self.rng.uniform(-2, 0, 5).astype(np.float32)
        out = np.full((n, 5), np.nan, np.float32)
        module(x, y, out)
        return out, chain_reference(x, y), chain_reference(x, y, planted=True)

    def test_a_matching_module_passes_on_fresh_random_inputs(self):
        cinn_like.set_flags(cinn_like_self_check=True)
        m = cinn_like.compile(chain_program(), "x86", "f")
        for n in (1, 7, 33):
            out, want, _ = self.call(m, n)
            np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6, err_msg=f"seed {self.seed}")

    def test_a_planted_wrong_op_is_named_with_its_instruction(self):
        cinn_like.set_flags(cinn_like_self_check=True, cinn_like_debug_wrong_op="tanh")
        m = cinn_like.compile(chain_program(), "x86", "f")
        with self.assertRaises(cinn_like.CinnLikeError, msg=f"seed {self.seed}") as raised:
            self.call(m)
        message = str(raised.exception)
        self.assertIn("self-check of f: outputs differ from the reference", message)
        self.assertRegex(message, r"output out \(float32\[11, 5\]\) element \d+: got .*, want .* "
                                  r"\(tolerance 0\.0001\)")
        self.assertIn("first differing instruction: 2 (op tanh, output t), in fusion group 0 of 1",
                      message)

    def test_the_flag_off_at_call_time_means_no_check(self):
        cinn_like.set_flags(cinn_like_self_check=True, cinn_like_debug_wrong_op="tanh")
        m = cinn_like.compile(chain_program(), "x86", "f")
        cinn_like.set_flags(cinn_like_self_check=False)
        out, _, planted = self.call(m)  # no exception: the planted result comes through
        np.testing.assert_allclose(out, planted, rtol=1e-5, atol=1e-6, err_msg=f"seed {self.seed}")

    def test_a_module_compiled_without_the_flag_is_not_checked(self):
        cinn_like.set_flags(cinn_like_debug_wrong_op="tanh")
        m = cinn_like.compile(chain_program(), "x86", "f")
        cinn_like.set_flags(cinn_like_self_check=True)
        out, _, planted = self.call(m)  # no exception: the planted result comes through
        np.testing.assert_allclose(out, planted, rtol=1e-5, atol=1e-6, err_msg=f"seed {self.seed}")


if __name__ == "__main__":
    unittest.main()
