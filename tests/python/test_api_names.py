"""Names a user gives (tensors, symbolic dims, entries) never break or change generated code:
keywords, CUDA builtins, C math functions, runtime symbols, non-identifiers, and a dim named
like a tensor. Before: NVRTC rejected the CUDA source (`float* __restrict__ __global__`,
duplicate parameter `n`), and an x86 entry named `expf` shadowed libm's expf in its own code
(silently wrong results) or collided with the runtime (`cinn_like_alloc_workspace`)."""
import os
import unittest

import numpy as np

import cinn_like
from api_util import compile_for_cuda, files_ending, saved_cuda_sources

# (tensor names a, b, out; symbolic dim; entry name)
NAMES = [
    (["int", "float", "return"], "n", "main"),
    (["threadIdx", "float4", "__global__"], "blockDim", "if"),
    (["a b-c", "9x", "o.1"], "n m", "my entry"),
    (["x", "x_1", "f_kernel"], "x", "f"),  # a dim and a tensor alike; the kernel's own name
    (["n", "m", "out"], "n", "k"),
    (["expf", "sqrtf", "max"], "cinn_like_n", "expf"),
    (["malloc", "memcpy", "cinn_like_call"], "free", "cinn_like_alloc_workspace"),
]


def program(a, b, out, dim):
    p = cinn_like.ProgramBuilder()
    x = p.input(a, "float32", [dim, 4])
    y = p.input(b, "float32", [dim, 4])
    # exp, sqrt and max are what the kernel calls by name: a tensor named like one must not
    # shadow it.
    p.output(p.op("maximum", [p.op("exp", [x]), p.op("sqrt", [p.op("abs", [y])])], names=[out])[0])
    return p


class GeneratedNamesTest(unittest.TestCase):
    def test_x86_runs_and_matches_numpy(self):
        rng = np.random.default_rng()
        for (a, b, out), dim, entry in NAMES:
            with self.subTest(entry=entry, names=(a, b, out, dim)):
                m = cinn_like.compile(program(a, b, out, dim), "x86", entry)
                for n in (1, 7):
                    x = rng.standard_normal((n, 4)).astype(np.float32)
                    y = rng.standard_normal((n, 4)).astype(np.float32)
                    got = np.full((n, 4), np.nan, np.float32)
                    m(x, y, got)
                    want = np.maximum(np.exp(x.astype(np.float64)), np.sqrt(np.abs(y.astype(np.float64))))
                    np.testing.assert_allclose(got, want, rtol=1e-5)

    def test_cuda_source_compiles(self):
        for (a, b, out), dim, entry in NAMES:
            with self.subTest(entry=entry, names=(a, b, out, dim)), saved_cuda_sources() as d:
                compile_for_cuda(self, program(a, b, out, dim), entry)
                self.assertTrue(files_ending(d, ".ptx"), os.listdir(d))


if __name__ == "__main__":
    unittest.main()
