"""The README's Python example (tests/python/test_readme.py runs it): softmax(x + bias) over
rows of any count, compiled for x86 and called on numpy arrays."""
import numpy as np

import cinn_like

b = cinn_like.ProgramBuilder()
x = b.input("x", "float32", ["n", 64])  # n: a symbolic size, bound at each call
bias = b.input("bias", "float32", [64])
b.output(b.op("softmax", [b.op("add", [x, bias])], {"axis": -1}))
f = cinn_like.compile(b, target="x86", name="f")  # compiled once, then kept in the disk cache

rng = np.random.default_rng(0)
for n in (1, 7, 100):
    xv = rng.standard_normal((n, 64), dtype=np.float32)
    bv = rng.standard_normal(64, dtype=np.float32)
    out = np.empty((n, 64), np.float32)
    f(xv, bv, out)  # inputs, then outputs: written in place, no copies
    e = np.exp(xv + bv - (xv + bv).max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
print("ok: softmax matches numpy for n = 1, 7, 100")
