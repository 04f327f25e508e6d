#!/usr/bin/env bash
# \file On the GPU machine, from the repository root, with the GPU bundle unpacked in
# /tmp/cinn_like_gpu (scripts/gpu_bundle.sh): tools/roofline_bench.py on CUDA, eager, Inductor
# and cinn_like in one process, the anchor file from gpu_bundle/torch_anchor.py (copy
# ../shared/bench/torch_anchor.py there before bundling). Arguments go to the tool; the table
# and the rows as JSON go to $OUT when set.
set -uo pipefail
bundle=${BUNDLE:-/tmp/cinn_like_gpu}
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/nvrtc_path.sh"
export CINN_LIKE_LIBRARY="$bundle/libcinn_like.so" PYTHONPATH="$root/cinn_like/python"
export PYTHONUNBUFFERED=1
python3 "$root/tools/roofline_bench.py" --anchor "$root/gpu_bundle/torch_anchor.py" "$@" 2>&1 |
  grep -v -i warn | tee "${OUT:-/tmp}/roofline_bench.txt"
