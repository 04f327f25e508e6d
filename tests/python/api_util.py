"""Shared by the Python package's tests: compiling for CUDA on a machine without a GPU; a
compile cache directory of a test's own."""
import contextlib
import os
import tempfile
import unittest

import cinn_like


@contextlib.contextmanager
def saved_cuda_sources():
    """A folder that receives the CUDA source and PTX of the compiles inside the block."""
    with tempfile.TemporaryDirectory() as d:
        cinn_like.set_flags(cinn_like_source_save_path=d, cinn_like_nvrtc_compile_to_cubin=False)
        try:
            yield d
        finally:
            cinn_like.set_flags(cinn_like_source_save_path="",
                                cinn_like_nvrtc_compile_to_cubin=True)


def compile_for_cuda(test, program, entry):
    """Compiles `program` for sm_90 through NVRTC, which needs no GPU: without a driver, loading
    the module is the one error allowed; a build without the CUDA target skips `test`."""
    try:
        cinn_like.compile(program, "cuda -arch=sm_90", entry)
    except cinn_like.CinnLikeError as e:
        if "not available" in str(e) or "unavailable" in str(e):
            test.skipTest(f"no CUDA target in this build: {e}")
        test.assertRegex(str(e), "CUDA driver|loading the CUDA module")


def files_ending(folder, suffix):
    return [os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(suffix)]


class CacheDirTest(unittest.TestCase):
    """A test whose processes share a compile cache directory of its own (`self.cache`, in
    `self.env`), removed afterwards."""

    def setUp(self):
        self._dir = tempfile.TemporaryDirectory()
        self.cache = os.path.join(self._dir.name, "cache")
        self.env = dict(os.environ, CINN_LIKE_CACHE_DIR=self.cache, FLAGS_cinn_like_cache="true")

    def tearDown(self):
        self._dir.cleanup()

    def files(self, suffix):
        """The names of the cache's files that end with `suffix`, sorted."""
        return sorted(n for n in os.listdir(self.cache) if n.endswith(suffix))
