"""Inputs at the edges of their types and sizes, through the Python package on x86: each either
computes what PyTorch defines or is refused with a message, never a signal. (Before: SIGFPE on
INT64_MIN // -1, out-of-bounds reads gathering from an empty symbolic axis.)"""
import unittest

import numpy as np

import cinn_like


def binary(op, dtype, attrs=None):
    p = cinn_like.ProgramBuilder()
    a = p.input("a", dtype, ["n"])
    b = p.input("b", dtype, ["n"])
    p.output(p.op(op, [a, b], attrs))
    return cinn_like.compile(p, "x86", "f")


def trunc_div(a, b):
    """C division of Python ints, wrapped to int64; b == 0 gives 0 (cinn_like's definition)."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    q = q if (a < 0) == (b < 0) else -q
    return (q + 2**63) % 2**64 - 2**63


class IntegerEdgesTest(unittest.TestCase):
    def test_int64_division_at_its_edges(self):
        lo, hi = -2**63, 2**63 - 1
        values = [lo, lo + 1, -7, -1, 0, 1, 7, hi]
        a = np.array([x for x in values for _ in values], np.int64)
        b = np.array([y for _ in values for y in values], np.int64)
        # a few random pairs too
        rng = np.random.default_rng()
        a = np.concatenate([a, rng.integers(lo, hi, 64, dtype=np.int64, endpoint=True)])
        b = np.concatenate([b, rng.integers(-9, 9, 64, dtype=np.int64, endpoint=True)])
        want = {
            "trunc": [trunc_div(int(x), int(y)) for x, y in zip(a, b)],
            "floor": [0 if y == 0 else ((int(x) // int(y)) + 2**63) % 2**64 - 2**63
                      for x, y in zip(a, b)],
        }
        for mode, expected in want.items():
            got = np.zeros_like(a)
            binary("div", "int64", {"rounding_mode": mode})(a, b, got)
            self.assertEqual(got.tolist(), expected, mode)
        got = np.zeros_like(a)
        binary("mod", "int64")(a, b, got)
        self.assertEqual(got.tolist(), [0 if y == 0 else int(x) % int(y) for x, y in zip(a, b)])


class EmptyAxisTest(unittest.TestCase):
    def test_gather_from_an_empty_symbolic_axis_reads_nothing(self):
        p = cinn_like.ProgramBuilder()
        x = p.input("x", "float32", ["n", 3])
        i = p.input("i", "int64", [4])
        p.output(p.op("gather", [x, i], {"axis": 0}))
        m = cinn_like.compile(p, "x86", "g")
        out = np.full((4, 3), np.nan, np.float32)
        m(np.zeros((0, 3), np.float32), np.arange(4, dtype=np.int64), out)
        self.assertTrue((out == 0).all(), out)
        x = np.random.default_rng().standard_normal((5, 3)).astype(np.float32)
        m(x, np.array([4, 0, 2, 4], np.int64), out)
        np.testing.assert_array_equal(out, x[[4, 0, 2, 4]])


if __name__ == "__main__":
    unittest.main()
