#!/usr/bin/env bash
# \file Packs what the GPU machine needs into gpu_bundle/cinn_like_gpu.tar.xz: the test
# binaries, cinn_stages, libcinn_like.so (LLVM inside) and the shared libraries they need that
# the GPU machine lacks (glog, gflags, Abseil, ...), stripped, with RPATHs that find them.
# On the GPU machine, from the repository root:
#   tar xJf gpu_bundle/cinn_like_gpu.tar.xz -C /tmp && /tmp/cinn_like_gpu/run_gpu_tests.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
stage=$(mktemp -d)/cinn_like_gpu
mkdir -p "$stage/lib"
bins=(cinn_stages)
for t in "$build"/*_tests "$build"/*_bench; do [ -e "$t" ] && bins+=("$(basename "$t")"); done
cp "$build/libcinn_like.so" "$stage/"
# The library kernels built ahead, found next to libcinn_like.so (backends/cuda/prebuilt_kernels.h).
if [ -e "$build/libcinn_like_kernels.bin" ]; then cp "$build/libcinn_like_kernels.bin" "$stage/"; fi
for b in "${bins[@]}"; do cp "$build/$b" "$stage/"; done
# Libraries the GPU machine has (Ubuntu 24.04 base, CUDA 13): everything else travels.
system='^(libc|libm|libstdc\+\+|libgcc_s|libz|libzstd|ld-linux-x86-64|libpthread|libdl|librt|libnvrtc|libcuda|linux-vdso)\.so'
for f in "$stage/libcinn_like.so" "${bins[@]/#/$stage/}"; do
  ldd "$f" | awk '/=> \//{print $1" "$3}' | while read -r name path; do
    [[ "$name" =~ $system ]] && continue
    [[ "$name" == libcinn_like.so ]] && continue
    [ -e "$stage/lib/$name" ] || cp -L "$path" "$stage/lib/$name"
  done
done
strip --strip-unneeded "$stage"/*.so "$stage"/lib/*.so* "${bins[@]/#/$stage/}"
# A RUNPATH serves only its own object's direct needs: each carried library finds its
# neighbours (Abseil's libraries need one another) through its own.
for l in "$stage"/lib/*.so*; do patchelf --set-rpath '$ORIGIN' "$l"; done
cp "$root/scripts/run_gpu_tests.sh" "$root/scripts/run_gpu_bench.sh" "$root/scripts/nvrtc_path.sh" "$stage/"
# expecttest, which PyTorch's OpInfo database imports (scripts/run_gpu_opinfo.sh).
mkdir -p "$stage/py"
cp -r "$(python3 -c 'import expecttest, os; print(os.path.dirname(expecttest.__file__))')" \
  "$stage/py/"
mkdir -p "$root/gpu_bundle"
tar cJf "$root/gpu_bundle/cinn_like_gpu.tar.xz" -C "$(dirname "$stage")" cinn_like_gpu
du -sh "$stage" "$root/gpu_bundle/cinn_like_gpu.tar.xz"
ls "$stage/lib"
