/// \file The scan ops (hlir/ops/scan.h says what they compute): inference, the float64
/// reference and the registration. Opaque: a scan fuses with nothing, so its lines are always
/// whole inside one nest.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "hlir/ops/op_util.h"
#include "hlir/ops/scan.h"

namespace cinn_like::hlir {
namespace {

using ops::DTypeClass;
using ops::ScanKind;

constexpr ScanKind kKinds[] = {ScanKind::kSum, ScanKind::kProd, ScanKind::kMax, ScanKind::kMin,
                               ScanKind::kLogSumExp};

bool HasIndices(ScanKind kind) { return kind == ScanKind::kMax || kind == ScanKind::kMin; }

DTypeClass Accepts(ScanKind kind) {
  if (HasIndices(kind)) return DTypeClass::kAny;
  return kind == ScanKind::kLogSumExp ? DTypeClass::kFloat : DTypeClass::kNumeric;
}

/// The normalized `axis` of a rank-`rank` input (a rank-0 input scans its one element, axis 0
/// or -1).
absl::StatusOr<int> ScanAxis(ScanKind kind, const AttributeMap& attrs, int rank) {
  auto axes = ops::AxisAttrAxes(ops::ScanName(kind), attrs, std::max(rank, 1), std::nullopt);
  if (!axes.ok()) return axes.status();
  return (*axes)[0];
}

InferFn InferScan(ScanKind kind) {
  return [kind](const std::vector<TensorDesc>& in,
                const AttributeMap& attrs) -> absl::StatusOr<std::vector<TensorDesc>> {
    absl::Status s = ops::CheckDType(ops::ScanName(kind), 0, in[0], Accepts(kind));
    if (!s.ok()) return s;
    auto axis = ScanAxis(kind, attrs, static_cast<int>(in[0].shape.size()));
    if (!axis.ok()) return axis.status();
    std::vector<TensorDesc> out{in[0]};
    if (HasIndices(kind)) out.push_back(TensorDesc{DType::kInt64, in[0].shape});
    return out;
  };
}

/// log(exp(r) + exp(x)) as PyTorch's CPU loop computes it (_log_add_exp_helper).
double LogAddExp(double r, double x) {
  if (std::isnan(r) || std::isnan(x)) return std::nan("");
  double lo = std::min(x, r), hi = std::max(x, r);
  if (lo == hi && std::isinf(lo)) return x;
  return hi + std::log1p(std::exp(lo - hi));
}

/// Each line (outer index, inner index) walked along the axis, in double.
ReferenceFn ReferenceScan(ScanKind kind) {
  return [kind](const std::vector<const HostTensor*>& in, const AttributeMap& attrs,
                std::vector<HostTensor>& outs) -> absl::Status {
    const HostTensor& x = *in[0];
    auto axis = ScanAxis(kind, attrs, x.rank());
    if (!axis.ok()) return axis.status();
    int64_t outer = 1, n = 1, inner = 1;
    for (int d = 0; d < x.rank(); ++d) {
      (d < *axis ? outer : d == *axis ? n : inner) *= x.shape[d];
    }
    const double inf = std::numeric_limits<double>::infinity();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        double r = kind == ScanKind::kSum    ? 0
                   : kind == ScanKind::kProd ? 1
                   : kind == ScanKind::kMin  ? inf
                                             : -inf;
        int64_t best = 0;
        for (int64_t k = 0; k < n; ++k) {
          const int64_t at = (o * n + k) * inner + i;
          const double v = x.data[at];
          switch (kind) {
            case ScanKind::kSum:
              r += v;
              break;
            case ScanKind::kProd:
              r *= v;
              break;
            case ScanKind::kLogSumExp:
              r = LogAddExp(r, v);
              break;
            case ScanKind::kMax:
            case ScanKind::kMin:
              if (std::isnan(v) || (!std::isnan(r) && (kind == ScanKind::kMax ? v >= r : v <= r))) {
                r = v;
                best = k;
              }
              break;
          }
          outs[0].data[at] = r;
          if (HasIndices(kind)) outs[1].data[at] = static_cast<double>(best);
        }
      }
    }
    return absl::OkStatus();
  };
}

}  // namespace

namespace ops {

const char* ScanName(ScanKind kind) {
  switch (kind) {
    case ScanKind::kSum:
      return "cumsum";
    case ScanKind::kProd:
      return "cumprod";
    case ScanKind::kMax:
      return "cummax";
    case ScanKind::kMin:
      return "cummin";
    case ScanKind::kLogSumExp:
      return "logcumsumexp";
  }
  return "?";
}

}  // namespace ops

void RegisterScanOps(OpRegistry& r) {
  for (ScanKind kind : kKinds) {
    OpDef def{ops::ScanName(kind), OpPattern::kOpaque, 1, 1, HasIndices(kind) ? 2 : 1,
              InferScan(kind),     ReferenceScan(kind)};
    def.compute = ops::ScanCompute(kind, /*gpu=*/false);
    def.gpu_compute = ops::ScanCompute(kind, /*gpu=*/true);
    r.Register(std::move(def));
  }
}

}  // namespace cinn_like::hlir
