/// \file The module file: a compiled Program as one file of bytes, for the persistent compile
/// cache (cinn_like/cache/disk_cache.h) and for modules saved and loaded by hosts
/// (CompiledProgram::Save, LoadCompiledProgram).
///
/// Layout (integers little-endian):
///   "CLMODULE"           8 bytes, the magic
///   u32 format version   kModuleFileVersion
///   u64 n, n bytes       the header, JSON: {"producer", "runtime", "name", "target", "signature",
///                        "key", "host", "host_objects": count, "device": [{"cubin", "kernels"}]}
///   u64 n, n bytes       each host object, then each device image, in the header's order
///   32 bytes             SHA-256 (runtime/sha256.h) of every byte before it
/// which is a record of cinn_like/cache/record.h (its magic, version and digest checked there).
/// Anything else (another magic or version, a size past the end, bytes after the digest, a
/// digest that differs, a header that does not say what it must) is refused with a message
/// that says which. The digest finds damage, not forgery: whoever can write a file can seal it
/// again, which is why the cache's directory must be its user's alone (disk_cache.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "backends/built_code.h"
#include "cinn_like/cache/record.h"

namespace cinn_like {

/// 2: the header names the runtime ABI; 3: a SHA-256 digest in place of FNV-1a, the cache key.
inline constexpr uint32_t kModuleFileVersion = 3;

/// The first bytes of every module file: what may be overwritten by one (CompiledProgram::Save).
inline constexpr std::string_view kModuleFileMagic = "CLMODULE";
/// What a module file is called in messages.
inline constexpr std::string_view kModuleFileFormat = "a cinn_like module file";
/// The module file as a record (record.h).
inline constexpr RecordFormat kModuleFile = {kModuleFileMagic, kModuleFileVersion, "module file",
                                             kModuleFileFormat,
                                             "compile the Program again with this library"};

/// The version of the calling convention between generated host code and the runtime's C
/// functions (runtime/cinn_like_runtime.h): bump it when a runtime function's arguments or
/// meaning change, so that code built against the old ones is refused, not called. 2: each
/// argument's descriptor (cinn_like_argument_desc) holds the Program's rank; 3:
/// cinn_like_check_size_range takes why a symbol must be at least 1; 4: the descriptor says
/// whether the argument is an output (whose null data the entry allocates, cinn_like_alloc_output).
inline constexpr int kRuntimeAbiVersion = 4;

/// What generated host code links against: kRuntimeAbiVersion, the LLVM that made it and the
/// runtime's symbol names (fingerprinted). Saved in each module file; loading another's fails.
std::string RuntimeAbi();

struct ModuleImage {
  std::string producer;   // the library that made it: "cinn_like <version>"
  std::string runtime;    // RuntimeAbi() where it was made
  std::string name;       // the host entry
  std::string target;     // ir::Target::ToString(), the arch resolved
  std::string signature;  // CompiledProgram::signature()
  std::string key;        // a cache entry's DiskCacheKey (SHA-256 of its key text); "" if saved
  backends::BuiltCode code;
};

std::string EncodeModuleImage(const ModuleImage& image);

/// The image in `bytes`; `origin` (a path, "cache entry <key>") starts each error message.
absl::StatusOr<ModuleImage> DecodeModuleImage(std::string_view bytes, const std::string& origin);

}  // namespace cinn_like
