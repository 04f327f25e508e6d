"""cinn_like.torch: a torch.compile backend over cinn_like.

    import torch, cinn_like.torch
    model = torch.compile(model, backend="cinn_like")
    cinn_like.torch.fallback_report()   # [(op, reason), ...] of what ran in PyTorch
    cinn_like.torch.stats()             # compiles, cache_hits, partitions, ops_compiled, ...
    cinn_like.torch.set_options(deny=["_softmax"], allow=[], strict=True)  # policy.py; also
    # torch.compile(..., options={"deny": [...]}) and CINN_LIKE_TORCH_ALLOW/_DENY/_STRICT

backend="cinn_like" resolves through the `torch_dynamo_backends` entry point when the package
is installed (pip install cinn_like/python); importing cinn_like.torch also registers it by
name (torch._dynamo.register_backend), for a checkout on PYTHONPATH.
"""
from .backend import cinn_like_backend, compile_graph
from .cache import fallback_report, reset, set_flags, stats
from .policy import FallbackError, get_options, set_options


def _register():
    from torch._dynamo import list_backends, register_backend  # noqa: PLC0415
    try:
        registered = "cinn_like" in list_backends(exclude_tags=())
    except Exception:  # noqa: BLE001 (list_backends differs across versions)
        registered = False
    if not registered:
        try:
            register_backend(cinn_like_backend, name="cinn_like")
        except Exception:  # noqa: BLE001 (already registered through the entry point)
            pass


_register()

__all__ = ["cinn_like_backend", "compile_graph", "fallback_report", "stats", "reset", "set_flags",
           "set_options", "get_options", "FallbackError"]
