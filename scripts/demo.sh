#!/usr/bin/env bash
# \file The README's demo command: installs dependencies, builds, then compiles and runs every
# built-in example on x86 and, when a GPU is present, on CUDA, each checked against its
# reference. Extra arguments go to cinn_stages (try --print_stages=true --example=myadd).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
"${BUILD_DIR:-$root/build}/cinn_stages" --example=all --target=all --print_stages=false "$@"

# torch.compile(model, backend="cinn_like") when PyTorch is importable.
if python3 -c 'import torch' >/dev/null 2>&1; then
  CINN_LIKE_LIBRARY="${BUILD_DIR:-$root/build}/libcinn_like.so" PYTHONPATH="$root/cinn_like/python" \
    python3 "$root/tools/torch_demo.py"
fi
