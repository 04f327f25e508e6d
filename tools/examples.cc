/// \file The seed examples, written with lang and schedule primitives.
#include "tools/examples.h"

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
#define CINN_LIKE_ASSIGN_OR_RETURN(lhs, expr)   \
  auto lhs##_or = (expr);                       \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *std::move(lhs##_or)

/// The float32 tensors of a binary example: inputs A and B, result C.
struct Operands {
  Tensor a, b, c;
};

/// A and B of `shape` and C = A + B.
Operands AddOf(const std::vector<Expr>& shape) {
  Tensor a = ir::Placeholder("A", Float(32), shape);
  Tensor b = ir::Placeholder("B", Float(32), shape);
  Tensor c = ir::Compute(
      shape, [&](const std::vector<Expr>& i) { return a(i) + b(i); }, "C");
  return {a, b, c};
}

/// A and B of size x size and C = A x B, reducing over k.
Operands MatmulOf(const Expr& size) {
  Tensor a = ir::Placeholder("A", Float(32), {size, size});
  Tensor b = ir::Placeholder("B", Float(32), {size, size});
  ir::IterVar k = ir::ReduceAxis(size, "k");
  Tensor c = ir::Compute(
      {size, size},
      [&](const std::vector<Expr>& i) {
        return ir::ReduceSum(a(i[0], k.var) * b(k.var, i[1]), {k});
      },
      "C");
  return {a, b, c};
}

/// C[i] = A[i] + B[i] over symbolic n; split by 64, bound to blockIdx.x/threadIdx.x on GPU targets.
absl::StatusOr<ir::LoweredFunc> BuildMyAdd(const ir::Target& target) {
  auto [a, b, c] = AddOf({Var("n")});
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
  CINN_LIKE_ASSIGN_OR_RETURN(parts, s.Split(i, 64));
  if (target.is_gpu()) {
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
  if (target.is_gpu()) {
    CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(i, "blockIdx.x"));
  }
  return ir::Lower("sum_reduce", {a, b}, sch, target);
}

/// C[i, j] = A[i, j] + B[i, j] over (m, 64) with the loops reordered to (j, i).
absl::StatusOr<ir::LoweredFunc> BuildAdd2DReorder(const ir::Target& target) {
  auto [a, b, c] = AddOf({Var("m"), Expr(64)});
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
  CINN_LIKE_ASSIGN_OR_RETURN(j, s.LeafAxis(1));
  CINN_LIKE_RETURN_IF_ERROR(s.Reorder({j, i}));
  if (target.is_gpu()) {
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(j, "threadIdx.x"));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(i, "blockIdx.x"));
  }
  return ir::Lower("add2d_reorder", {a, b, c}, sch, target);
}

/// C = A * B for 1024x1024 matrices, tiled 32x32 with the k loop between tiles and points.
absl::StatusOr<ir::LoweredFunc> BuildMatmulTiled(const ir::Target& target) {
  auto [a, b, c] = MatmulOf(Expr(1024));
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
  CINN_LIKE_ASSIGN_OR_RETURN(j, s.LeafAxis(1));
  CINN_LIKE_ASSIGN_OR_RETURN(tiles, s.Tile(i, j, 32, 32));
  CINN_LIKE_ASSIGN_OR_RETURN(kk, s.LeafAxis(4));
  CINN_LIKE_RETURN_IF_ERROR(s.Reorder({tiles[0], tiles[1], kk, tiles[2], tiles[3]}));
  if (target.is_gpu()) {
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(tiles[0], "blockIdx.y"));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(tiles[1], "blockIdx.x"));
    CINN_LIKE_RETURN_IF_ERROR(s.Reorder({tiles[2], tiles[3], kk}));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(tiles[2], "threadIdx.y"));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(tiles[3], "threadIdx.x"));
  }
  return ir::Lower("matmul_tiled", {a, b, c}, sch, target);
}

/// C[i, j] = A[i, j] + B[i, j] over (m, 256), tiled 16x64 with the inner j loop vectorized by 8
/// (x86) or split into 16 threads of 4 vectorized lanes (GPU targets).
absl::StatusOr<ir::LoweredFunc> BuildAddVectorized(const ir::Target& target) {
  auto [a, b, c] = AddOf({Var("m"), Expr(256)});
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
  CINN_LIKE_ASSIGN_OR_RETURN(j, s.LeafAxis(1));
  CINN_LIKE_ASSIGN_OR_RETURN(tiles, s.Tile(i, j, 16, 64));
  if (target.is_gpu()) {
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

/// B[i] = sum_j A[i, j] over symbolic (m, n). GPU targets: one block of 512 threads per row (i
/// bound to blockIdx.x); j = (j_outer * 4 + j_unroll) * 512 + tx with tx on threadIdx.x, so each
/// load is coalesced, and j_unroll unrolled, so each thread has four independent loads in flight
/// per j_outer iteration; each thread sums into a private partial and the block combines them
/// (LowerThreadReduce). X86: rows in parallel, j split by 8 with the inner part vectorized.
absl::StatusOr<ir::LoweredFunc> BuildRowSum(const ir::Target& target) {
  Var m("m"), n("n");
  Tensor a = ir::Placeholder("A", Float(32), {m, n});
  ir::IterVar j = ir::ReduceAxis(n, "j");
  Tensor b = ir::Compute(
      {m}, [&](const std::vector<Expr>& i) { return ir::ReduceSum(a(i[0], j.var), {j}); }, "B");
  auto sch = ir::Schedule::Create({b});
  ir::Stage& s = sch[b];
  CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
  if (target.is_gpu()) {
    CINN_LIKE_ASSIGN_OR_RETURN(chunks, s.Split(j.var, 4 * 512));
    CINN_LIKE_ASSIGN_OR_RETURN(lanes, s.Split(chunks.second, 512));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(i, "blockIdx.x"));
    CINN_LIKE_RETURN_IF_ERROR(s.Unroll(lanes.first));
    CINN_LIKE_RETURN_IF_ERROR(s.Bind(lanes.second, "threadIdx.x"));
  } else {
    CINN_LIKE_RETURN_IF_ERROR(s.Parallel(i));
    CINN_LIKE_RETURN_IF_ERROR(s.Vectorize(j.var, 8).status());
  }
  return ir::Lower("row_sum", {a, b}, sch, target);
}

/// Reference matmul for square n x n matrices, float64 accumulation.
void RefMatmul(std::vector<std::vector<float>>& args, int64_t n) {
  std::vector<double> row(n);
  for (int64_t i = 0; i < n; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t k = 0; k < n; ++k) {
      double a = args[0][i * n + k];
      const float* b = &args[1][k * n];
      for (int64_t j = 0; j < n; ++j) row[j] += a * b[j];
    }
    for (int64_t j = 0; j < n; ++j) args[2][i * n + j] = static_cast<float>(row[j]);
  }
}

void RefMatmul1024(std::vector<std::vector<float>>& args, int64_t) { RefMatmul(args, 1024); }

std::vector<std::vector<int64_t>> MatmulShapes1024(int64_t) {
  return {{1024, 1024}, {1024, 1024}, {1024, 1024}};
}

/// C[i] = A[i] + B[i] over symbolic n, vectorized. GPU targets: split by 4 (vectorized: float4
/// accesses), the rest by 256 threads (threadIdx.x) and blocks (blockIdx.x). x86: split by 8
/// (vectorized: <8 x float>), the rest into parallel chunks of 1024 vectors.
absl::StatusOr<ir::LoweredFunc> BuildVAdd(const ir::Target& target) {
  auto [a, b, c] = AddOf({Var("n")});
  auto sch = ir::Schedule::Create({c});
  ir::Stage& s = sch[c];
  CINN_LIKE_ASSIGN_OR_RETURN(i, s.LeafAxis(0));
  bool gpu = target.is_gpu();
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

/// An example of C = A + B over n elements (`cols` 0) or n x cols.
Example AddExample(std::string name, std::string description,
                   absl::StatusOr<ir::LoweredFunc> (*build)(const ir::Target&), int64_t cols,
                   std::vector<int64_t> sizes) {
  auto shapes = [cols](int64_t n) {
    std::vector<int64_t> shape = cols ? std::vector<int64_t>{n, cols} : std::vector<int64_t>{n};
    return std::vector<std::vector<int64_t>>{shape, shape, shape};
  };
  return {std::move(name), std::move(description), build, shapes, RefAdd, 2, std::move(sizes)};
}

std::vector<Example> MakeAll() {
  std::vector<Example> all;
  all.push_back(AddExample("myadd",
                           "C[i] = A[i] + B[i] over symbolic n, split by 64 (bound on GPU)",
                           BuildMyAdd, 0, {1, 63, 64, 65, 1000, 1 << 20}));
  all.push_back({"sum_reduce",
                 "B[0] = sum(A) over symbolic n, reduce axis split by 32",
                 BuildSumReduce,
                 [](int64_t n) {
                   return std::vector<std::vector<int64_t>>{{n}, {1}};
                 },
                 [](std::vector<std::vector<float>>& args, int64_t) {
                   double acc = 0;
                   for (float v : args[0]) acc += v;
                   args[1][0] = static_cast<float>(acc);
                 },
                 1,
                 {1, 31, 32, 33, 1000, 4097},
                 1e-5});
  all.push_back(AddExample("add2d_reorder", "C = A + B over (m, 64), loops reordered to (j, i)",
                           BuildAdd2DReorder, 64, {1, 7, 100}));
  all.push_back({"matmul_tiled",
                 "C = A x B, 1024x1024, tiled 32x32",
                 BuildMatmulTiled,
                 MatmulShapes1024,
                 RefMatmul1024,
                 2,
                 {1024},
                 1e-5});
  all.push_back(AddExample("add_vectorized",
                           "C = A + B over (m, 256), tiled 16x64, inner loop vectorized by 8",
                           BuildAddVectorized, 256, {16, 17, 100}));
  all.push_back({"row_sum",
                 "B[i] = sum_j A[i, j] over (n, n); a block reduce per row on GPU",
                 BuildRowSum,
                 [](int64_t n) {
                   return std::vector<std::vector<int64_t>>{{n, n}, {n}};
                 },
                 [](std::vector<std::vector<float>>& args, int64_t n) {
                   for (int64_t i = 0; i < n; ++i) {
                     double acc = 0;
                     for (int64_t j = 0; j < n; ++j) acc += args[0][i * n + j];
                     args[1][i] = static_cast<float>(acc);
                   }
                 },
                 1,
                 {1, 7, 33, 512, 1000, 2048},
                 1e-5});
  all.push_back(
      {"matmul_shared",
       "C = A x B, 1024x1024, 128x128 block tiles, 8x8 register tiles (thread-strided), K "
       "slices of 8 in shared memory",
       [](const ir::Target& t) { return BuildMatmulShared(t, 1024); },
       MatmulShapes1024,
       RefMatmul1024,
       2,
       {1024},
       1e-5});
  all.push_back(AddExample("vadd",
                           "C = A + B over symbolic n, vectorized (float4 under 256 threads on "
                           "GPU, 8 lanes in parallel chunks on x86)",
                           BuildVAdd, 0, {1, 3, 4, 5, 1023, 1 << 20, (1 << 20) + 3}));
  return all;
}

}  // namespace

absl::StatusOr<ir::LoweredFunc> BuildMatmulShared(const ir::Target& target, int size,
                                                  const MatmulSharedConfig& config,
                                                  const std::string& name) {
  const int bt = config.block_tile, tt = config.thread_tile, kt = config.k_tile;
  if (bt <= 0 || tt <= 0 || kt <= 0 || bt % tt != 0 || size <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("matmul_shared: size ", size, ", block tile ",
                                                   bt, ", thread tile ", tt, ", k tile ", kt,
                                                   ": the block tile must be a multiple of the "
                                                   "thread tile"));
  }
  const int threads = (bt / tt) * (bt / tt);
  if ((bt * kt) % threads != 0) {
    return absl::InvalidArgumentError(absl::StrCat("matmul_shared: a ", bt, "x", kt,
                                                   " shared tile does not spread over ", threads,
                                                   " threads evenly"));
  }
  auto [a, b, c] = MatmulOf(Expr(size));
  auto sch = ir::Schedule::Create({c});
  CINN_LIKE_ASSIGN_OR_RETURN(c_local, sch.CacheWrite(c, "local"));
  CINN_LIKE_ASSIGN_OR_RETURN(a_shared, sch.CacheRead(a, "shared", {c_local}));
  CINN_LIKE_ASSIGN_OR_RETURN(b_shared, sch.CacheRead(b, "shared", {c_local}));
  const bool gpu = target.is_gpu();

  // C: block tiles, then thread tiles of contiguous rows and columns.
  ir::Stage& sc = sch[c];
  CINN_LIKE_ASSIGN_OR_RETURN(i, sc.LeafAxis(0));
  CINN_LIKE_ASSIGN_OR_RETURN(j, sc.LeafAxis(1));
  CINN_LIKE_ASSIGN_OR_RETURN(tiles, sc.Tile(i, j, bt, bt));
  // rows/cols: (thread loop, loop within the thread's tile).
  std::pair<Var, Var> rows, cols;
  if (config.strided_threads) {
    CINN_LIKE_ASSIGN_OR_RETURN(r, sc.Split(tiles[2], bt / tt));
    CINN_LIKE_ASSIGN_OR_RETURN(c2, sc.Split(tiles[3], bt / tt));
    rows = {r.second, r.first};
    cols = {c2.second, c2.first};
  } else {
    CINN_LIKE_ASSIGN_OR_RETURN(r, sc.Split(tiles[2], tt));
    CINN_LIKE_ASSIGN_OR_RETURN(c2, sc.Split(tiles[3], tt));
    rows = r;
    cols = c2;
  }
  CINN_LIKE_RETURN_IF_ERROR(
      sc.Reorder({tiles[0], tiles[1], rows.first, cols.first, rows.second, cols.second}));
  CINN_LIKE_RETURN_IF_ERROR(sc.Unroll(rows.second));
  CINN_LIKE_RETURN_IF_ERROR(sc.Unroll(cols.second));
  if (gpu) {
    CINN_LIKE_RETURN_IF_ERROR(sc.Bind(tiles[0], "blockIdx.y"));
    CINN_LIKE_RETURN_IF_ERROR(sc.Bind(tiles[1], "blockIdx.x"));
    CINN_LIKE_RETURN_IF_ERROR(sc.Bind(rows.first, "threadIdx.y"));
    CINN_LIKE_RETURN_IF_ERROR(sc.Bind(cols.first, "threadIdx.x"));
  }

  // C_local: the thread's tt x tt accumulators, k split into slices.
  ir::Stage& sl = sch[c_local];
  CINN_LIKE_RETURN_IF_ERROR(sl.ComputeAt(sc, cols.first));
  CINN_LIKE_ASSIGN_OR_RETURN(li, sl.LeafAxis(0));
  CINN_LIKE_ASSIGN_OR_RETURN(lj, sl.LeafAxis(1));
  CINN_LIKE_ASSIGN_OR_RETURN(lk, sl.LeafAxis(2));
  CINN_LIKE_ASSIGN_OR_RETURN(ks, sl.Split(lk, kt));
  CINN_LIKE_RETURN_IF_ERROR(sl.Reorder({ks.first, ks.second, li, lj}));
  CINN_LIKE_RETURN_IF_ERROR(sl.Unroll(ks.second));
  CINN_LIKE_RETURN_IF_ERROR(sl.Unroll(li));
  CINN_LIKE_RETURN_IF_ERROR(sl.Unroll(lj));

  // A_shared (bt x kt) and B_shared (kt x bt): one slice per k step, copied by all threads.
  for (const Tensor& cache : {a_shared, b_shared}) {
    ir::Stage& s = sch[cache];
    CINN_LIKE_RETURN_IF_ERROR(s.ComputeAt(sl, ks.first));
    if (config.shared_row_pad > 0) {
      CINN_LIKE_RETURN_IF_ERROR(s.StorageAlign(0, 1, config.shared_row_pad));
    }
    CINN_LIKE_ASSIGN_OR_RETURN(x, s.LeafAxis(0));
    CINN_LIKE_ASSIGN_OR_RETURN(y, s.LeafAxis(1));
    CINN_LIKE_ASSIGN_OR_RETURN(fused, s.Fuse(x, y));
    if (gpu) {
      CINN_LIKE_ASSIGN_OR_RETURN(per_thread, s.Split(fused, threads));
      CINN_LIKE_RETURN_IF_ERROR(s.Unroll(per_thread.first));
      CINN_LIKE_ASSIGN_OR_RETURN(t, s.Split(per_thread.second, bt / tt));
      CINN_LIKE_RETURN_IF_ERROR(s.Bind(t.first, "threadIdx.y"));
      CINN_LIKE_RETURN_IF_ERROR(s.Bind(t.second, "threadIdx.x"));
    }
  }
  return ir::Lower(name, {a, b, c}, sch, target);
}

const std::vector<Example>& All() {
  static const std::vector<Example> all = MakeAll();
  return all;
}

std::vector<std::string> Names() {
  std::vector<std::string> names;
  for (auto& e : All()) names.push_back(e.name);
  return names;
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
