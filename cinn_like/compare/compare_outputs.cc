/// \file Tolerance and CompareOutputs.
#include "cinn_like/compare/compare_outputs.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace cinn_like {

using hlir::DType;
using hlir::HostTensor;

double Tolerance(DType t) {
  switch (t) {
    case DType::kFloat64:
      return 1e-9;
    case DType::kFloat32:
      return 1e-4;
    case DType::kFloat16:
      return 1e-2;
    case DType::kBFloat16:
      return 2e-2;
    default:
      return 0;  // integers and bool: exact
  }
}

std::string CompareOutputs(const std::vector<std::string>& names,
                           const std::vector<HostTensor>& want,
                           const std::vector<HostTensor>& got) {
  std::string diffs;
  for (size_t o = 0; o < want.size(); ++o) {
    const HostTensor& w = want[o];
    const double tol = Tolerance(w.dtype);
    if (got[o].shape != w.shape) {
      absl::StrAppend(&diffs, "  output ", names[o], " is ", got[o].Describe(), ", want ",
                      w.Describe(), "\n");
      continue;
    }
    int bad = 0;
    for (int64_t k = 0; k < w.size(); ++k) {
      double g = got[o].data[k], e = w.data[k];
      bool same = std::isnan(e)   ? std::isnan(g)
                  : std::isinf(e) ? g == e
                                  : std::fabs(g - e) <= tol + tol * std::fabs(e);
      if (same) continue;
      if (bad++ < 3) {
        absl::StrAppend(&diffs, "  output ", names[o], " (", w.Describe(), ") element ", k,
                        ": got ", g, ", want ", e, " (tolerance ", tol, ")\n");
      }
    }
    if (bad > 3) absl::StrAppend(&diffs, "  ... ", bad, " elements of ", names[o], "\n");
  }
  return diffs;
}

}  // namespace cinn_like
