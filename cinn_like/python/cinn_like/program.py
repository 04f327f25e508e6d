"""ProgramBuilder: writes the JSON form of a Program (frontend/program_json.h) from Python.

    b = ProgramBuilder()
    x = b.input("x", "float32", ["n", 64])
    y = b.op("relu", [x])
    b.output(y)
    b.to_json()

Attribute values keep their kind: bool, int, float, str, a list of ints, a list of floats, and
a shape (a list of sizes and symbolic sizes such as "s0*s1", for a reshape under dynamic shapes).
Shapes and dtypes are checked by cinn_like when the Program is compiled.
"""
import json
import math


def _attr(value):
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": _float(value)}
    if isinstance(value, str):
        return {"string": value}
    if isinstance(value, (list, tuple)):
        # An empty list is an int list (axes, shapes): the common case.
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return {"ints": list(value)}
        # Sizes with symbolic ones ("s0*s1"): a shape.
        if any(isinstance(v, str) for v in value):
            return {"shape": list(value)}
        return {"floats": [_float(float(v)) for v in value]}
    raise TypeError(f"attribute value {value!r} has no Program kind")


def _float(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


class ProgramBuilder:
    def __init__(self):
        self._inputs, self._instructions, self._outputs = [], [], []
        self._symbols = {}
        self._count = 0

    def _fresh(self, op):
        self._count += 1
        return f"{op}_{self._count}"

    def input(self, name, dtype, shape):
        self._inputs.append({"name": name, "dtype": dtype, "shape": list(shape)})
        return name

    def op(self, op, inputs, attrs=None, num_outputs=1, names=None):
        """Adds an instruction; returns its output name (or names when num_outputs > 1)."""
        outs = list(names) if names else [self._fresh(op) for _ in range(num_outputs)]
        self._instructions.append({"op": op, "inputs": list(inputs), "outputs": outs,
                                   "attrs": {k: _attr(v) for k, v in (attrs or {}).items()}})
        return outs[0] if num_outputs == 1 and not names else outs

    def output(self, name):
        self._outputs.append(name)

    def symbol(self, name, min=None, max=None):  # noqa: A002 (the JSON's words)
        """Bounds of an input's symbolic size `name` that every call must keep (a framework's
        guards: s0 >= 2); the compiled function refuses a call outside them."""
        bounds = {k: v for k, v in (("min", min), ("max", max)) if v is not None}
        self._symbols.setdefault(name, {}).update(bounds)

    def to_dict(self):
        d = {"format": "cinn_like.program", "version": 1, "inputs": self._inputs,
             "instructions": self._instructions, "outputs": self._outputs}
        if self._symbols:
            d["symbols"] = self._symbols
        return d

    def to_json(self):
        return json.dumps(self.to_dict())
