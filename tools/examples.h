/// \file The built-in example subgraphs (the seeds): each builds its scheduled function for a
/// target, describes its arguments for a problem size, and computes the reference result.
/// The stage-printing tool, the demo and the tests all use them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "ir/target.h"

namespace cinn_like::examples {

struct Example {
  std::string name;  // also the function name
  std::string description;
  /// The lowered function for the target.
  std::function<absl::StatusOr<ir::LoweredFunc>(const ir::Target&)> build;
  /// Argument shapes (inputs then outputs, float32) for problem size n.
  std::function<std::vector<std::vector<int64_t>>(int64_t n)> shapes;
  /// Fills the outputs from the inputs (float64 accumulation); args as in shapes().
  std::function<void(std::vector<std::vector<float>>& args, int64_t n)> reference;
  int num_inputs = 2;
  /// Problem sizes the example is checked at.
  std::vector<int64_t> sizes;
  /// Largest accepted ||out - ref|| / ||ref|| over the outputs.
  double tolerance = 1e-6;
};

/// Tile sizes of the shared-memory matmul schedule (BuildMatmulShared).
struct MatmulSharedConfig {
  int block_tile = 128;    // C rows and columns per thread block (NVGPU)
  int thread_tile = 8;     // C rows and columns per thread, in registers (cache_write local)
  int k_tile = 8;          // K slice staged in shared memory per step (cache_read + compute_at)
  int shared_row_pad = 0;  // extra elements after each row of the shared tiles (storage_align)
  /// Thread (ty, tx) owns rows ty + r * T and columns tx + c * T (T = block_tile /
  /// thread_tile threads per side) instead of a contiguous thread_tile^2 block: conflict-free
  /// shared reads and coalesced stores of C, through compute_at's strided regions.
  bool strided_threads = true;
};

/// C = A x B for size x size x size float32 matrices, the classic GPU schedule: one block per
/// block_tile^2 tile of C (blockIdx.y/x), (block_tile/thread_tile)^2 threads each keeping a
/// thread_tile^2 accumulator in registers, A and B staged through shared memory one k_tile
/// slice at a time (copy loops spread over the threads), barriers from InsertSync. On x86 the
/// same stages without bindings. `size` must be a multiple of block_tile and k_tile.
absl::StatusOr<ir::LoweredFunc> BuildMatmulShared(const ir::Target& target, int size,
                                                  const MatmulSharedConfig& config = {},
                                                  const std::string& name = "matmul_shared");

/// myadd, sum_reduce, add2d_reorder, matmul_tiled, add_vectorized, row_sum, matmul_shared, vadd.
const std::vector<Example>& All();
/// The names of All(), in order: what the example tests iterate over.
std::vector<std::string> Names();
/// The example called `name`, or NotFound listing the names.
absl::StatusOr<Example> Find(const std::string& name);

}  // namespace cinn_like::examples
