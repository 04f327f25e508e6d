"""Memory layouts of tensor values: dense strides, the order of a dense non-row-major layout
(channels-last, a transpose), and a shape in memory order. A Program tensor whose value is
stored in another order is declared in that order (kernel.build_program).
"""
from .sizes import is_symbolic


def dense(t):
    """True when t's strides are a permutation of a row-major layout (no overlap, no gap):
    strides a fresh tensor can be given."""
    dims = sorted((st, sz) for st, sz in zip(t.stride(), t.shape) if sz != 1)
    expect = 1
    for st, sz in dims:
        if st != expect:
            return False
        expect *= sz
    return True


def memory_order(meta):
    """The dims of `meta` from outermost to innermost in memory where its strides are dense but
    not row-major (channels-last: (0, 2, 3, 1)), else None. Dims of size 1 may sit anywhere.
    None for symbolic sizes (asking would guard on them): such tensors are row-major."""
    if meta.dim() < 2 or is_symbolic(meta) or meta.is_contiguous() or not dense(meta):
        return None
    sizes, strides = tuple(meta.shape), tuple(meta.stride())
    order = tuple(sorted(range(meta.dim()), key=lambda d: (-strides[d], d)))
    if order == tuple(range(meta.dim())) or strides_in_order(sizes, order) != tuple(
            st if sz != 1 else 0 for st, sz in zip(strides, sizes)):
        return None
    return order


def strides_in_order(sizes, order):
    """The strides of a tensor of `sizes` stored in `order`, with 0 for dims of size 1."""
    strides, step = [0] * len(sizes), 1
    for d in reversed(order):
        strides[d] = step if sizes[d] != 1 else 0
        step *= max(sizes[d], 1)
    return tuple(strides)


def inverse_order(order):
    inv = [0] * len(order)
    for k, d in enumerate(order):
        inv[d] = k
    return inv


def stored_shape(shape, order):
    """`shape` in memory order `order` (None: as it is)."""
    return shape if order is None else tuple(shape[d] for d in order)
