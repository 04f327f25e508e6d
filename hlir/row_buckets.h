/// \file Buckets of row lengths: a GPU Program whose row reductions have rows of symbolic
/// length is lowered again for a few bounds on those lengths, where the persistent-row tactic
/// holds each row in registers (padded to the bound, guarded), and its host entry picks, kernel
/// by kernel, the tightest bucket the call's sizes fall in (Inductor's persistent reductions
/// and CINN's buckets of dynamic shapes, selected at the call).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "ir/module.h"

namespace cinn_like::hlir {

/// The bounds of the row-length buckets, tightest first.
inline constexpr int64_t kRowBuckets[] = {128, 512, 2048};

/// One bucket's lowering: the split host entry of the same Program (its kernels named apart)
/// and the row lengths its tactics held to `bound` (GroupScheduleInput::padded_rows).
struct RowBucket {
  int64_t bound = 0;
  ir::LoweredFunc entry;
  std::vector<ir::Expr> padded_rows;
};

/// The GPU host entry `generic` with, at each launch where a bucket's kernel differs from the
/// generic one (ir::KernelComparableForm up to buffers), a choice by the sizes:
/// `if (rows <= 128) <bucket 128's launch> else if (rows <= 512) ... else <generic launch>`,
/// the buckets' buffers, workspaces and size variables renamed to the generic entry's and the
/// kernels those launches name added to its kernels. `buckets` tightest first, each a lowering
/// of the same Program; one whose arguments, workspaces (dtype, rank) or launches do not pair
/// with the generic entry's in order is left out (logged).
ir::LoweredFunc MergeRowBuckets(const ir::LoweredFunc& generic,
                                const std::vector<RowBucket>& buckets);

}  // namespace cinn_like::hlir
