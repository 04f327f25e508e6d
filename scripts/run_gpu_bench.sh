#!/usr/bin/env bash
# \file Runs inside the unpacked GPU bundle on the GPU machine: the kernel benchmark, and beside
# it in the same call PyTorch's anchor timings when torch_anchor.py is given (its path as $1).
# Logs go to $OUT when set.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/nvrtc_path.sh"
logs=${OUT:-/tmp}
status=0
"$here/kernels_bench" "${@:2}" 2>&1 | tee "$logs/kernels_bench.log" || status=1
if [ -n "${1:-}" ] && [ -e "$1" ]; then
  PYTHONUNBUFFERED=1 python3 "$1" 2>&1 | tee "$logs/torch_anchor.log" || status=1
fi
exit $status
