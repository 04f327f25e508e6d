"""The CUDA-graph mode (option cudagraphs=True, or torch.compile's mode="reduce-overhead"): a
compiled graph whose inputs are all CUDA tensors is captured once into a CUDA graph, with the
partitions' kernels, their library calls and the ops left to PyTorch, and each later call is
one replay: no Python, no dispatcher and no launch per op.

Inputs. A graph reads fixed addresses, so each input position is one of two kinds, learned from
the calls: positions whose tensor kept its address from the first call to the second (the
parameters and buffers of a model) are read in place, and positions whose address changed (a
new batch) get a buffer of the graph's own into which each call copies its tensor (one
`_foreach_copy_` for all of them). If a position read in place later comes with another
address, it becomes a copied one and the graph is captured again (at most once per position).
Reading in place is exact whatever tensor now owns the address: the caller passes a tensor
whose data is at it.

Outputs live in the graph's memory pool and a replay overwrites them. A call returns aliases of
them (no copy) as long as the caller lets the previous results go before the next call: before
each replay the outputs' storages are checked for holders besides the graph
(`_storage_Use_Count`, as PyTorch's own CUDA-graph trees do). When a caller kept a result (or a
view of one), the graph is captured again into fresh output buffers (the kept ones stay the
caller's) and from then on each call returns copies (one more kernel): a result stays valid
however long the caller keeps it, in both modes. A loop `y = g(x)` still holds the previous `y`
while the next call runs, so it gets copies after one more capture; a loop that uses each result
and lets it go (`del y`, or a result consumed in an expression) gets aliases.

Workspaces of the compiled partitions come from PyTorch's caching allocator on the capturing
stream, hence from the graph's private pool. A graph that cannot be captured (an op that
synchronises, CPU tensors among the inputs, an op that writes one of its inputs) runs as it is,
with the reason in `reason` and a warning once.
"""
import warnings

import torch

from . import cache, write_back


def _mutates_inputs(gm):
    for n in gm.graph.nodes:
        schema = getattr(n.target, "_schema", None)
        if n.op == "call_function" and schema is not None and schema.is_mutable:
            return str(n.target)
        if write_back.is_write_back(n):  # the backend keeps none in this mode: a safeguard
            return "inputs written back (write_back.copy_inputs)"
    return None


class CudaGraphed:
    """Calls `fn` (a compiled graph's forward) through a CUDA graph where it can."""

    def __init__(self, gm, fn):
        self.fn = fn
        self.reason = None  # why this graph runs without a CUDA graph
        mutating = _mutates_inputs(gm)
        if mutating:
            self.reason = f"the graph writes an input ({mutating})"
        self.graph = None
        self.captures = 0
        self._first = None  # the first call's input addresses
        self._copied = set()  # positions copied into the graph's own buffers
        self._buffers = {}
        self._addresses = None  # the addresses the graph reads, per position
        self._outputs = None
        self._static = []  # the output tensors among self._outputs
        # Their storages (`_cdata`) and use counts with only the graph holding them.
        self._storage_baselines = ()
        self._in_place_pairs = ()  # (position, address) of the inputs read in place
        self._copy_order = []  # positions copied at each call, and the buffers they go to
        self._copy_targets = []
        self._copy_out = False  # return copies (a caller kept results)
        self._give = torch.Tensor.detach  # how a call returns each output: clone when copies
        self._single = False  # the graph returns one tensor, not a sequence
        self._all_tensors = False  # its sequence holds only tensors
        self._sequence = tuple  # the sequence's type
        self._pool = None

    def _refuse(self, reason):
        self.reason = reason
        warnings.warn(f"cinn_like.torch: CUDA graphs off for a graph: {reason}", stacklevel=3)

    def __call__(self, *args):
        """The common call, checked here and replayed by _replay (it is most of the host time
        a replayed graph costs): the inputs read in place are where the graph reads them and no
        caller holds its outputs (unless it returns copies); then copy the moved inputs,
        replay, and return the outputs. Any other call goes to _first_calls."""
        if self.graph is None:
            return self._first_calls(args)
        for i, address in self._in_place_pairs:
            if args[i].data_ptr() != address:
                return self._first_calls(args)
        if not self._copy_out and self._held():
            return self._first_calls(args)
        return self._replay(args)

    def _replay(self, args):
        if self._copy_order:
            torch._foreach_copy_(self._copy_targets, [args[i] for i in self._copy_order])
        self.graph.replay()
        _replays[0] += 1
        give = self._give
        if self._single:
            return give(self._outputs)
        if self._all_tensors:
            return self._sequence(map(give, self._outputs))
        return self._sequence(give(o) if isinstance(o, torch.Tensor) else o
                              for o in self._outputs)

    def _first_calls(self, args):
        """A call the graph does not serve as it is: the first (run as it is), the second
        (captured), an input read in place that moved, or a caller that kept results."""
        if self.reason is not None:
            return self.fn(*args)
        if self._first is None:  # the first call runs as it is and warms everything up
            # Dynamo's guards keep later calls' inputs of the same kinds as this one's.
            if not all(isinstance(a, torch.Tensor) and a.is_cuda for a in args):
                self._refuse("an input is not a CUDA tensor")
            else:
                self._first = [a.data_ptr() for a in args]
            return self.fn(*args)
        if self.graph is None:
            addresses = [a.data_ptr() for a in args]
            self._copied = {i for i, (a, b) in enumerate(zip(addresses, self._first)) if a != b}
            if not self._capture(args):
                return self.fn(*args)
        elif any(args[i].data_ptr() != address for i, address in self._in_place_pairs):
            moved = {i for i, address in self._in_place_pairs if args[i].data_ptr() != address}
            self._copied |= moved
            if not self._capture(args):
                return self.fn(*args)
        if not self._copy_out and self._held():
            self._copy_out = True  # this caller keeps results: fresh buffers, then copies
            self._give = torch.Tensor.clone
            if not self._capture(args):
                return self.fn(*args)
        return self._replay(args)

    def _graph_args(self, args):
        for i in self._copied:
            if i not in self._buffers:
                self._buffers[i] = torch.empty_like(args[i])
        return [self._buffers[i] if i in self._copied else a for i, a in enumerate(args)]

    def _capture(self, args):
        static = self._graph_args(args)
        for i in self._copied:
            self._buffers[i].copy_(args[i])
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # the warm-up PyTorch asks for before a capture
                self.fn(*static)
            torch.cuda.current_stream().wait_stream(side)
            if self._pool is None:
                self._pool = torch.cuda.graph_pool_handle()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=self._pool):
                outputs = self.fn(*static)
        except Exception as e:  # noqa: BLE001 (any failure to capture: run without graphs)
            self.graph = None
            self._refuse(f"capture failed: {type(e).__name__}: {e}")
            return False
        self.graph = graph
        self.captures += 1
        cache.count("cudagraph_captures")
        self._outputs = outputs
        self._single = isinstance(outputs, torch.Tensor)
        flat = [outputs] if self._single else list(outputs)
        self._static = [o for o in flat if isinstance(o, torch.Tensor)]
        self._all_tensors = len(self._static) == len(flat)
        self._sequence = type(outputs)
        # The outputs' storages, kept alive by self._outputs: their use counts are read at
        # each call without making a storage object per output.
        storages = [o.untyped_storage()._cdata for o in self._static]
        self._storage_baselines = tuple((c, _use_count(c)) for c in storages)
        self._addresses = [a.data_ptr() for a in static]
        for i in self._copied:
            self._addresses[i] = None
        self._in_place_pairs = tuple((i, self._addresses[i]) for i in range(len(static))
                                     if i not in self._copied)
        self._copy_order = sorted(self._copied)
        self._copy_targets = [self._buffers[i] for i in self._copy_order]
        return True

    def _held(self):
        """Whether something besides the graph holds an output's storage (the caller kept the
        last results, or views of them)."""
        for storage, baseline in self._storage_baselines:
            if _use_count(storage) != baseline:
                return True
        return False


# How many tensors (views included) share the storage whose `_cdata` is the argument (None in
# a PyTorch without it: graphs then run without CUDA graphs, see wrap).
_use_count = getattr(torch._C, "_storage_Use_Count", None)
_replays = cache.cell("cudagraph_replays")


def wrap(gm, fn):
    """`fn` through a CudaGraphed when gm's inputs are CUDA tensors of static sizes (by their
    metadata), else `fn`."""
    metas = [n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"]
    if not metas or not all(isinstance(m, torch.Tensor) and m.is_cuda for m in metas):
        return fn
    if any(not isinstance(d, int) for m in metas for d in m.shape):
        return fn  # a graph of symbolic sizes: a capture holds one size's addresses and shapes
    if _use_count is None:
        warnings.warn("cinn_like.torch: CUDA graphs off: this PyTorch cannot count a storage's "
                      "users (torch._C._storage_Use_Count)", stacklevel=2)
        return fn
    return CudaGraphed(gm, fn)
