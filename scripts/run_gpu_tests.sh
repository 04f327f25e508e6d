#!/usr/bin/env bash
# \file Runs inside the unpacked GPU bundle on the GPU machine: every test binary (the GPU
# tests included) and the demo on CUDA. Logs go to $OUT when set. Exit status: failures.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/nvrtc_path.sh"
logs=${OUT:-/tmp}
status=0
for t in "$here"/*_tests; do
  name=$(basename "$t")
  "$t" --gtest_brief=1 >"$logs/$name.log" 2>&1
  rc=$?
  echo "$name: rc=$rc $(grep -E '^\[  (PASSED|FAILED)  \]' "$logs/$name.log" | tr '\n' ' ')"
  [ $rc -ne 0 ] && status=1 && tail -40 "$logs/$name.log"
done
"$here/cinn_stages" --example=all --target=cuda --print_stages=false >"$logs/demo_cuda.log" 2>&1 || status=1
tail -40 "$logs/demo_cuda.log"
exit $status
