/// \file The README's C++ example (ctest quickstart_cc): y[i] = sum_j relu(x[i][j] + b[j]).
#include <cmath>
#include <cstdio>
#include <vector>

#include "cinn_like/compile.h"
#include "frontend/net_builder.h"
#include "runtime/cinn_like_runtime.h"

using namespace cinn_like;

int main() {
  frontend::NetBuilder nb;
  const hlir::DType f32 = hlir::DType::kFloat32;  // x is [n, 64]: n is bound at each call
  auto x = nb.CreateInput(f32, {hlir::Dim::Symbol("n"), hlir::Dim::Known(64)}, "x");
  auto b = nb.CreateInput(f32, hlir::MakeShape({64}), "b");
  nb.MarkOutput(nb.ReduceSum(nb.Relu(nb.Add(x, b)), {1}));
  // value(): a failed step throws absl::BadStatusOrAccess with the error's message.
  auto compiled = CompileProgram(nb.Build().value(), ir::Target::X86(), "f").value();
  backends::EntryFunction f = compiled->Lookup("f").value();

  int64_t n = 5, x_shape[] = {n, 64}, b_shape[] = {64}, y_shape[] = {n};
  std::vector<float> xv(n * 64), bv(64), yv(n);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.37f * i);
  for (int j = 0; j < 64; ++j) bv[j] = 0.02f * j - 0.6f;  // some sums clip at 0, some do not
  DLTensor xt{xv.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, x_shape, nullptr, 0};
  DLTensor bt{bv.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, b_shape, nullptr, 0};
  DLTensor yt{yv.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, y_shape, nullptr, 0};
  DLTensor* args[] = {&xt, &bt, &yt};  // inputs, then outputs
  if (f(args, 3, /*stream=*/nullptr) != 0) return std::puts(cinn_like_get_last_error()), 1;

  for (int64_t i = 0; i < n; ++i) {  // the same sums in plain C++
    double want = 0;
    for (int j = 0; j < 64; ++j) want += std::fmax(xv[i * 64 + j] + bv[j], 0.0f);
    if (std::fabs(yv[i] - want) > 1e-4 * (1 + std::fabs(want)))
      return std::printf("row %d: got %g, want %g\n", int(i), yv[i], want), 1;
  }
  std::printf("ok: %d rows match\n", int(n));
}
