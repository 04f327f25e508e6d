"""The Python package over the C API: compile a Program, call it on numpy arrays through DLPack
(no copies: outputs are written in place), errors as exceptions, flags by name."""
import os
import unittest

import numpy as np

import cinn_like
from api_util import compile_for_cuda, files_ending, saved_cuda_sources


def bias_gelu_program():
    b = cinn_like.ProgramBuilder()
    x = b.input("x", "float32", ["n", 16])
    w = b.input("w", "float32", [16])
    b.output(b.op("gelu", [b.op("add", [x, w])], {"approximate": "tanh"}))
    return b


class ApiTest(unittest.TestCase):
    def test_compile_and_call_on_numpy_in_place(self):
        m = cinn_like.compile(bias_gelu_program(), "x86", "f")
        self.assertEqual(m.signature["inputs"][0]["shape"], ["n", 16])
        rng = np.random.default_rng()
        for n in (1, 5, 33):
            x = rng.standard_normal((n, 16)).astype(np.float32)
            w = rng.standard_normal(16).astype(np.float32)
            out = np.full((n, 16), np.nan, np.float32)
            m(x, w, out)
            v = (x + w).astype(np.float64)
            ref = 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))
            np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)

    def test_errors_are_exceptions_naming_the_cause(self):
        m = cinn_like.compile(bias_gelu_program(), "x86", "f")
        x, w = np.ones((2, 16), np.float32), np.ones(16, np.float32)
        with self.assertRaisesRegex(cinn_like.CinnLikeError, "expected 3 tensor arguments"):
            m(x, w)
        with self.assertRaisesRegex(cinn_like.CinnLikeError, "float64"):
            m(x, w.astype(np.float64), np.empty((2, 16), np.float32))
        bad = cinn_like.ProgramBuilder()
        a = bad.input("a", "float32", [4, 3])
        c = bad.input("c", "float32", [5, 3])
        bad.output(bad.op("add", [a, c]))
        with self.assertRaisesRegex(cinn_like.CinnLikeError, r"\[4, 3\] and \[5, 3\] do not broadcast"):
            cinn_like.compile(bad, "x86", "g")
        with self.assertRaisesRegex(TypeError, "DLPack"):
            m([1.0], w, x)

    def test_clip_refuses_a_nan_bound(self):
        b = cinn_like.ProgramBuilder()
        x = b.input("x", "float32", [4])
        b.output(b.op("clip", [x], {"min": 0.0, "max": float("nan")}))
        with self.assertRaisesRegex(cinn_like.CinnLikeError,
                                    "op clip: attribute 'max' is NaN; clamp with a NaN bound"):
            cinn_like.compile(b, "x86", "clip_nan")

    def test_flags_by_name(self):
        cinn_like.set_flags(cinn_like_fast_math=False)
        with self.assertRaisesRegex(cinn_like.CinnLikeError, "unknown flag"):
            cinn_like.set_flags(cinn_like_no_such_flag=1)

    def test_only_cinn_likes_own_flags_are_set(self):
        # gflags' flagfile once exited the process; glog's v changed the host's logging.
        for name, value in [("flagfile", "/nonexistent"), ("fromenv", "cinn_like_fusion"),
                            ("tryfromenv", "cinn_like_fusion"), ("v", 3), ("logtostderr", True)]:
            with self.assertRaisesRegex(cinn_like.CinnLikeError,
                                        f"unknown flag '{name}': only cinn_like's flags can be set"):
                cinn_like.set_flags(**{name: value})
        with self.assertRaisesRegex(cinn_like.CinnLikeError, "invalid value '7'.*of type bool"):
            cinn_like.set_flags(cinn_like_fusion=7)
        cinn_like.set_flags(cinn_like_fusion=True)

    def test_empty_tensors_are_a_no_op_call(self):
        m = cinn_like.compile(bias_gelu_program(), "x86", "f")
        out = np.empty((0, 16), np.float32)
        m(np.empty((0, 16), np.float32), np.ones(16, np.float32), out)
        self.assertEqual(out.shape, (0, 16))


class CudaSourceTest(unittest.TestCase):
    """Programs the torch backend builds from OpInfo samples whose CUDA compile never ended
    (a 'died' on the GPU machine) compile to PTX, which needs no GPU (without a driver the
    module load is the one error), with a source under 1 MB:
    - a float16 grid sampler: the CUDA printer printed each 16-bit cast's operand twice;
    - isin (an all-pairs sort): inlining every stage of a GPU group copied producers read at
      several indices into each read, exponentially (now past a budget they are kernels)."""

    def compile_to_ptx(self, name):
        with open(os.path.join(os.path.dirname(__file__), "data", name)) as f:
            program = f.read()
        with saved_cuda_sources() as d:
            compile_for_cuda(self, program, "k")
            sources = files_ending(d, ".cu")
            self.assertTrue(sources, os.listdir(d))
            self.assertLess(max(os.path.getsize(p) for p in sources), 1 << 20)

    def test_float16_grid_sampler(self):
        self.compile_to_ptx("grid_sampler_f16.program.json")

    def test_isin_all_pairs_sort(self):
        self.compile_to_ptx("isin_f32.program.json")

if __name__ == "__main__":
    unittest.main()
