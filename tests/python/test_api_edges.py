"""Inputs at the edges of their types and sizes, through the Python package on x86: each either
computes what PyTorch defines or is refused with a message, never a signal. (Before: SIGFPE on
INT64_MIN // -1, out-of-bounds reads gathering from an empty symbolic axis, out-of-range gather
indices clamped silently, index_add skipping them, one_hot writing a row of zeros.)"""
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


def gather_module(dtype):
    p = cinn_like.ProgramBuilder()
    x = p.input("x", "float32", ["n", 3])
    i = p.input("i", dtype, ["k"])
    p.output(p.op("gather", [x, i], {"axis": 0}))
    return cinn_like.compile(p, "x86", "g")


class GatherBoundsTest(unittest.TestCase):
    """An index out of range is an error naming the op, the tensors and the value, as PyTorch
    raises (before: clamped silently into the axis)."""

    def test_out_of_range_indices_are_errors_and_the_next_call_works(self):
        rng = np.random.default_rng()
        x = rng.standard_normal((5, 3)).astype(np.float32)
        for dtype in ("int32", "int64"):
            m = gather_module(dtype)
            out = np.zeros((4, 3), np.float32)
            for bad, value, position in (([0, 1, 5, 2], 5, 2), ([-1, 0, 0, 0], -1, 0),
                                         ([4, 4, 4, 2**31 - 1], 2**31 - 1, 3)):
                with self.assertRaises(RuntimeError) as e:
                    m(x, np.array(bad, dtype), out)
                msg = str(e.exception)
                for part in ("op gather", f"index {value} (at position {position})",
                             "out of range [0, 5)", "x float32[n, 3]", f"i {dtype}[k]"):
                    self.assertIn(part, msg)
            good = rng.integers(0, 5, 4).astype(dtype)
            m(x, good, out)
            np.testing.assert_array_equal(out, x[good])

    def test_gather_from_an_empty_symbolic_axis(self):
        m = gather_module("int64")
        empty = np.zeros((0, 3), np.float32)
        with self.assertRaises(RuntimeError) as e:
            m(empty, np.arange(4, dtype=np.int64), np.zeros((4, 3), np.float32))
        self.assertIn("index 0 (at position 0) is out of range [0, 0)", str(e.exception))
        out = np.zeros((0, 3), np.float32)
        m(empty, np.zeros(0, np.int64), out)  # no index: nothing to read, nothing wrong


class WideIndexTest(unittest.TestCase):
    """Static tensors past 2^31 - 1 elements (each dim within int32) compile with 64-bit
    indices and compute what numpy does (before: refused; before that, SIGSEGV); symbolic
    shapes keep 32-bit indices and refuse such a call by name. int8 keeps it to 2 GiB a tensor."""

    @classmethod
    def setUpClass(cls):
        cls.shape = (2, 32768, 32771)  # 2^31 + 2^17 elements: dim 0's stride passes 2^31 - 1
        cls.x = np.random.default_rng().integers(-100, 100, cls.shape, dtype=np.int8)

    @classmethod
    def tearDownClass(cls):
        del cls.x

    def test_elementwise_and_broadcast(self):
        p = cinn_like.ProgramBuilder()
        x = p.input("x", "int8", list(self.shape))
        b = p.input("b", "int8", [self.shape[2]])
        p.output(p.op("add", [p.op("relu", [x]), b]))
        m = cinn_like.compile(p, "x86", "f")
        bv = np.random.default_rng().integers(-20, 20, self.shape[2], dtype=np.int8)
        out = np.zeros(self.shape, np.int8)
        m(self.x, bv, out)
        self.assertTrue(np.array_equal(out, np.maximum(self.x, 0) + bv))

    def test_reductions_slices_and_transposes(self):
        p = cinn_like.ProgramBuilder()
        x = p.input("x", "int8", list(self.shape))
        p.output(p.op("reduce_max", [x], {"axes": [2], "keepdim": False}))
        p.output(p.op("reduce_min", [x], {"axes": [0], "keepdim": False}))
        tail = p.op("slice", [x], {"axes": [1], "starts": [32760], "ends": [32768]})
        p.output(p.op("transpose", [tail], {"perm": [1, 0, 2]}))
        m = cinn_like.compile(p, "x86", "f")
        rows = np.zeros(self.shape[:2], np.int8)
        cols = np.zeros(self.shape[1:], np.int8)
        tail_t = np.zeros((8, 2, self.shape[2]), np.int8)
        m(self.x, rows, cols, tail_t)
        self.assertTrue(np.array_equal(rows, self.x.max(2)))
        self.assertTrue(np.array_equal(cols, self.x.min(0)))
        self.assertTrue(np.array_equal(tail_t, self.x[:, 32760:].transpose(1, 0, 2)))

    def test_symbolic_shapes_refuse_such_a_call(self):
        p = cinn_like.ProgramBuilder()
        x = p.input("x", "int8", ["a", 32768, 32771])
        p.output(p.op("neg", [x]))
        m = cinn_like.compile(p, "x86", "f")
        with self.assertRaises(RuntimeError) as e:
            m(self.x, np.zeros(self.shape, np.int8))
        self.assertIn("more than 2147483647 elements, which this function's 32-bit indexing "
                      "cannot address", str(e.exception))


class EmptyOutputsTest(unittest.TestCase):
    def test_a_call_whose_outputs_are_empty_returns_at_once(self):
        """Shape [2147483647, 0]: the entry returns before its loops (they walked the 2^31 - 1
        empty rows for minutes under the fuzz build; found by fuzz_c_api_call); a call with
        elements after it computes as usual."""
        p = cinn_like.ProgramBuilder()
        x = p.input("x", "float32", ["m", "n"])
        p.output(p.op("exp", [x]))
        m = cinn_like.compile(p, "x86", "f")
        m(np.zeros((2**31 - 1, 0), np.float32), np.zeros((2**31 - 1, 0), np.float32))
        x0 = np.random.default_rng().standard_normal((3, 4)).astype(np.float32)
        out = np.zeros_like(x0)
        m(x0, out)
        np.testing.assert_allclose(out, np.exp(x0), rtol=1e-6)


class EmptyAxisTest(unittest.TestCase):
    def test_argmin_and_argmax_of_an_empty_axis(self):
        """Refused when the axis is static (PyTorch raises), and at the call where a symbolic
        axis is bound to 0, naming the op (an earlier build gave 2147483647, found by
        fuzz_compile_run, then 0)."""
        for op in ("argmin", "argmax"):
            p = cinn_like.ProgramBuilder()
            x = p.input("x", "float64", [5, 0])
            with self.assertRaises(Exception) as e:
                p.output(p.op(op, [x], {"axis": 1}))
                cinn_like.compile(p, "x86", "f")
            self.assertIn(f"op {op}: axis 1 of input 0 (float64[5, 0]) is empty", str(e.exception))
            p = cinn_like.ProgramBuilder()
            x = p.input("x", "float64", [5, "n"])
            p.output(p.op(op, [x], {"axis": 1}))
            m = cinn_like.compile(p, "x86", "f")
            out = np.full(5, 7, np.int64)
            with self.assertRaises(cinn_like.CinnLikeError) as e:
                m(np.zeros((5, 0)), out)
            self.assertIn(f"n must be >= 1: op {op} reduces axis 1 of x (float64[5, n])",
                          str(e.exception))
            self.assertEqual(out.tolist(), [7] * 5)
            x0 = np.random.default_rng().standard_normal((5, 3))
            m(x0, out)
            want = np.argmin(x0, 1) if op == "argmin" else np.argmax(x0, 1)
            self.assertEqual(out.tolist(), want.tolist())


class IndexBoundsTest(unittest.TestCase):
    """index_add, one_hot and check_index raise on an index out of range, naming the op and the
    value (before: index_add skipped it and one_hot wrote a row of zeros), and compute on
    indices in range; check_index fuses with the ops reading its result."""

    def assert_raises_naming(self, fn, parts):
        with self.assertRaises(RuntimeError) as e:
            fn()
        for part in parts:
            self.assertIn(part, str(e.exception))

    def test_index_add(self):
        rng = np.random.default_rng()
        p = cinn_like.ProgramBuilder()
        x = p.input("x", "float32", ["n", 3])
        i = p.input("i", "int64", [4])
        u = p.input("u", "float32", [4, 3])
        p.output(p.op("index_add", [x, i, u], {"axis": 0}))
        m = cinn_like.compile(p, "x86", "f")
        x0 = rng.standard_normal((5, 3)).astype(np.float32)
        u0 = rng.standard_normal((4, 3)).astype(np.float32)
        out = np.zeros_like(x0)
        for bad, value in (([0, 5, 1, 1], 5), ([-1, 0, 0, 0], -1)):
            self.assert_raises_naming(lambda: m(x0, np.array(bad, np.int64), u0, out),
                                      ("op index_add", f"index {value}", "out of range [0, 5)",
                                       "x float32[n, 3]"))
        good = rng.integers(0, 5, 4)
        m(x0, good, u0, out)
        want = x0.astype(np.float64)
        np.add.at(want, good, u0)
        np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)

    def test_index_add_skipping_out_of_range_on_purpose(self):
        rng = np.random.default_rng()
        p = cinn_like.ProgramBuilder()
        x = p.input("x", "float32", [5, 3])
        i = p.input("i", "int64", [4])
        u = p.input("u", "float32", [4, 3])
        p.output(p.op("index_add", [x, i, u], {"axis": 0, "skip_out_of_range": True}))
        m = cinn_like.compile(p, "x86", "f")
        x0 = rng.standard_normal((5, 3)).astype(np.float32)
        u0 = rng.standard_normal((4, 3)).astype(np.float32)
        out = np.zeros_like(x0)
        m(x0, np.array([5, 2, -1, 2], np.int64), u0, out)
        want = x0.astype(np.float64)
        want[2] += u0[1] + u0[3]
        np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)

    def test_one_hot(self):
        p = cinn_like.ProgramBuilder()
        i = p.input("i", "int32", [2, 3])
        p.output(p.op("one_hot", [i], {"depth": 4, "dtype": "float32"}))
        m = cinn_like.compile(p, "x86", "f")
        out = np.zeros((2, 3, 4), np.float32)
        self.assert_raises_naming(lambda: m(np.array([[0, 1, 2], [3, 4, 0]], np.int32), out),
                                  ("op one_hot", "index 4 (at position 4)", "depth 4",
                                   "out of range [0, 4)"))
        good = np.random.default_rng().integers(0, 4, (2, 3)).astype(np.int32)
        m(good, out)
        np.testing.assert_array_equal(out, np.eye(4, dtype=np.float32)[good])

    def test_check_index_fused_with_its_readers(self):
        rng = np.random.default_rng()
        p = cinn_like.ProgramBuilder()
        x = p.input("x", "float32", [6])
        i = p.input("i", "int64", [5])
        c = p.op("check_index", [i], {"low": -6, "high": 6, "what": "x[i]"})
        neg = p.op("less", [c, p.op("fill", [], {"shape": [1], "value": 0.0, "dtype": "int64"})])
        six = p.op("fill", [], {"shape": [1], "value": 6.0, "dtype": "int64"})
        wrapped = p.op("where", [neg, p.op("add", [c, six]), c])
        p.output(p.op("gather", [x, wrapped], {"axis": 0}))
        m = cinn_like.compile(p, "x86", "f")
        x0 = rng.standard_normal(6).astype(np.float32)
        out = np.zeros(5, np.float32)
        for value in (6, -7):
            bad = np.array([0, 1, value, 2, 3], np.int64)
            self.assert_raises_naming(lambda: m(x0, bad, out),
                                      ("x[i]", f"index {value} (at position 2)",
                                       "out of range [-6, 6)"))
        good = rng.integers(-6, 6, 5)
        m(x0, good, out)
        np.testing.assert_array_equal(out, x0[good])

    def test_check_index_refuses_an_empty_range_backwards(self):
        p = cinn_like.ProgramBuilder()
        i = p.input("i", "int64", [5])
        with self.assertRaises(Exception) as e:
            p.output(p.op("check_index", [i], {"low": 3, "high": 2}))
            cinn_like.compile(p, "x86", "f")
        self.assertIn("low 3 is above high 2", str(e.exception))


if __name__ == "__main__":
    unittest.main()
