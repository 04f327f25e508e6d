/// \file The prebuilt library-kernel file: its encoding, checked decoding and lookups.
#include "backends/cuda/prebuilt_kernels.h"

#include <glog/logging.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "backends/cuda/codegen_cuda_dev.h"
#include "backends/cuda/library_kernels.h"
#include "ir/compile_options.h"
#include "ir/flags.h"
#include "runtime/byte_io.h"
#include "runtime/files.h"

namespace cinn_like::backends {
namespace {

constexpr std::string_view kMagic = "CLPKERN1";
/// No file of ours names more kernels; a larger count is damage, not a reason to allocate.
constexpr uint32_t kMaxEntries = 1 << 16;

/// The file's entries by (name, arch), read at the first lookup.
using Table = std::map<std::pair<std::string, int>, PrebuiltKernel>;

const Table& LoadedTable() {
  static const Table* table = [] {
    auto* t = new Table;
    const std::string path = PrebuiltKernelsPath();
    if (path.empty()) return t;
    std::optional<std::string> bytes = runtime::ReadWholeFile(path);
    if (!bytes) {
      VLOG(1) << "no prebuilt library kernels at " << path << ": NVRTC compiles them";
      return t;
    }
    auto kernels = DecodePrebuiltKernels(*bytes, path);
    if (!kernels.ok()) {
      LOG(WARNING) << kernels.status().message() << "; NVRTC compiles the library kernels";
      return t;
    }
    for (PrebuiltKernel& k : *kernels) {
      auto key = std::make_pair(k.name, k.arch);
      t->emplace(std::move(key), std::move(k));
    }
    return t;
  }();
  return *table;
}

}  // namespace

std::string EncodePrebuiltKernels(const std::vector<PrebuiltKernel>& kernels) {
  std::string out(kMagic);
  runtime::PutU32(&out, static_cast<uint32_t>(kernels.size()));
  for (const PrebuiltKernel& k : kernels) {
    runtime::PutU32(&out, static_cast<uint32_t>(k.name.size()));
    out += k.name;
    runtime::PutU32(&out, static_cast<uint32_t>(k.arch));
    runtime::PutU64(&out, k.source_hash);
    runtime::PutU64(&out, runtime::Fnv1a64(k.image));
    runtime::PutU64(&out, k.image.size());
  }
  runtime::PutU64(&out, runtime::Fnv1a64(out));
  for (const PrebuiltKernel& k : kernels) out += k.image;
  return out;
}

absl::StatusOr<std::vector<PrebuiltKernel>> DecodePrebuiltKernels(std::string_view bytes,
                                                                  const std::string& origin) {
  auto damaged = [&](const std::string& why) {
    return absl::DataLossError(
        absl::StrCat("the prebuilt kernel file ", origin, " is not usable: ", why));
  };
  if (bytes.substr(0, kMagic.size()) != kMagic) return damaged("it does not start with CLPKERN1");
  runtime::ByteReader in(bytes.substr(kMagic.size()));
  uint32_t count = 0;
  if (!in.U32(&count) || count > kMaxEntries) return damaged("its entry count is missing or wrong");
  std::vector<PrebuiltKernel> kernels(count);
  std::vector<uint64_t> image_hash(count), image_size(count);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t name_size = 0, arch = 0;
    if (!in.U32(&name_size) || !in.Take(name_size, &kernels[i].name) || !in.U32(&arch) ||
        !in.U64(&kernels[i].source_hash) || !in.U64(&image_hash[i]) || !in.U64(&image_size[i])) {
      return damaged(absl::StrCat("its index ends in entry ", i));
    }
    kernels[i].arch = static_cast<int>(arch);
  }
  const size_t index_end = kMagic.size() + in.pos();
  uint64_t stored = 0;
  if (!in.U64(&stored)) return damaged("it ends before its index checksum");
  if (runtime::Fnv1a64(bytes.substr(0, index_end)) != stored) {
    return damaged("its index checksum does not match");
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (!in.Take(image_size[i], &kernels[i].image)) {
      return damaged(absl::StrCat("it ends in the image of ", kernels[i].name));
    }
    if (runtime::Fnv1a64(kernels[i].image) != image_hash[i]) {
      return damaged(absl::StrCat("the image of ", kernels[i].name, " for sm_", kernels[i].arch,
                                  " fails its checksum"));
    }
  }
  if (kMagic.size() + in.pos() != bytes.size()) return damaged("bytes follow its last image");
  return kernels;
}

std::string PrebuiltKernelsPath() {
  if (const char* env = std::getenv("CINN_LIKE_PREBUILT_KERNELS")) return env;
  const std::string library = runtime::ThisLibraryPath();
  if (library.empty()) return "";
  return (std::filesystem::path(library).parent_path() / "libcinn_like_kernels.bin").string();
}

absl::StatusOr<std::string> LibraryUnitSource(const std::string& kernel) {
  auto library = LibraryKernelsSource({kernel});
  if (!library.ok()) return library.status();
  return CodeGenCudaDev().Preamble("library kernel " + kernel) + *library;
}

uint64_t PrebuiltSourceHash(const std::string& source) {
  return runtime::Fnv1a64(source +
                          (ir::CurrentCompileOptions().fast_math ? "\n--use_fast_math" : ""));
}

std::optional<std::string> PrebuiltKernelImage(const std::string& kernel, int arch,
                                               const std::string& source) {
  const Table& table = LoadedTable();
  auto it = table.find(std::make_pair(kernel, arch));
  if (it == table.end()) return std::nullopt;
  if (it->second.source_hash != PrebuiltSourceHash(source)) {
    VLOG(1) << "prebuilt " << kernel << " for sm_" << arch
            << " was compiled from other source or options: NVRTC compiles it";
    return std::nullopt;
  }
  return it->second.image;
}

}  // namespace cinn_like::backends
