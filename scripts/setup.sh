#!/usr/bin/env bash
# \file Installs every build and test dependency of cinn_like from the package registries.
# Idempotent: packages already present are skipped by apt. The CUDA toolkit is expected at
# /usr/local/cuda (CUDA_HOME overrides); without it the NVGPU target builds as unavailable.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

pkgs=(
  build-essential cmake ninja-build pkg-config python3 python3-pip xz-utils patchelf
  llvm-19-dev libzstd-dev zlib1g-dev libxml2-dev libedit-dev libffi-dev
  libgoogle-glog-dev libgflags-dev libabsl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libdlpack-dev nlohmann-json3-dev
  libdnnl-dev  # oneDNN for x86 matmul/conv: the header at build time, dlopen()ed at run time
  clang-19 libclang-rt-19-dev  # the ThreadSanitizer job and the fuzz build
  # The OpenCL target: the headers at build time, the ICD loader dlopen()ed at run time, PoCL
  # as the CPU device the tests run on.
  opencl-headers ocl-icd-opencl-dev pocl-opencl-icd
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
python3 -m pip show numpy >/dev/null 2>&1 || python3 -m pip install -q numpy
# PyTorch for the torch.compile backend tests (tests/python/test_torch_*.py skip without it).
# The CPU-only wheel (~200 MB) from PyTorch's index when that is reachable, else PyPI's wheel
# (with CUDA libraries: ~4 GB, about 5.5 minutes here). CINN_LIKE_SKIP_TORCH=1 skips it.
# Pinned: the OpInfo suite's expectations (tests/opinfo/expect_x86.json) hold for this
# PyTorch's op_db and decompositions.
torch_version=2.15.0
if [ "${CINN_LIKE_SKIP_TORCH:-0}" != 1 ] && ! python3 -c 'import torch' >/dev/null 2>&1; then
  python3 -m pip install -q --retries 0 --timeout 15 \
      --index-url https://download.pytorch.org/whl/cpu "torch==$torch_version" 2>/dev/null ||
    python3 -m pip install -q "torch==$torch_version"
fi
# The model zoo's libraries (tests/python/test_model_zoo.py skips without them): torchvision
# from the index the installed torch came from (its local version tag, +cpu or +cu130, names
# it), else PyPI's, pinned to the installed torch so pip never replaces it; transformers from
# PyPI, with expecttest (PyTorch's OpInfo database, tests/opinfo/opinfo_suite.py, imports it).
if [ "${CINN_LIKE_SKIP_TORCH:-0}" != 1 ] && python3 -c 'import torch' >/dev/null 2>&1; then
  if ! python3 -c 'import torchvision' >/dev/null 2>&1; then
    tv=$(python3 -c 'import torch; print(torch.__version__)')
    { [[ $tv == *+* ]] && python3 -m pip install -q --retries 0 --timeout 15 \
        --index-url "https://download.pytorch.org/whl/${tv#*+}" torchvision "torch==$tv" \
        2>/dev/null; } || python3 -m pip install -q torchvision "torch==${tv%%+*}"
  fi
  python3 -c 'import transformers, expecttest' >/dev/null 2>&1 ||
    python3 -m pip install -q transformers expecttest
fi
# The Python package (cinn_like, cinn_like.torch and the torch.compile entry point), editable:
# it loads the libcinn_like.so that scripts/build.sh makes in build/.
python3 -m pip install -q -e "$root/cinn_like/python"
