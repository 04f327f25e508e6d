/// \file A framework compiles and calls from many threads at once, and may set flags while it
/// does: 8 threads each compile their own Programs and call them, while another thread flips
/// flags that change the generated code or what a compile writes, but not its results. Every
/// result matches; nothing crashes (scripts/sanitize.sh runs it under ASan and UBSan too).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <random>
#include <thread>

#include "cinn_like/compile.h"
#include "frontend/net_builder.h"
#include "ir/flags.h"

namespace cinn_like {
namespace {

using hlir::DType;

/// out = exp(x * k) + reduce_sum(x, axis 1)[:, None], with k per thread.
absl::StatusOr<frontend::Program> Program(double k) {
  frontend::NetBuilder b;
  auto x =
      b.CreateInput(DType::kFloat32, hlir::Shape{hlir::Dim::Symbol("n"), hlir::Dim::Known(8)}, "x");
  auto kc = b.Op("constant", {},
                 {{"shape", std::vector<int64_t>{1}}, {"values", std::vector<double>{k}}});
  auto sum = b.Op("reduce_sum", {x}, {{"axes", std::vector<int64_t>{1}}, {"keepdim", true}});
  b.MarkOutput(b.Add(b.Exp(b.Mul(x, kc[0])), sum[0]));
  return b.Build();
}

TEST(Concurrency, CompileAndCallFromEightThreadsWhileFlagsChange) {
  constexpr int kThreads = 8, kRounds = 3;
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  // String flags too: a compile reads them (StringFlag) while they are reassigned.
  const std::string dump = (std::filesystem::temp_directory_path() /
                            ("cinn_like_concurrency_" + std::to_string(getpid())))
                               .string();
  std::thread flipper([&] {
    for (int i = 0; !done; ++i) {
      std::string error;
      EXPECT_TRUE(SetFlag("cinn_like_fusion", i % 2 ? "true" : "false", &error)) << error;
      EXPECT_TRUE(SetFlag("cinn_like_dump_dir", i % 3 ? "" : dump, &error)) << error;
      EXPECT_TRUE(SetFlag("cinn_like_debug_fail_op", i % 2 ? "no_such_op" : "", &error)) << error;
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 rng(std::random_device{}());
      std::uniform_real_distribution<float> dist(-1, 1);
      for (int r = 0; r < kRounds; ++r) {
        const double k = 0.25 * (t + 1) + 0.01 * r;
        const std::string name = "f" + std::to_string(t) + "_" + std::to_string(r);
        auto program = Program(k);
        ASSERT_TRUE(program.ok()) << program.status();
        auto compiled = CompileProgram(*program, ir::Target::X86(), name);
        if (!compiled.ok()) {
          ADD_FAILURE() << compiled.status();
          ++failures;
          return;
        }
        auto fn = (*compiled)->Lookup(name);
        ASSERT_TRUE(fn.ok()) << fn.status();
        for (int64_t n : {1, 5, 64}) {
          std::vector<float> x(n * 8), out(n * 8, NAN);
          for (float& v : x) v = dist(rng);
          std::vector<int64_t> xs{n, 8};
          DLTensor in{x.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs.data(), nullptr, 0};
          DLTensor o{out.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs.data(), nullptr, 0};
          DLTensor* args[] = {&in, &o};
          ASSERT_EQ((*fn)(args, 2, nullptr), 0);
          for (int64_t i = 0; i < n; ++i) {
            double sum = 0;
            for (int j = 0; j < 8; ++j) sum += x[i * 8 + j];
            for (int j = 0; j < 8; ++j) {
              double want = std::exp(k * x[i * 8 + j]) + sum;
              if (!(std::fabs(out[i * 8 + j] - want) <= 1e-5 + 1e-5 * std::fabs(want))) {
                ADD_FAILURE() << name << " n " << n << " [" << i << ", " << j << "]: got "
                              << out[i * 8 + j] << ", want " << want;
                ++failures;
                return;
              }
            }
          }
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  done = true;
  flipper.join();
  EXPECT_EQ(failures, 0);
  std::string error;
  SetFlag("cinn_like_fusion", "true", &error);
  SetFlag("cinn_like_dump_dir", "", &error);
  SetFlag("cinn_like_debug_fail_op", "", &error);
  std::filesystem::remove_all(dump);
}

}  // namespace
}  // namespace cinn_like
