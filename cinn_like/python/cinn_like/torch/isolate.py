"""Failure isolation: when a partition fails to compile, find the op at fault so that only it
runs in PyTorch and the rest of the partition still compiles.

The partition's ops, in topological order and each with its getitems (a multi-output op and
its projections are one unit), are cut into prefixes; the smallest prefix that fails to
compile ends with the op at fault, and binary search finds it in log2(n) compiles. The message
of that failing compile is the op's fallback reason. A failure that only a combination of ops
causes (two ops in one fusion group) is charged to the later op, which breaks the combination.
"""
import operator

from torch.fx.passes.utils.fuser_utils import fuse_as_graphmodule


def units(nodes):
    """`nodes` (topologically sorted) grouped as [op, its getitems...] per op."""
    out, index = [], {}
    for n in nodes:
        if n.target is operator.getitem and n.args[0] in index:
            out[index[n.args[0]]].append(n)
        else:
            index[n] = len(out)
            out.append([n])
    return out


def try_compile(gm, nodes, compile_fn, fused=None):
    """None when `nodes` of gm compile as one partition, else the exception. compile_fn takes
    fuse_as_graphmodule's (submodule, inputs, outputs) of them: `fused`, when made already."""
    try:
        compile_fn(fused or fuse_as_graphmodule(gm, nodes, "cinn_like_trial"))
        return None
    except Exception as e:  # noqa: BLE001 (any failure counts, as in the backend)
        return e


def find_culprit(gm, nodes, compile_fn, error):
    """(op node at fault, the error of the smallest failing prefix) for the partition `nodes`
    (topologically sorted) of gm, whose compile raised `error`."""
    us = units(nodes)
    lo, hi = 0, len(us)  # prefix lo compiles (the empty one does), prefix hi fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        e = try_compile(gm, [n for u in us[:mid] for n in u], compile_fn)
        if e is None:
            lo = mid
        else:
            hi, error = mid, e
    return us[hi - 1][0], error
