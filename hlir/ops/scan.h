/// \file The scan ops (inclusive scans along one axis: PyTorch's cumulative ops) shared by their
/// files: scan.cc (inference, float64 reference, registration) and scan_compute.cc (the loop
/// nests in lang).
///
///   cumsum(x), cumprod(x), logcumsumexp(x) -> out, x's dtype and shape
///   cummax(x), cummin(x)                   -> (values of x's dtype, indices int64)
///
/// Along the attribute `axis` (required; negative counts from the end), each line (the elements
/// differing only in `axis`) is walked in order: out[.., k, ..] combines x[.., j, ..] for every
/// j <= k. logcumsumexp is log Σ exp, kept stable by combining a running value r with x as
/// max + log1p(exp(min - max)) (equal infinities give that infinity). cummax (cummin) keeps the
/// running maximum (minimum) and the index of its LAST occurrence, a NaN counting as extreme
/// (each later NaN takes its own index), as PyTorch's CPU loop does. cumsum/cumprod take numeric
/// dtypes (their results wrap in an integer dtype), logcumsumexp floats, cummax/cummin any dtype
/// (bool too); float16 and bfloat16 accumulate in float32.
///
/// The work is linear in the line's length: one serial loop per line carrying the running
/// value in a local, lines independent (on the CPU's thread pool; one GPU thread per line). The
/// nest is an extern tensor's statement, so no schedule touches it, and the ops are opaque, so
/// fusion never splits a line across kernels.
#pragma once

#include "hlir/op.h"

namespace cinn_like::hlir::ops {

enum class ScanKind : uint8_t { kSum, kProd, kMax, kMin, kLogSumExp };
/// The op's name: "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp".
const char* ScanName(ScanKind kind);

/// The scan as loop nests: for GPU targets (`gpu`) a thread per line (blockIdx.x * 256 +
/// threadIdx.x), else the lines as a loop, parallel when there is enough work.
ComputeFn ScanCompute(ScanKind kind, bool gpu);

}  // namespace cinn_like::hlir::ops
