#!/usr/bin/env bash
# \file The README's test command: installs dependencies, builds, and runs every test that
# needs no GPU (the tests labelled gpu run on the GPU machine: see scripts/gpu_bundle.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "${BUILD_DIR:-$root/build}"
rm -f zoo_coverage.txt
ctest --output-on-failure -LE gpu -j2
# The model zoo's coverage table (tests/python/test_model_zoo.py writes it).
if [ -e zoo_coverage.txt ]; then cat zoo_coverage.txt; fi
