/// \file Fuzz target: module files (cinn_like/cache/module_file.h), as a cache entry or a file a
/// host loads. Any bytes in: DecodeModuleImage returns a status, never crashes, throws or allocates
/// beyond the input's size; what it accepts encodes to bytes that decode to the same image. (The
/// SHA-256 checksum refuses nearly every mutation, so the corpus holds files re-checksummed after
/// the change: they reach the header and blob checks; version2_fnv1a is a file of the format
/// before, refused by its version.) Where libFuzzer runs, its custom mutator is
/// MutateModuleFile (module_file_mutator.h): it changes one field of a decoded file and encodes
/// it again, so that mutations pass the checksum and reach the checks behind it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "cinn_like/cache/module_file.h"
#include "tests/fuzz/module_file_mutator.h"

namespace {

bool SameImage(const cinn_like::ModuleImage& a, const cinn_like::ModuleImage& b) {
  if (a.producer != b.producer || a.runtime != b.runtime || a.name != b.name ||
      a.target != b.target || a.signature != b.signature || a.key != b.key ||
      a.code.host != b.code.host || a.code.host_objects != b.code.host_objects ||
      a.code.device.size() != b.code.device.size()) {
    return false;
  }
  for (size_t k = 0; k < a.code.device.size(); ++k) {
    const auto &x = a.code.device[k], &y = b.code.device[k];
    if (x.cubin != y.cubin || x.image != y.image || x.kernels != y.kernels) return false;
  }
  return true;
}

}  // namespace

// libFuzzer's byte mutator; absent (null) in the replay build.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size)
    __attribute__((weak));

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937 flips(seed);
  auto mutate_bytes = [&flips](std::string* s, size_t max_size) {
    if (!LLVMFuzzerMutate) return cinn_like::fuzz::FlipSomeByte(s, &flips);
    // A field may grow a little; the whole file (a file that does not decode) no further than
    // max_size.
    const size_t used = s->size(), room = std::min(used + 64, std::max(used, max_size));
    s->resize(room);
    s->resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(s->data()), used, room));
  };
  const std::string out = cinn_like::fuzz::MutateModuleFile(
      std::string(reinterpret_cast<const char*>(data), size), seed, max_size, mutate_bytes);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto image = cinn_like::DecodeModuleImage(bytes, "input");
  if (!image.ok()) return 0;
  auto again = cinn_like::DecodeModuleImage(cinn_like::EncodeModuleImage(*image), "encoded");
  if (!again.ok() || !SameImage(*image, *again)) {
    std::fprintf(stderr, "round trip: an accepted module file does not encode to itself\n");
    std::abort();
  }
  return 0;
}
