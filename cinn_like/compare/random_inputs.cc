/// \file RandomInputs: one seeded generator over every input's elements, by dtype.
#include "cinn_like/compare/random_inputs.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "hlir/op.h"
#include "ir/float16.h"

namespace cinn_like {

std::vector<hlir::HostTensor> RandomInputs(const hlir::Graph& graph, const RandomInputOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<hlir::HostTensor> out;
  for (int id : graph.inputs()) {
    const hlir::TensorDesc& d = graph.values()[id].desc;
    std::vector<int64_t> dims;
    for (const hlir::Dim& dim : d.shape) {
      // A polynomial dim (s0*s1) takes its symbols' sizes; an overflow or a negative value
      // (s0 - 8 with s0 = 7), the default size (the call then refuses the inputs).
      std::map<std::string, int64_t> sizes = o.sizes;
      for (const std::string& s : dim.expr().Symbols()) sizes.emplace(s, o.default_size);
      auto size = dim.expr().Evaluate(sizes);
      dims.push_back(size.ok() && *size >= 0 ? *size : o.default_size);
    }
    hlir::HostTensor h(d.dtype, dims);
    ir::Type t = hlir::ToIrType(d.dtype);
    for (double& v : h.data) {
      double u = unit(rng);
      if (t.is_bool()) {
        v = u < 0.5;
      } else if (t.is_float()) {
        v = ir::RoundToType(t, -2 + 4 * u);
      } else {
        double lo = t.is_uint() ? std::max(0.0, o.int_low) : o.int_low;
        v = std::floor(lo + (o.int_high - lo + 1) * u);
      }
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace cinn_like
