/// \file MutateModuleFile: the structure-aware mutator of the module-file fuzz target. Random
/// bytes almost never pass a module file's SHA-256 checksum, so a byte-level fuzzer stops at it;
/// this one decodes a valid file, changes one field of the image (a string, a blob, the lists of
/// objects, device images and kernels) and encodes it again, checksum and sizes recomputed, so
/// that what it makes reaches every check behind the checksum. Header-only and free of libFuzzer
/// so that the replay build and a unit test compile it too.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>

#include "cinn_like/cache/module_file.h"

namespace cinn_like::fuzz {

/// Byte-level mutation of `s` within `max_size` bytes (libFuzzer's LLVMFuzzerMutate where the
/// fuzzer runs, a simple flip elsewhere).
using ByteMutator = std::function<void(std::string* s, size_t max_size)>;

inline void FlipSomeByte(std::string* s, std::mt19937* rng) {
  if (s->empty()) {
    s->push_back(static_cast<char>((*rng)()));
    return;
  }
  (*s)[(*rng)() % s->size()] ^= static_cast<char>(1u << ((*rng)() % 8));
}

/// A mutation of the module file `bytes` (seeded by `seed`), at most `max_size` bytes. A file that
/// does not decode is mutated byte-wise; one that does gets one field changed and is encoded again.
inline std::string MutateModuleFile(const std::string& bytes, uint32_t seed, size_t max_size,
                                    const ByteMutator& mutate_bytes) {
  std::mt19937 rng(seed);
  auto image = DecodeModuleImage(bytes, "mutator input");
  if (!image.ok()) {
    std::string out = bytes;
    mutate_bytes(&out, max_size);
    // The byte mutator may grow it past max_size (a field may grow: see fuzz_module_file.cc);
    // libFuzzer's buffer holds max_size bytes, no more.
    if (out.size() > max_size) out.resize(max_size);
    return out;
  }
  ModuleImage& m = *image;
  auto& code = m.code;
  // The header's strings are JSON text: kept ASCII (the encoder refuses invalid UTF-8), so that a
  // mutation of a name reaches the decoder's checks rather than stopping at the encoder.
  auto mutate_text = [&](std::string* s) {
    mutate_bytes(s, max_size);
    for (char& c : *s) c = static_cast<char>(c & 0x7f);
  };
  auto some = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  switch (rng() % 12) {
    case 0:
      mutate_text(&m.name);
      break;
    case 1:
      mutate_text(&m.target);
      break;
    case 2:
      mutate_text(&m.signature);
      break;
    case 3:
      mutate_text(&m.key);
      break;
    case 4:
      mutate_text(&m.runtime);
      break;
    case 5:
      mutate_text(&code.host);
      break;
    case 6:  // a host object's bytes (an ELF file the loader must refuse or link)
      if (code.host_objects.empty()) code.host_objects.emplace_back();
      mutate_bytes(&code.host_objects[some(code.host_objects.size())], max_size);
      break;
    case 7:  // one object fewer, or one twice
      if (!code.host_objects.empty() && rng() % 2) {
        code.host_objects.erase(code.host_objects.begin() + some(code.host_objects.size()));
      } else if (!code.host_objects.empty()) {
        code.host_objects.push_back(code.host_objects[some(code.host_objects.size())]);
      }
      break;
    case 8:  // a device image where there was none, or another one's bytes
      if (code.device.empty()) code.device.emplace_back();
      mutate_bytes(&code.device[some(code.device.size())].image, max_size);
      break;
    case 9:  // a kernel name changed, added or dropped
      if (code.device.empty()) code.device.emplace_back();
      {
        auto& kernels = code.device[some(code.device.size())].kernels;
        if (kernels.empty() || rng() % 3 == 0) {
          kernels.emplace_back("kernel_" + std::to_string(rng() % 4));
        } else if (rng() % 2) {
          kernels.erase(kernels.begin() + some(kernels.size()));
        } else {
          mutate_text(&kernels[some(kernels.size())]);
        }
      }
      break;
    case 10:
      if (!code.device.empty()) code.device[some(code.device.size())].cubin ^= true;
      break;
    default:  // the producer, which nothing checks but the format
      mutate_text(&m.producer);
  }
  std::string out;
  try {
    out = EncodeModuleImage(m);
  } catch (const std::exception&) {  // a field the encoder cannot write: keep the input
    return bytes;
  }
  return out.size() <= max_size ? out : bytes;
}

}  // namespace cinn_like::fuzz
