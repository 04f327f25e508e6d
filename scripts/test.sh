#!/usr/bin/env bash
# \file The README's test command: installs dependencies, builds, and runs every test that
# needs no GPU (the tests labelled gpu run on the GPU machine: see scripts/gpu_bundle.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "${BUILD_DIR:-$root/build}"
ctest --output-on-failure -LE gpu -j2
