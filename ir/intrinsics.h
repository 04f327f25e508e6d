/// \file The one list of intrinsics: the operations a `Call` of kind kIntrinsic performs, with
/// what each means. Passes build them by IntrinsicOp; backends switch on the op and spell it
/// themselves (CUDA prints `__syncthreads()` for kSyncThreads); the printed IR uses the list
/// name (`sync_threads()`). Halide's `Call::IntrinsicOp` is the model.
///
/// The intrinsics, by the stage that makes them:
///  - Reduction markers (ir/tensor.h, ReduceSum...): `reduce_<kind>(body, var0, extent0, var1,
///    extent1, ...)` of body's type. Valid only as the whole value a Compute function returns:
///    Compute records the kind and the reduce axes and keeps `body`; no marker reaches lowering.
///  - Block reduces (LowerThreadReduce, GPU device code): `block_reduce_<kind>(partial)` of the
///    partial's scalar type T. Every thread of the block calls it with its partial and gets the
///    combination of the partials of the threads that share its threadIdx.y/z, i.e. the
///    reduction over threadIdx.x. All threads of the block must reach the call (it synchronizes
///    the block).
///  - Vector reduces (VectorizeReductions, CPU code; VectorizeLoops, a GPU thread's partial over a
///    vector of its row): `vector_reduce_<kind>(v)` with v a vector
///    of T returns the sum or product (lanes combined in any order), the max or the min of v's
///    lanes, as a T.
///  - thread_index(axis) (Stage::ComputeAt of a local buffer, GPU device code), the index type:
///    the thread's index along `axis` (an int constant: 0 threadIdx.x, 1 .y, 2 .z). It stands
///    for the variable of a loop bound to that thread index where one thread's region of a
///    local buffer is described outside the loop (a row cached in each thread's registers).
///  - sync_threads() (InsertSync, GPU device code), int32: a barrier of the thread block; the
///    shared-memory writes of every thread before it are visible to all threads after it. All
///    threads of the block must reach it.
///  - launch_kernel(kernel, gx, gy, gz, bx, by, bz, shared_bytes, args...) (SplitHostDevice,
///    GPU host entries), int32: launches the device kernel named by the StringImm `kernel` with
///    grid (gx, gy, gz) and block (bx, by, bz) (int32 each) and `shared_bytes` of dynamic shared
///    memory, on the entry's stream, passing `args` (buffer data handles and scalars) in the
///    kernel's argument order. A failed launch returns its nonzero code from the entry. An
///    extern tensor's statement may launch a library kernel that the backend adds to the
///    device module (the fused attention: hlir/ops/attention_kernel.cc).
///  - extern_call(function, args...) (ir::ExternCall, host code), int32: calls the runtime C
///    function `int function(args..., void* stream)` named by the StringImm `function`: buffer
///    data handles and string constants (const char*) pass as pointers, integer expressions as
///    int64, float expressions as double, and the entry's stream comes last. A nonzero return is
///    returned from the entry.
///  - philox_uniform(seed, stream, index) (the random ops, hlir/ops/random.cc), float32, all
///    three arguments int64: the uniform on [0, 1) that ir::PhiloxUniform (ir/philox.h) gives
///    for them, bit for bit on every backend. Pure and lane-wise: a vector of indices gives the
///    vector of their uniforms, so loops around it vectorize.
#pragma once

#include <cstdint>

namespace cinn_like::ir {

// X(Op, list name). The reduce families are in ReduceKind order (sum, max, min, prod).
// clang-format off
#define CINN_LIKE_INTRINSICS(X)                                                          \
  X(ReduceSum, "reduce_sum") X(ReduceMax, "reduce_max") X(ReduceMin, "reduce_min")       \
  X(ReduceProd, "reduce_prod")                                                           \
  X(BlockReduceSum, "block_reduce_sum") X(BlockReduceMax, "block_reduce_max")            \
  X(BlockReduceMin, "block_reduce_min") X(BlockReduceProd, "block_reduce_prod")          \
  X(VectorReduceSum, "vector_reduce_sum") X(VectorReduceMax, "vector_reduce_max")        \
  X(VectorReduceMin, "vector_reduce_min") X(VectorReduceProd, "vector_reduce_prod")      \
  X(ThreadIndex, "thread_index")                                                         \
  X(SyncThreads, "sync_threads")                                                         \
  X(LaunchKernel, "launch_kernel")                                                       \
  X(ExternCall, "extern_call")                                                           \
  X(PhiloxUniform, "philox_uniform")
// clang-format on

enum class IntrinsicOp : uint8_t {
#define CINN_LIKE_INTRINSIC_ENUM(op, name) k##op,
  CINN_LIKE_INTRINSICS(CINN_LIKE_INTRINSIC_ENUM)
#undef CINN_LIKE_INTRINSIC_ENUM
};

/// How many intrinsics the list has (IntrinsicOp values are 0 .. kNumIntrinsics - 1).
inline constexpr int kNumIntrinsics = 0
#define CINN_LIKE_INTRINSIC_COUNT(op, name) +1
    CINN_LIKE_INTRINSICS(CINN_LIKE_INTRINSIC_COUNT)
#undef CINN_LIKE_INTRINSIC_COUNT
    ;

/// The list name, as the printed IR shows it ("sync_threads").
inline const char* IntrinsicName(IntrinsicOp op) {
  static constexpr const char* kNames[] = {
#define CINN_LIKE_INTRINSIC_NAME(op, name) name,
      CINN_LIKE_INTRINSICS(CINN_LIKE_INTRINSIC_NAME)
#undef CINN_LIKE_INTRINSIC_NAME
  };
  return kNames[static_cast<int>(op)];
}

/// The block reduces and the vector reduces.
inline bool IsBlockReduce(IntrinsicOp op) {
  return op >= IntrinsicOp::kBlockReduceSum && op <= IntrinsicOp::kBlockReduceProd;
}
inline bool IsVectorReduce(IntrinsicOp op) {
  return op >= IntrinsicOp::kVectorReduceSum && op <= IntrinsicOp::kVectorReduceProd;
}
/// Intrinsics computed lane by lane with no effect (a vector call is the calls of its lanes):
/// loops around them vectorize as around arithmetic.
inline bool IsLanewise(IntrinsicOp op) { return op == IntrinsicOp::kPhiloxUniform; }

}  // namespace cinn_like::ir
