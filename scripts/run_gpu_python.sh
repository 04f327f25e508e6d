#!/usr/bin/env bash
# \file On the GPU machine, from the repository root, with the GPU bundle unpacked in $1
# (default /tmp/cinn_like_gpu): the Python tests (the torch.compile backend on CUDA tensors
# included) against the bundle's libcinn_like.so, then eager vs cinn_like per model.
# Logs go to $OUT when set.
set -uo pipefail
bundle=${1:-/tmp/cinn_like_gpu}
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/nvrtc_path.sh"
export CINN_LIKE_LIBRARY="$bundle/libcinn_like.so" PYTHONPATH="$root/cinn_like/python"
export PYTHONUNBUFFERED=1
logs=${OUT:-/tmp}
status=0
python3 -m unittest discover -s "$root/tests/python" 2>&1 | tee "$logs/python_tests.log" | tail -40 || status=1
grep -qE "^OK" "$logs/python_tests.log" || status=1
python3 "$root/tools/torch_models_bench.py" cuda 2>&1 | tee "$logs/torch_models_bench.log" || status=1
exit $status
