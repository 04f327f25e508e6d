#!/usr/bin/env bash
# \file The sanitizer job: builds libcinn_like.so, the unit test binaries, the tools, the C host
# and the fuzz targets' replay programs with gcc's ASan and UBSan (-DCINN_LIKE_SANITIZE=ON, -O1;
# with the CUDA toolkit when present, as CI's build: some hlir tests generate CUDA C) into
# build-asan/ (not the GPU tests or the benchmarks, which it never runs), then runs every
# ctest entry that needs neither a GPU nor
# Python: the unit tests, the C host, cinn_stages' checks, and the replay of every file under
# tests/fuzz/corpus/ and tests/fuzz/crashers/ through the fuzz targets (a crasher committed
# there must stay fixed). Undefined behaviour aborts (-fno-sanitize-recover). Leak checking is
# off (not measured: assumed noisy with LLVM's process-lifetime allocations); failed huge
# allocations return null, as the allocator-hook tests expect, instead of aborting.
# JOBS (default: the core count) sets the parallelism of the build and of ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ASAN_BUILD_DIR:-$root/build-asan}
jobs=${JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
  -DCINN_LIKE_SANITIZE=ON -DCINN_LIKE_WITH_CUDA=ON -DCINN_LIKE_PREBUILT_ARCHS= >/dev/null
ninja -C "$build" -j"$jobs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
ctest --output-on-failure -LE gpu -E '^(python_tests|opinfo_x86)$' -j"$jobs"
