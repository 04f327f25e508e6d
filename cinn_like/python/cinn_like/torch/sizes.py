"""Sizes as Programs write them: Dynamo's symbolic sizes (SymInts) as polynomial texts, the
questions a converter may ask about them, and contiguous strides.

A SymInt size (`s0`, `s0*s1` after a view) becomes the text of its polynomial in the Program
(cinn_like parses it: hlir/sym_expr.h). A converter that asks for a symbolic size's value (int()
of a SymInt, a comparison) would add a guard and specialise the graph to this call's size:
`no_new_guards` turns such a question into Unsupported, so the node stays in PyTorch with the
reason, and the rest compiles symbolically.
"""
import contextlib

import torch

from . import cache
from .errors import Unsupported


def size_text(d):
    """The text of a symbolic size (a SymInt) as a polynomial of its symbols ("s0*s1 + 1"), or
    its int where the size is a known number; Unsupported for any other expression (FloorDiv,
    Mod, Max)."""
    expr = size_expr(d)
    if expr.is_number:
        return int(expr)
    return poly_text(expr)


def size_expr(d):
    """A SymInt's expression with what the shape environment knows substituted: its
    replacements, and the symbols that a guard fixed (Eq(s0, 1) in a graph Dynamo traced for
    size 1 under backed_size_oblivious, which keeps s0 in the graph's metadata)."""
    env = d.node.shape_env
    if env is None:
        return d.node.expr
    expr = env.simplify(d.node.expr)
    fixed = _fixed_symbols(env)
    return expr.xreplace(fixed) if fixed and not expr.is_number else expr


def _fixed_symbols(env):
    """{symbol: number} of env's guards Eq(symbol, number), cached per number of guards."""
    cached = env.__dict__.get("_cinn_like_fixed")
    if cached is not None and cached[0] == len(env.guards):
        return cached[1]
    fixed = {}
    for g in env.guards:
        e = g.expr
        if getattr(e, "is_Relational", False) and e.rel_op == "==":
            a, b = e.lhs, e.rhs
            if a.is_Symbol and b.is_Integer:
                fixed[a] = b
            elif b.is_Symbol and a.is_Integer:
                fixed[b] = a
    env.__dict__["_cinn_like_fixed"] = (len(env.guards), fixed)
    return fixed


def poly_text(e, names=None):
    """The text of polynomial `e` (the Program's syntax, which is Python's too), each symbol by
    its name in `names` where it has one."""
    if e.is_Symbol:
        return (names or {}).get(e.name, e.name)
    if e.is_Integer:
        return str(int(e))
    if e.is_Add:
        return "(" + " + ".join(poly_text(a, names) for a in e.args) + ")"
    if e.is_Mul:
        return "*".join(f"({poly_text(a, names)})" if a.is_Add else poly_text(a, names)
                        for a in e.args)
    if e.is_Pow and e.exp.is_Integer and int(e.exp) > 0:
        return "*".join([f"({poly_text(e.base, names)})"] * int(e.exp))
    raise Unsupported(f"symbolic size {e} is not a polynomial of sizes")


def is_polynomial(e):
    try:
        poly_text(e)
        return True
    except Unsupported:
        return False


def is_symbolic(t):
    """Whether a tensor value has a size that is not a known number."""
    return any(not isinstance(d, int) and not size_expr(d).is_number for d in t.shape)


def _shape_env(node):
    for v in [node.meta.get("val")] + [a.meta.get("val") for a in node.all_input_nodes]:
        values = v if isinstance(v, (list, tuple)) else [v]
        for x in values:
            if isinstance(x, torch.Tensor):
                for d in x.shape:
                    if isinstance(d, torch.SymInt):
                        return d.node.shape_env
            elif isinstance(x, torch.SymInt):
                return x.node.shape_env
    return None


@contextlib.contextmanager
def no_new_guards(node):
    """Converting `node` may not specialise a symbolic size: within this context a question
    about sizes that their known facts (Dynamo's guards so far) do not answer raises
    Unsupported instead of adding a guard (the graph would be specialised to this call's size).
    A guard added some other way is counted (`symbolic_specializations`)."""
    env = _shape_env(node)
    if env is None:
        yield
        return
    before = len(env.guards)
    original = env.evaluate_expr
    own = env.__dict__.get("evaluate_expr")  # restored exactly (None: the class's method)

    def answered_only(expr, hint=None, fx_node=None, size_oblivious=False, fallback_value=None,
                      **kwargs):
        # Only what the facts answer: a question with a fallback (guard_or_false) still guards
        # on sizes known at trace time; size-oblivious ones are answered as PyTorch would.
        if env._maybe_evaluate_static(expr, size_oblivious=size_oblivious) is None:
            raise Unsupported(f"symbolic shape: converting {op_label(node)} needs to know "
                              f"whether {expr}")
        return original(expr, hint, fx_node, size_oblivious, fallback_value, **kwargs)

    env.evaluate_expr = answered_only
    try:
        yield
    finally:
        if own is None:
            env.__dict__.pop("evaluate_expr", None)
        else:
            env.evaluate_expr = own
        if len(env.guards) > before:
            cache.count("symbolic_specializations")
            cache.log.warning("cinn_like.torch: converting %s specialised a symbolic size: %s",
                              node.format_node(), env.guards[before:])


def op_label(node):
    name = getattr(getattr(node.target, "overloadpacket", None), "__name__", None)
    return str(node.target) if name is None else name  # str() only where needed: it is slow


def contiguous_strides(shape):
    """The row-major strides of `shape`, as PyTorch gives a fresh tensor: a dim of size 0 counts
    as 1; a symbolic size (SymInt) is multiplied as it is, asking nothing about its value."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1) if isinstance(size, int) else size
    return tuple(reversed(strides))


def stride_texts(shape):
    """Python texts of the contiguous strides of a shape of Python texts."""
    strides, step = [], "1"
    for s in reversed(shape):
        strides.append(step)
        step = f"({s})*{step}" if step != "1" else f"({s})"
    return list(reversed(strides))
