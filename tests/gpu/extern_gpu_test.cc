/// \file GPU machine only: extern library calls through the lang ExternTensor path (Pre =
/// X * 2 kernel, extern, Out = E + 1 kernel) against float64 references on fresh random data:
/// cuBLAS matmul (plain, transposed, batched with a broadcast operand), linear with bias,
/// cuDNN conv2d (the seed network's 1x3x224x224 -> 16 3x3 pad 1; strided and grouped; its plan
/// made at compile time).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "backends/compiler.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/cuda/cuda_runtime.h"
#include "runtime/cuda/cudnn.h"
#include "tests/cuda/extern_module.h"

namespace cinn_like::backends {
namespace {

using Shape = std::vector<int64_t>;

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<float> Random(int64_t n, unsigned seed) {
  std::vector<float> v(n);
  uint32_t state = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 2.f - 1.f;
  }
  return v;
}

std::vector<ir::Expr> Exprs(const Shape& s) {
  std::vector<ir::Expr> e;
  for (int64_t d : s) e.push_back(ir::Expr(static_cast<int>(d)));
  return e;
}

/// Builds the sandwich for `op`, runs it on fresh data and compares Out with
/// reference(2 * X, inputs...) + 1 computed in double.
void RunSandwich(
    const std::string& op, const hlir::AttributeMap& attrs, const Shape& x_shape,
    const std::vector<Shape>& in_shapes, const Shape& out_shape,
    const std::function<std::vector<double>(const std::vector<std::vector<double>>&)>& reference,
    double tol, const std::function<void()>& after_build = nullptr) {
  auto def = hlir::OpRegistry::Global().Find(op);
  ASSERT_TRUE(def.ok()) << def.status();
  std::vector<ir::Tensor> inputs;
  for (size_t i = 0; i < in_shapes.size(); ++i) {
    inputs.push_back(ir::Placeholder("I" + std::to_string(i), ir::Float(32), Exprs(in_shapes[i])));
  }
  auto f =
      testing::BuildExternSandwich(op + "_ext", (*def)->extern_compute, attrs, ir::Float(32),
                                   Exprs(x_shape), inputs, Exprs(out_shape), ir::Target::NVGPU());
  ASSERT_TRUE(f.ok()) << f.status();
  auto compiler = Compiler::Create(ir::Target::NVGPU());
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  absl::Status built = (*compiler)->Build({(*f)->name, (*compiler)->target(), {*f}});
  ASSERT_TRUE(built.ok()) << built;
  auto fn = (*compiler)->Lookup((*f)->name);
  ASSERT_TRUE(fn.ok()) << fn.status();
  if (after_build) after_build();

  std::vector<Shape> shapes{x_shape};
  shapes.insert(shapes.end(), in_shapes.begin(), in_shapes.end());
  shapes.push_back(out_shape);
  std::vector<std::vector<float>> host;
  std::vector<void*> dev(shapes.size());
  std::vector<DLTensor> tensors(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    host.push_back(Random(Numel(shapes[i]), static_cast<unsigned>(i + 7)));
    size_t bytes = host[i].size() * sizeof(float);
    ASSERT_EQ(cinn_like_cuda_malloc(&dev[i], bytes), 0) << cinn_like_get_last_error();
    ASSERT_EQ(cinn_like_cuda_memcpy_to_device(dev[i], host[i].data(), bytes), 0);
    tensors[i] = DLTensor{};
    tensors[i].data = dev[i];
    tensors[i].device = {kDLCUDA, 0};
    tensors[i].ndim = static_cast<int32_t>(shapes[i].size());
    tensors[i].dtype = {kDLFloat, 32, 1};
    tensors[i].shape = shapes[i].data();
  }
  std::vector<DLTensor*> args;
  for (auto& t : tensors) args.push_back(&t);
  int rc = (*fn)(args.data(), static_cast<int32_t>(args.size()), nullptr);
  ASSERT_EQ(rc, 0) << cinn_like_get_last_error();
  ASSERT_EQ(cinn_like_cuda_synchronize(), 0) << cinn_like_get_last_error();
  std::vector<float> out(Numel(out_shape));
  ASSERT_EQ(cinn_like_cuda_memcpy_to_host(out.data(), dev.back(), out.size() * sizeof(float)), 0);
  std::vector<std::vector<double>> ref_in;
  for (size_t i = 0; i + 1 < shapes.size(); ++i) {
    ref_in.emplace_back(host[i].begin(), host[i].end());
  }
  for (double& v : ref_in[0]) v *= 2;
  std::vector<double> want = reference(ref_in);
  ASSERT_EQ(want.size(), out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    ASSERT_NEAR(out[i], want[i] + 1, tol * (1 + std::fabs(want[i]))) << op << " at " << i;
  }
  for (void* p : dev) cinn_like_cuda_free(p);
}

/// Row-major batched matmul reference; a batch of 1 in an operand broadcasts.
std::vector<double> Matmul(const std::vector<double>& a, const std::vector<double>& b,
                           int64_t batch, int64_t ba, int64_t bb, int64_t m, int64_t n, int64_t k,
                           bool ta, bool tb) {
  std::vector<double> c(batch * m * n);
  for (int64_t q = 0; q < batch; ++q) {
    const double* pa = a.data() + (ba == 1 ? 0 : q) * m * k;
    const double* pb = b.data() + (bb == 1 ? 0 : q) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l) {
          s += (ta ? pa[l * m + i] : pa[i * k + l]) * (tb ? pb[j * k + l] : pb[l * n + j]);
        }
        c[(q * m + i) * n + j] = s;
      }
    }
  }
  return c;
}

TEST(ExternGpu, MatmulFloat32) {
  RunSandwich(
      "matmul", {}, {33, 70}, {{70, 19}}, {33, 19},
      [](const auto& in) { return Matmul(in[0], in[1], 1, 1, 1, 33, 19, 70, false, false); }, 1e-5);
}

TEST(ExternGpu, MatmulTransposedBatchedWithBroadcast) {
  hlir::AttributeMap attrs{{"transpose_x", true}, {"transpose_y", true}};
  RunSandwich(
      "matmul", attrs, {3, 40, 17}, {{1, 9, 40}}, {3, 17, 9},
      [](const auto& in) { return Matmul(in[0], in[1], 3, 3, 1, 17, 9, 40, true, true); }, 1e-5);
}

TEST(ExternGpu, LinearWithBias) {
  RunSandwich(
      "linear", {}, {2, 5, 64}, {{24, 64}, {24}}, {2, 5, 24},
      [](const auto& in) {
        std::vector<double> c = Matmul(in[0], in[1], 1, 1, 1, 10, 24, 64, false, true);
        for (size_t i = 0; i < c.size(); ++i) c[i] += in[2][i % 24];
        return c;
      },
      1e-5);
}

std::vector<double> Conv(const std::vector<double>& x, const std::vector<double>& w,
                         const Shape& xs, const Shape& ws, const Shape& ys, int64_t pad,
                         int64_t stride, int64_t groups) {
  std::vector<double> y(Numel(ys));
  int64_t cg = ws[1], og = ws[0] / groups;
  for (int64_t n = 0; n < ys[0]; ++n)
    for (int64_t o = 0; o < ys[1]; ++o)
      for (int64_t h = 0; h < ys[2]; ++h)
        for (int64_t v = 0; v < ys[3]; ++v) {
          double s = 0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t r = 0; r < ws[2]; ++r)
              for (int64_t q = 0; q < ws[3]; ++q) {
                int64_t ih = h * stride - pad + r, iw = v * stride - pad + q;
                if (ih < 0 || iw < 0 || ih >= xs[2] || iw >= xs[3]) continue;
                int64_t ic = o / og * cg + c;
                s += x[((n * xs[1] + ic) * xs[2] + ih) * xs[3] + iw] *
                     w[((o * cg + c) * ws[2] + r) * ws[3] + q];
              }
          y[((n * ys[1] + o) * ys[2] + h) * ys[3] + v] = s;
        }
  return y;
}

TEST(ExternGpu, Conv2dSeedNetwork) {
  hlir::AttributeMap attrs{{"paddings", std::vector<int64_t>{1, 1}}};
  Shape xs{1, 3, 224, 224}, ws{16, 3, 3, 3}, ys{1, 16, 224, 224};
  RunSandwich(
      "conv2d", attrs, xs, {ws}, ys,
      [&](const auto& in) { return Conv(in[0], in[1], xs, ws, ys, 1, 1, 1); }, 1e-5);
}

TEST(ExternGpu, Conv2dStridedGroupedWithBias) {
  hlir::AttributeMap attrs{{"paddings", std::vector<int64_t>{1, 1}},
                           {"strides", std::vector<int64_t>{2, 2}},
                           {"groups", int64_t{2}}};
  Shape xs{2, 4, 15, 13}, ws{6, 2, 3, 3}, ys{2, 6, 8, 7};
  RunSandwich(
      "conv2d", attrs, xs, {ws, {6}}, ys,
      [&](const auto& in) {
        std::vector<double> y = Conv(in[0], in[1], xs, ws, ys, 1, 2, 2);
        for (size_t i = 0; i < y.size(); ++i) y[i] += in[2][(i / (8 * 7)) % 6];
        return y;
      },
      1e-5);
}

TEST(ExternGpu, Conv2dPlanIsMadeAtCompileTime) {
  // The compile-time check makes the configuration's cuDNN plan (an engine or algorithm for
  // it, else the generated kernel would serve the op); the call finds it made.
  hlir::AttributeMap attrs{{"paddings", std::vector<int64_t>{1, 1}}};
  Shape xs{3, 5, 9, 11}, ws{7, 5, 3, 3}, ys{3, 7, 9, 11};
  const size_t before = runtime::cuda::CudnnPlanCount();
  size_t built = 0;
  RunSandwich(
      "conv2d", attrs, xs, {ws}, ys,
      [&](const auto& in) { return Conv(in[0], in[1], xs, ws, ys, 1, 1, 1); }, 1e-5,
      [&] {
        // Made beside the Build: CompileProgram waits for it at its end, as this does.
        EXPECT_TRUE(runtime::cuda::CudnnWaitForPlans().ok());
        built = runtime::cuda::CudnnPlanCount();
      });
  EXPECT_EQ(built, before + 1);
  EXPECT_EQ(runtime::cuda::CudnnPlanCount(), built);
}

TEST(ExternGpu, Conv2dPlansAreMadeBesideTheCompile) {
  runtime::cuda::Conv2dArgs a{};
  a.dtype = runtime::cuda::kConvFloat32;
  a.n = 2, a.c = 6, a.h = 10, a.w_dim = 12, a.k = 4, a.r = 3, a.s = 3, a.out_h = 10, a.out_w = 12;
  a.pad_h = a.pad_w = 1, a.stride_h = a.stride_w = 1, a.dilation_h = a.dilation_w = 1;
  a.groups = 1;
  const size_t before = runtime::cuda::CudnnPlanCount();
  auto queued = runtime::cuda::CudnnPrepareConv2dBeside(a);
  ASSERT_TRUE(queued.ok()) << queued.status();
  EXPECT_TRUE(*queued);
  ASSERT_TRUE(runtime::cuda::CudnnPrepareConv2dBeside(a).ok());  // queued twice: one plan
  EXPECT_TRUE(runtime::cuda::CudnnWaitForPlans().ok());
  EXPECT_EQ(runtime::cuda::CudnnPlanCount(), before + 1);
  auto known = runtime::cuda::CudnnPrepareConv2dBeside(a);  // made: answered at once
  ASSERT_TRUE(known.ok());
  EXPECT_TRUE(*known);
  EXPECT_TRUE(runtime::cuda::CudnnWaitForPlans().ok());  // nothing was queued
  a.groups = 4;  // does not divide 6 channels: refused at once, nothing queued
  auto wrong = runtime::cuda::CudnnPrepareConv2dBeside(a);
  EXPECT_FALSE(wrong.ok());
  EXPECT_EQ(runtime::cuda::CudnnPlanCount(), before + 1);
}

}  // namespace
}  // namespace cinn_like::backends
