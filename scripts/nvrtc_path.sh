# \file Sourced by the scripts that run on the GPU machine: puts the first directory holding
# libnvrtc.so.13 (the toolkit's, else the one PyTorch's wheels carry) on LD_LIBRARY_PATH.
# Travels in the GPU bundle beside run_gpu_tests.sh and run_gpu_bench.sh.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         $(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu13/lib 2>/dev/null); do
  [ -e "$d/libnvrtc.so.13" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}" && break
done
