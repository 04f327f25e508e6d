#!/usr/bin/env bash
# \file The ThreadSanitizer job (issue 15): builds libcinn_like.so and the tests of
# tests/cinn_like/ with clang 19's -fsanitize=thread (-O1, no CUDA: the test is x86's) into
# build-tsan/, then runs the test that compiles and calls from 8 threads while another thread
# changes flags (Concurrency.*). Any data race TSan sees fails the job (halt_on_error).
# LLVM, glog, gflags and Abseil are prebuilt and not instrumented: their locks are pthread's,
# which TSan intercepts; the JIT-compiled code is not instrumented either. (gcc 12's TSan
# reported heap-use-after-free in objects freed by LLVM and allocated again, which clang's does
# not, and ASan does not either.) Needs clang-19 and libclang-rt-19-dev (scripts/setup.sh).
# JOBS (default: the core count) sets the build's parallelism.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TSAN_BUILD_DIR:-$root/build-tsan}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
  -DCINN_LIKE_TSAN=ON -DCINN_LIKE_WITH_CUDA=OFF >/dev/null
ninja -C "$build" -j"${JOBS:-$(nproc)}" cinn_like_tests
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
"$build/cinn_like_tests" --gtest_filter='Concurrency.*'
