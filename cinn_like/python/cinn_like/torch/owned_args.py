"""A backward graph that frees what it is given as it goes. AOTAutograd calls a compiled
backward with one list, the saved activations and the gradients of the outputs, and holds none
of them itself meanwhile (it clears the saved tensors and hands the list over, unless the
caller retains the graph: then dropping them only drops references): a backward that clears the
list and drops each value after its last use frees each saved activation once it has read it
for the last time, as Inductor's does. Without it a backward holds every saved activation until
it returns, beside the gradients of the first layers (a CNN's peak).

A value dropped inside a kernel's call goes back to PyTorch's caching allocator while kernels
that read it may still be queued: safe because the backward runs on the stream the forward
allocated its values on (autograd's default, which Inductor's frees rely on too), so the
allocator hands the memory out again only to work queued after them.

Two steps make the graph's code own its values:
- its function takes the list and clears it (`ArgsListCodeGen`), FX then dropping each value
  after its last user;
- each kernel call takes its inputs in a list made just before it (`_hand_over`: FX drops the
  graph's own references after it, where that is their last use), from which the kernel drops
  each input after the last statement that reads it (CinnLikeKernel.call_owned), so that a
  kernel that is most of the backward frees the saved activations inside its one call.
"""
import torch


class ArgsListCodeGen(torch.fx.graph.CodeGen):
    """FX code whose function takes its placeholders in one list, which it unpacks and clears;
    those named in `unused` (FX frees a value after its last user, and these have none) are
    dropped at once."""

    def __init__(self, unused=()):
        super().__init__()
        self.unused = tuple(unused)

    def gen_fn_def(self, free_vars, maybe_return_annotation, **kwargs):
        names = [v.split(":")[0].split("=")[0].strip() for v in free_vars]
        names = [n for n in names if n != "self"]
        name = getattr(self, "_func_name", "forward")
        lines = [f"def {name}(self, args){maybe_return_annotation}:"]
        if names:
            lines.append(f"    {', '.join(names)}, = args")
            lines.append("    args.clear()")
        unused = [n for n in names if n in self.unused]
        if unused:
            lines.append(f"    {' = '.join(unused)} = None")
        return "\n".join(lines)


def _hand_over(*values):
    """The list a kernel's owned call takes its inputs in."""
    return list(values)


def own_args(gm, kernels):
    """Makes gm's code own its arguments (the module's docstring): its function takes them in a
    list, and each call of a kernel in `kernels` (its call function -> the kernel) hands its
    inputs over in a list of their own."""
    graph = gm.graph
    for node in list(graph.nodes):
        kernel = kernels.get(node.target) if node.op == "call_function" else None
        if kernel is None or node.kwargs or not hasattr(kernel, "call_owned"):
            continue
        with graph.inserting_before(node):
            inputs = graph.call_function(_hand_over, tuple(node.args))
        node.target = kernel.call_owned
        node.args = (inputs,)
    unused = [n.name for n in graph.nodes if n.op == "placeholder" and not n.users]
    graph.set_codegen(ArgsListCodeGen(unused))


def boxed(forward):
    """AOTAutograd's boxed calling convention for a forward made by own_args: the list as it is."""
    def call(args):
        return forward(args)
    call._boxed_call = True
    return call
