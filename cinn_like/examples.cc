/// \file The seed examples, written with lang and schedule primitives.
#include "cinn_like/examples.h"

#include "absl/strings/str_cat.h"
#include "ir/lower.h"
#include "ir/schedule.h"
#include "ir/tensor.h"

namespace cinn_like::examples {
namespace {

using ir::Expr;
using ir::Float;
using ir::Tensor;
using ir::Var;

#define CINN_LIKE_RETURN_IF_ERROR(expr) \
  do {                                  \
    absl::Status _st = (expr);          \
    if (!_st.ok()) return _st;          \
  } while (0)
#define CINN_LIKE_ASSIGN_OR_RETURN(lhs, expr) \
  auto lhs##_or = (expr);                     \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *std::move(lhs##_or)

/// C[i] = A[i] + B[i] over symbolic n; split by 64, bound to blockIdx.x/threadIdx.x on NVGPU.
absl::StatusOr<ir::LoweredFunc> BuildMyAdd(const ir::Target& target) {
  Var n("n");
  Tensor a = ir::Placeholder("A", Float(32), {n});
  Tensor b = ir::Placeholder("B", Float(32), {n});
  Tensor c = ir::Compute({n}, [&](const std::vector<Expr>& i) { return a(i[0]) + b(i[0]); }, "C");
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
  CINN_LIKE_ASSIGN_OR_RETURN(parts, s.Split(i, 64));
  if (target.is_nvgpu()) {
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(parts.first, "blockIdx.x"));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(parts.second, "threadIdx.x"));
  }
  return ir::Lower("myadd", {a, b, c}, sch, target);
}

/// B[0] = sum_k A[k] over symbolic n, the reduce axis split by 32.
absl::StatusOr<ir::LoweredFunc> BuildSumReduce(const ir::Target& target) {
  Var n("n");
  Tensor a = ir::Placeholder("A", Float(32), {n});
  ir::IterVar k = ir::ReduceAxis(n, "k");
  Tensor b = ir::Compute(
      {Expr(1)}, [&](const std::vector<Expr>&) { return ir::ReduceSum(a(k.var), {k}); }, "B");
  auto sch = ir::Schedule::Create({b});
  ir::Stage& s = sch[b];
  CINN_LIKE_ASSIGN_OR_RETURN(parts, s.Split(k.var, 32));
  if (target.is_nvgpu()) {
    CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(i, "blockIdx.x"));
  }
  return ir::Lower("sum_reduce", {a, b}, sch, target);
}

/// C[i, j] = A[i, j] + B[i, j] over (m, 64) with the loops reordered to (j, i).
absl::StatusOr<ir::LoweredFunc> BuildAdd2DReorder(const ir::Target& target) {
  Var m("m");
  Tensor a = ir::Placeholder("A", Float(32), {m, Expr(64)});
  Tensor b = ir::Placeholder("B", Float(32), {m, Expr(64)});
  Tensor c = ir::Compute(
      {m, Expr(64)}, [&](const std::vector<Expr>& i) { return a(i[0], i[1]) + b(i[0], i[1]); },
      "C");
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
  CINN_LIKE_ASSIGN_OR_RETURN(j, s.LeafAxis(1));
  CINN_LIKE_RETURN_IF_ERROR(s.Reorder({j, i}));
  if (target.is_nvgpu()) {
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(j, "threadIdx.x"));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(i, "blockIdx.x"));
  }
  return ir::Lower("add2d_reorder", {a, b, c}, sch, target);
}

/// C = A * B for 1024x1024 matrices, tiled 32x32 with the k loop between tiles and points.
absl::StatusOr<ir::LoweredFunc> BuildMatmulTiled(const ir::Target& target) {
  Expr size(1024);
  Tensor a = ir::Placeholder("A", Float(32), {size, size});
  Tensor b = ir::Placeholder("B", Float(32), {size, size});
  ir::IterVar k = ir::ReduceAxis(size, "k");
  Tensor c = ir::Compute(
      {size, size},
      [&](const std::vector<Expr>& i) { return ir::ReduceSum(a(i[0], k.var) * b(k.var, i[1]), {k}); },
      "C");
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
  CINN_LIKE_ASSIGN_OR_RETURN(j, s.LeafAxis(1));
  CINN_LIKE_ASSIGN_OR_RETURN(tiles, s.Tile(i, j, 32, 32));
  CINN_LIKE_ASSIGN_OR_RETURN(kk, s.LeafAxis(4));
  CINN_LIKE_RETURN_IF_ERROR(s.Reorder({tiles[0], tiles[1], kk, tiles[2], tiles[3]}));
  if (target.is_nvgpu()) {
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(tiles[0], "blockIdx.y"));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(tiles[1], "blockIdx.x"));
    CINN_LIKE_RETURN_IF_ERROR(s.Reorder({tiles[2], tiles[3], kk}));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(tiles[2], "threadIdx.y"));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(tiles[3], "threadIdx.x"));
  }
  return ir::Lower("matmul_tiled", {a, b, c}, sch, target);
}

/// C[i, j] = A[i, j] + B[i, j] over (m, 256), tiled 16x64 with the inner j loop vectorized by 8
/// (x86) or split into 16 threads of 4 vectorized lanes (NVGPU).
absl::StatusOr<ir::LoweredFunc> BuildAddVectorized(const ir::Target& target) {
  Var m("m");
  Expr cols(256);
  Tensor a = ir::Placeholder("A", Float(32), {m, cols});
  Tensor b = ir::Placeholder("B", Float(32), {m, cols});
  Tensor c = ir::Compute(
      {m, cols}, [&](const std::vector<Expr>& i) { return a(i[0], i[1]) + b(i[0], i[1]); }, "C");
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
  CINN_LIKE_ASSIGN_OR_RETURN(j, s.LeafAxis(1));
  CINN_LIKE_ASSIGN_OR_RETURN(tiles, s.Tile(i, j, 16, 64));
  if (target.is_nvgpu()) {
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(tiles[0], "blockIdx.y"));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(tiles[1], "blockIdx.x"));
    // 16 threads, each with 4 lanes: float4 accesses.
    CINN_LIKE_ASSIGN_OR_RETURN(parts, s.Split(tiles[3], 4));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(parts.first, "threadIdx.x"));
    CINN_LIKE_RETURN_IF_ERROR(s.Vectorize(parts.second));
  } else {
    CINN_LIKE_RETURN_IF_ERROR(s.Vectorize(tiles[3], 8).status());
  }
  return ir::Lower("add_vectorized", {a, b, c}, sch, target);
}

/// C[i] = A[i] + B[i] over symbolic n, vectorized. NVGPU: split by 4 (vectorized: float4
/// accesses), the rest by 256 threads (threadIdx.x) and blocks (blockIdx.x). x86: split by 8
/// (vectorized: <8 x float>), the rest into parallel chunks of 1024 vectors.
absl::StatusOr<ir::LoweredFunc> BuildVAdd(const ir::Target& target) {
  Var n("n");
  Tensor a = ir::Placeholder("A", Float(32), {n});
  Tensor b = ir::Placeholder("B", Float(32), {n});
  Tensor c = ir::Compute({n}, [&](const std::vector<Expr>& i) { return a(i[0]) + b(i[0]); }, "C");
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
  bool gpu = target.is_nvgpu();
  CINN_LIKE_ASSIGN_OR_RETURN(lanes, s.Split(i, gpu ? 4 : 8));
  CINN_LIKE_RETURN_IF_ERROR(s.Vectorize(lanes.second));
  CINN_LIKE_ASSIGN_OR_RETURN(outer, s.Split(lanes.first, gpu ? 256 : 1024));
  if (gpu) {
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(outer.first, "blockIdx.x"));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(outer.second, "threadIdx.x"));
  } else {
    CINN_LIKE_RETURN_IF_ERROR(s.Parallel(outer.first));
  }
  return ir::Lower("vadd", {a, b, c}, sch, target);
}

void RefAdd(std::vector<std::vector<float>>& args, int64_t) {
  for (size_t i = 0; i < args[2].size(); ++i) args[2][i] = args[0][i] + args[1][i];
}

std::vector<Example> MakeAll() {
  std::vector<Example> all;
  all.push_back({"myadd", "C[i] = A[i] + B[i] over symbolic n, split by 64 (bound on GPU)",
                 BuildMyAdd, [](int64_t n) { return std::vector<std::vector<int64_t>>{{n}, {n}, {n}}; },
                 RefAdd, 2, {1, 63, 64, 65, 1000, 1 << 20}});
  all.push_back({"sum_reduce", "B[0] = sum(A) over symbolic n, reduce axis split by 32",
                 BuildSumReduce,
                 [](int64_t n) { return std::vector<std::vector<int64_t>>{{n}, {1}}; },
                 [](std::vector<std::vector<float>>& args, int64_t) {
                   double acc = 0;
                   for (float v : args[0]) acc += v;
                   args[1][0] = static_cast<float>(acc);
                 },
                 1, {1, 31, 32, 33, 1000, 4097}, 1e-5});
  all.push_back({"add2d_reorder", "C = A + B over (m, 64), loops reordered to (j, i)",
                 BuildAdd2DReorder,
                 [](int64_t m) {
                   return std::vector<std::vector<int64_t>>{{m, 64}, {m, 64}, {m, 64}};
                 },
                 RefAdd, 2, {1, 7, 100}});
  all.push_back({"matmul_tiled", "C = A x B, 1024x1024, tiled 32x32", BuildMatmulTiled,
                 [](int64_t) {
                   return std::vector<std::vector<int64_t>>{{1024, 1024}, {1024, 1024}, {1024, 1024}};
                 },
                 [](std::vector<std::vector<float>>& args, int64_t) {
                   const int n = 1024;
                   std::vector<double> row(n);
                   for (int i = 0; i < n; ++i) {
                     std::fill(row.begin(), row.end(), 0.0);
                     for (int k = 0; k < n; ++k) {
                       double a = args[0][i * n + k];
                       const float* b = &args[1][k * n];
                       for (int j = 0; j < n; ++j) row[j] += a * b[j];
                     }
                     for (int j = 0; j < n; ++j) args[2][i * n + j] = static_cast<float>(row[j]);
                   }
                 },
                 2, {1024}, 1e-5});
  all.push_back({"add_vectorized", "C = A + B over (m, 256), tiled 16x64, inner loop vectorized by 8",
                 BuildAddVectorized,
                 [](int64_t m) {
                   return std::vector<std::vector<int64_t>>{{m, 256}, {m, 256}, {m, 256}};
                 },
                 RefAdd, 2, {16, 17, 100}});
  all.push_back({"vadd",
                 "C = A + B over symbolic n, vectorized (float4 under 256 threads on GPU, 8 "
                 "lanes in parallel chunks on x86)",
                 BuildVAdd, [](int64_t n) { return std::vector<std::vector<int64_t>>{{n}, {n}, {n}}; },
                 RefAdd, 2, {1, 3, 4, 5, 1023, 1 << 20, (1 << 20) + 3}});
  return all;
}

}  // namespace

const std::vector<Example>& All() {
  static const std::vector<Example> all = MakeAll();
  return all;
}

absl::StatusOr<Example> Find(const std::string& name) {
  std::string names;
  for (auto& e : All()) {
    if (e.name == name) return e;
    absl::StrAppend(&names, names.empty() ? "" : ", ", e.name);
  }
  return absl::NotFoundError("no built-in example named '" + name + "'; the examples are " + names);
}

}  // namespace cinn_like::examples
