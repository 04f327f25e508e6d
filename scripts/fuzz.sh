#!/usr/bin/env bash
# \file Builds the fuzz build (clang 19: ASan, UBSan and libFuzzer coverage) into build-fuzz/ and
# runs the libFuzzer targets of tests/fuzz:
#   scripts/fuzz.sh <fuzz_program_json|fuzz_compile_run|fuzz_c_api_call|fuzz_module_file|all> <seconds> [libFuzzer flags]
# Each target starts from its seed corpus tests/fuzz/corpus/<target>/, which it only reads: the
# inputs it finds go to a temporary folder, removed after the run (FUZZ_CORPUS_DIR=<dir> keeps
# them there), so git never sees them. To go on after a crash, pass -fork=1 -ignore_crashes=1. Crashers are written to tests/fuzz/crashers/<target>/;
# minimise one with `build-fuzz/<target> -minimize_crash=1 -runs=2000 <file>` and commit it
# there, where the <target>_replay ctest entries replay it in every build. Needs clang-19 and
# libclang-rt-19-dev (apt); JOBS (default 2) sets ninja's parallelism.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
targets=(fuzz_program_json fuzz_compile_run fuzz_c_api_call fuzz_module_file)
if [ $# -lt 2 ]; then
  echo "usage: $0 <${targets[*]// /|}|all> <seconds> [libFuzzer flags]" >&2
  exit 2
fi
which=$1
seconds=$2
shift 2
if [ "$which" = all ]; then
  run=("${targets[@]}")
elif [[ " ${targets[*]} " == *" $which "* ]]; then
  run=("$which")
else
  echo "unknown target '$which' (targets: ${targets[*]} all)" >&2
  exit 2
fi

build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
# -O1 (as libFuzzer's docs advise) compiles faster than -O3 under the sanitizers; line tables
# name the lines of a stack.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_C_FLAGS=-gline-tables-only -DCMAKE_CXX_FLAGS=-gline-tables-only \
  -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
  -DCINN_LIKE_FUZZ=ON -DCINN_LIKE_WITH_CUDA=OFF >/dev/null
ninja -C "$build" -j"${JOBS:-2}" "${run[@]}"

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
status=0
for t in "${run[@]}"; do
  corpus=${FUZZ_CORPUS_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/$t.corpus.XXXXXX")}
  mkdir -p "$corpus" "$root/tests/fuzz/crashers/$t"
  dict=()
  [ -f "$root/tests/fuzz/$t.dict" ] && dict=(-dict="$root/tests/fuzz/$t.dict")
  echo "== $t for ${seconds}s (new inputs in $corpus)"
  # From the corpus folder: -jobs and -fork write their logs (fuzz-<n>.log) to the current one.
  (cd "$corpus" && "$build/$t" "$corpus" "$root/tests/fuzz/corpus/$t" "${dict[@]}" -max_total_time="$seconds" \
    -print_final_stats=1 -timeout=60 -rss_limit_mb=6144 \
    -artifact_prefix="$root/tests/fuzz/crashers/$t/" "$@") || status=1
  [ -n "${FUZZ_CORPUS_DIR:-}" ] || rm -rf "$corpus"
done
exit $status
