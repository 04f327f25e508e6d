"""The errors the torch backend's layers share: the one below everything else in the package.

A converter or a size helper that cannot express a node raises Unsupported with the reason; the
partitioner leaves that node to PyTorch and the fallback report quotes the reason.
"""


class Unsupported(Exception):
    """The reason a node stays in PyTorch."""
