/// \file The C text of the NaN-propagating maximum and minimum for source backends.
#include "backends/nan_extremes_source.h"

#include "absl/strings/str_cat.h"

namespace cinn_like::backends {

std::string NanExtremesSource(const std::string& qualifier, bool fp64) {
  // a when a is NaN or beyond b, else b (NaN when b is): one compare more than fmax.
  auto helper = [&](const char* name, const char* type, const char* beyond) {
    return absl::StrCat(qualifier, qualifier.empty() ? "" : " ", type, " ", name, "(", type, " a, ",
                        type, " b) { return (a != a || a ", beyond, " b) ? a : b; }\n");
  };
  std::string s = "// maximum and minimum (ir/math.h): NaN when either operand is\n";
  s += helper("cinn_like_maximumf", "float", ">") + helper("cinn_like_minimumf", "float", "<");
  if (fp64) {
    s += helper("cinn_like_maximum", "double", ">") + helper("cinn_like_minimum", "double", "<");
  }
  return s + "\n";
}

}  // namespace cinn_like::backends
