"""Symbolic sizes through the C API (Python's ctypes binding): one compile of a Program over
[s0, s1, 16] with a view as [s0*s1, 16], called at several sizes against float64 numpy; a call
whose sizes break the Program (y must be [s0*s1], s0 must be >= 2) fails with a message naming
the tensor, the dim and the rule."""
import unittest

import numpy as np

import cinn_like


def rows_program():
    b = cinn_like.ProgramBuilder()
    x = b.input("x", "float32", ["s0", "s1", 16])
    y = b.input("y", "float32", ["s0*s1"])
    rows = b.op("reshape", [x], {"shape": ["s0*s1", 16]})
    total = b.op("reduce_sum", [b.op("exp", [rows])], {"axes": [1], "keepdim": False})
    b.output(b.op("add", [total, y]))
    b.symbol("s0", min=2)
    return b


class ApiSymbolicTest(unittest.TestCase):
    def test_one_compile_serves_every_size(self):
        m = cinn_like.compile(rows_program(), "x86", "f")
        rng = np.random.default_rng()
        for s0, s1 in ((2, 1), (3, 7), (8, 64), (5, 513)):
            x = rng.standard_normal((s0, s1, 16)).astype(np.float32)
            y = rng.standard_normal(s0 * s1).astype(np.float32)
            out = np.full(s0 * s1, np.nan, np.float32)
            m(x, y, out)
            want = np.exp(x.astype(np.float64)).reshape(-1, 16).sum(axis=1) + y
            np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)

    def test_sizes_that_break_the_program_are_refused_by_name(self):
        m = cinn_like.compile(rows_program(), "x86", "f")
        x = np.ones((3, 4, 16), np.float32)
        with self.assertRaisesRegex(cinn_like.CinnLikeError,
                                    r"tensor y has size 11 at dim 0, expected 12 = "
                                    r"\(s0 \* s1\) \(s0 from x dim 0, s1 from x dim 1\)"):
            m(x, np.ones(11, np.float32), np.empty(12, np.float32))
        with self.assertRaisesRegex(cinn_like.CinnLikeError,
                                    "tensor x has size 1 at dim 0, which sets s0; s0 must be >= 2"):
            m(np.ones((1, 4, 16), np.float32), np.ones(4, np.float32), np.empty(4, np.float32))


if __name__ == "__main__":
    unittest.main()
