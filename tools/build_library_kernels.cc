/// \file build_library_kernels: compiles the library kernels cinn_like ships ahead
/// (hlir::PrebuiltAttentionKernels) to CUBIN for each arch named, with NVRTC on several
/// threads, into the prebuilt kernel file (backends/cuda/prebuilt_kernels.h) that the NVGPU
/// compiler loads instead of compiling them. Run by the build (CMake's library_kernels target,
/// archs CINN_LIKE_PREBUILT_ARCHS); an entry of the file already there whose source is unchanged
/// is kept, not compiled again.
///
///   build_library_kernels --out=build/libcinn_like_kernels.bin --archs=80,90
#include <gflags/gflags.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "backends/cuda/nvrtc_compiler.h"
#include "backends/cuda/prebuilt_kernels.h"
#include "hlir/ops/attention.h"
#include "runtime/files.h"
#endif

DEFINE_string(out, "libcinn_like_kernels.bin", "the prebuilt kernel file to write");
DEFINE_string(archs, "80,90", "compute capabilities to build for, comma-separated");
DEFINE_int32(jobs, 0, "NVRTC threads (0: the host's)");

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
#ifndef CINN_LIKE_WITH_CUDA
  std::fprintf(stderr, "build_library_kernels: this build has no CUDA\n");
  return 1;
#else
  namespace be = cinn_like::backends;
  std::vector<int> archs;
  for (absl::string_view a : absl::StrSplit(FLAGS_archs, ',', absl::SkipWhitespace())) {
    int arch = 0;
    if (!absl::SimpleAtoi(a, &arch) || !be::nvrtc::Compiler::CheckArch(arch, "--archs").ok()) {
      std::fprintf(stderr, "build_library_kernels: NVRTC %s does not build for arch '%s'\n",
                   be::nvrtc::Compiler::Version().c_str(), std::string(a).c_str());
      return 1;
    }
    archs.push_back(arch);
  }
  if (archs.empty()) {
    std::fprintf(stderr, "build_library_kernels: --archs names no arch\n");
    return 1;
  }
  // Entries of the file already there, to keep where their source is unchanged.
  std::map<std::pair<std::string, int>, be::PrebuiltKernel> old;
  if (auto bytes = cinn_like::runtime::ReadWholeFile(FLAGS_out)) {
    if (auto kernels = be::DecodePrebuiltKernels(*bytes, FLAGS_out); kernels.ok()) {
      for (be::PrebuiltKernel& k : *kernels) {
        auto key = std::make_pair(k.name, k.arch);
        old.emplace(std::move(key), std::move(k));
      }
    }
  }
  std::vector<be::PrebuiltKernel> out;
  std::vector<std::string> sources;
  for (const std::string& name : cinn_like::hlir::ops::PrebuiltAttentionKernels()) {
    auto source = be::LibraryUnitSource(name);
    if (!source.ok()) {
      std::fprintf(stderr, "build_library_kernels: %s\n", source.status().ToString().c_str());
      return 1;
    }
    for (int arch : archs) {
      out.push_back({name, arch, be::PrebuiltSourceHash(*source), ""});
      sources.push_back(*source);
    }
  }
  std::atomic<size_t> next{0}, compiled{0};
  std::mutex error_mu;
  std::string error;
  auto work = [&] {
    be::nvrtc::Compiler nvrtc;
    for (size_t i = next++; i < out.size(); i = next++) {
      be::PrebuiltKernel& k = out[i];
      auto it = old.find(std::make_pair(k.name, k.arch));
      if (it != old.end() && it->second.source_hash == k.source_hash) {
        k.image = it->second.image;
        continue;
      }
      auto image = nvrtc.Compile(sources[i], k.arch, /*to_cubin=*/true, k.name);
      if (!image.ok()) {
        std::lock_guard<std::mutex> lock(error_mu);
        error = image.status().ToString();
        return;
      }
      k.image = *std::move(image);
      ++compiled;
    }
  };
  const int jobs = FLAGS_jobs > 0 ? FLAGS_jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs; ++j) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  if (!error.empty()) {
    std::fprintf(stderr, "build_library_kernels: %s\n", error.c_str());
    return 1;
  }
  const std::string bytes = be::EncodePrebuiltKernels(out);
  absl::Status written = cinn_like::runtime::WriteFileAtomically(FLAGS_out, bytes);
  if (!written.ok()) {
    std::fprintf(stderr, "build_library_kernels: %s\n", written.ToString().c_str());
    return 1;
  }
  std::printf(
      "build_library_kernels: %zu kernels for %zu archs in %s (%zu compiled, %zu kept), "
      "%zu KiB\n",
      out.size() / archs.size(), archs.size(), FLAGS_out.c_str(), compiled.load(),
      out.size() - compiled.load(), bytes.size() / 1024);
  return 0;
#endif
}
