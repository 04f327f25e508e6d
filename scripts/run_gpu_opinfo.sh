#!/usr/bin/env bash
# \file On the GPU machine, from the repository root, with the GPU bundle unpacked in $1
# (default /tmp/cinn_like_gpu): PyTorch's OpInfo suite on CUDA (tests/opinfo/opinfo_suite.py),
# float32, float16 and bfloat16 forward and float32 backward unless CONFIGS says otherwise,
# checked against tests/opinfo/expect_cuda.json (UPDATE=1: rewritten from the run instead).
# The table, each sample's record and the expectations go to $OUT when set.
set -uo pipefail
bundle=${1:-/tmp/cinn_like_gpu}
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/nvrtc_path.sh"
# expecttest (PyTorch's OpInfo database imports it) travels in the bundle.
export CINN_LIKE_LIBRARY="$bundle/libcinn_like.so" PYTHONPATH="$root/cinn_like/python:$bundle/py"
export PYTHONUNBUFFERED=1
logs=${OUT:-/tmp}
expect="$root/tests/opinfo/expect_cuda.json"
mode=(--check "$expect")
if [ "${UPDATE:-0}" = 1 ]; then
  cp "$expect" "$logs/expect_cuda.json" 2>/dev/null || true
  mode=(--update "$logs/expect_cuda.json")
fi
python3 "$root/tests/opinfo/opinfo_suite.py" --device cuda --jobs "${JOBS:-8}" --quiet \
  --configs "${CONFIGS:-float32.fwd,float16.fwd,bfloat16.fwd,float32.bwd}" "${mode[@]}" \
  --table "$logs/opinfo_cuda.txt" --out "$logs/opinfo_cuda.jsonl" ${OPS:+--ops "$OPS"} \
  2>&1 | tail -80
