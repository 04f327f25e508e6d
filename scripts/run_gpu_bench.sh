#!/usr/bin/env bash
# \file Runs inside the unpacked GPU bundle on the GPU machine: the kernel benchmark, and beside
# it in the same call PyTorch's anchor timings when torch_anchor.py is given (its path as $1).
# Logs go to $OUT when set.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         $(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu13/lib 2>/dev/null); do
  [ -e "$d/libnvrtc.so.13" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}" && break
done
logs=${OUT:-/tmp}
status=0
"$here/kernels_bench" "${@:2}" 2>&1 | tee "$logs/kernels_bench.log" || status=1
if [ -n "${1:-}" ] && [ -e "$1" ]; then
  PYTHONUNBUFFERED=1 python3 "$1" 2>&1 | tee "$logs/torch_anchor.log" || status=1
fi
exit $status
