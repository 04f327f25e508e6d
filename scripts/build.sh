#!/usr/bin/env bash
# \file Configures and builds cinn_like into build/ (Release, Ninja). Used by test.sh, demo.sh
# and gpu_bundle.sh; BUILD_DIR overrides the folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" -j"$(nproc)"
