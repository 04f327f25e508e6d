/// \file The C text of Philox4x32-10 for source backends; its constants come from ir/philox.h.
#include "backends/philox_source.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/philox.h"

namespace cinn_like::backends {

std::string PhiloxSource(const std::string& qualifier, const std::string& mulhi) {
  // The high and low halves of each 32 x 32-bit product as two 32-bit multiplies: a widening
  // 64-bit product was compiled by NVVM to 64-bit multiplies, several instructions each.
  const std::string rounds = absl::StrFormat(
      "  for (int r = 0; r < %d; ++r) {\n"
      "    uint32_t n0 = %s(0x%08Xu, c2) ^ c1 ^ k0, n2 = %s(0x%08Xu, c0) ^ c3 ^ k1;\n"
      "    c1 = 0x%08Xu * c2; c3 = 0x%08Xu * c0; c0 = n0; c2 = n2;\n"
      "    k0 += 0x%08Xu; k1 += 0x%08Xu;\n"
      "  }\n",
      ir::kPhiloxRounds, mulhi, ir::kPhiloxM1, mulhi, ir::kPhiloxM0, ir::kPhiloxM1, ir::kPhiloxM0,
      ir::kPhiloxW0, ir::kPhiloxW1);
  return absl::StrCat(
      "// Philox4x32-10 (ir/philox.h): a uniform float on [0, 1) from counter (index, stream)\n",
      qualifier, qualifier.empty() ? "" : " ", "float ", kPhiloxFunction,
      "(int64_t seed, int64_t stream, int64_t index) {\n"
      "  uint64_t i = (uint64_t)index, s = (uint64_t)stream, k = (uint64_t)seed;\n"
      "  uint32_t c0 = (uint32_t)i, c1 = (uint32_t)(i >> 32), c2 = (uint32_t)s, "
      "c3 = (uint32_t)(s >> 32);\n"
      "  uint32_t k0 = (uint32_t)k, k1 = (uint32_t)(k >> 32);\n",
      rounds,
      "  return (float)(c0 >> 8) * 5.9604644775390625e-08f;\n"
      "}\n\n");
}

}  // namespace cinn_like::backends
