"""The persistent store (cinn_like/cache/store.h) through the C API: keys, records checked
under them, and a lock per key between processes. The torch backend keeps its graph plans here
(torch/plan_cache.py). The store names, seals, writes (atomically), checks and evicts the
files; what a record's payload means is its writer's business.

    k = store.key_of(text)
    store.put(directory, "plan", k, payload)
    got = store.get(directory, "plan", k)   # payload bytes, or a Miss saying why
    with store.locked(directory, k):        # one process at a time does k's work
        ...
"""
import collections
import contextlib
import ctypes

from ._lib import check, lib

# Why get found no record (CINN_LIKE_STORE_*): none under the key; one that did not check
# (removed); what is not a regular file, or a directory that is not this user's alone (left).
ABSENT, DAMAGED, REFUSED = 1, 2, 3

Miss = collections.namedtuple("Miss", ["reason", "why"])
Miss.__doc__ = "No record: `reason` ABSENT, DAMAGED or REFUSED; `why` the C API's message."


def _bytes(text):
    return text.encode() if isinstance(text, str) else bytes(text)


def key_of(text):
    """The store's key of `text` (str or bytes): its SHA-256 as 64 lower-case hex digits."""
    data = _bytes(text)
    return lib.cinn_like_store_key(data, len(data)).decode()


def get(directory, kind, key):
    """The payload (bytes) of the record of `kind` ("plan") under `key` in the store at
    `directory`, marked recently used; else a Miss."""
    data, size, miss = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_int()
    if lib.cinn_like_store_get(_bytes(directory), _bytes(kind), _bytes(key), ctypes.byref(data),
                               ctypes.byref(size), ctypes.byref(miss)) != 0:
        return Miss(miss.value, lib.cinn_like_get_last_error().decode())
    return ctypes.string_at(data, size.value) if size.value else b""


def put(directory, kind, key, payload):
    """Writes `payload` (bytes) as the record of `kind` under `key`, atomically; raises
    CinnLikeError (naming the path) where it cannot."""
    payload = _bytes(payload)
    check(lib.cinn_like_store_put(_bytes(directory), _bytes(kind), _bytes(key), payload,
                                  len(payload)), "store.put")


@contextlib.contextmanager
def locked(directory, key, max_wait_ms=120000):
    """Holds the store's lock of `key` in the block (a holder in another process or thread
    waited for, at most `max_wait_ms`, after which the block runs unlocked); yields whether it
    waited. Raises CinnLikeError for a key or directory the store refuses."""
    handle, waited = ctypes.c_void_p(), ctypes.c_int()
    check(lib.cinn_like_store_lock_key(_bytes(directory), _bytes(key), max_wait_ms,
                                       ctypes.byref(handle), ctypes.byref(waited)), "store.locked")
    try:
        yield bool(waited.value)
    finally:
        lib.cinn_like_store_unlock(handle)
