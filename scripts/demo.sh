#!/usr/bin/env bash
# \file The README's demo command: installs dependencies, builds, then compiles and runs every
# built-in example on x86 and, when a GPU is present, on CUDA, each checked against its
# reference. Extra arguments go to cinn_stages (try --print_stages=true --example=myadd).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
"${BUILD_DIR:-$root/build}/cinn_stages" --example=all --target=all --print_stages=false "$@"
