/// \file GroupIndependentNests: GPU loop nests that SplitHostDevice would make kernels of one
/// launch shape, and that touch no buffer another of them writes, become one kernel.
#pragma once

#include <vector>

#include "ir/ir.h"

namespace cinn_like::ir {

/// Groups the top-level statements `top` of a GPU host entry's body (under its global
/// Allocates) for SplitHostDevice, which makes one kernel of each group of nests. A GPU-bound
/// loop nest joins the nearest earlier group (among the last kLookBack statements) of nests with
/// the same launch dims (grid and block, structurally equal; or the same block and grids of
/// constant extents on the same axes, one of at most kTinyGridBlocks blocks that the other
/// spans on every axis: the kernel's grid is the larger and the smaller nest's block loops are
/// guarded, a test uniform in each block, so barriers inside stay reached by every thread) when
/// nothing from that group on conflicts with it: no statement there writes a buffer the nest
/// reads or writes, or reads a buffer the nest writes (a host call, extern_call or
/// launch_kernel, counts as reading and writing every buffer it names). A group stands in its first
/// statement's place; its kernel's threads run its nests in turn, the same threads each nest had,
/// so a nest's barriers and block reduces are reached by every thread as before, and the nests run
/// concurrently across blocks, which independence makes safe. A group holds at most
/// kMaxMergedSharedBytes of shared memory. Any other statement is a group of one. Saves a launch
/// per nest that joins: a LayerNorm backward's weight and bias column sums (partials, then final
/// sums) pair up.
std::vector<std::vector<Stmt>> GroupIndependentNests(const std::vector<Stmt>& top);

/// `top` reordered so that more nests can share kernels: each GPU-bound loop nest that no later
/// statement depends on (nothing after it reads or writes what it writes, nor writes what it
/// reads: it computes outputs of the entry, say) moves to the end, the moved ones in their
/// order, while the entry's `workspaces` they read come to at most kSinkNestReadBytes for one
/// nest and kSinkReadBytes for all. A column reduction's
/// final sums (a bias or norm weight gradient, one per layer) each stood between its partials'
/// kernel and the next layer's, so none could join another; at the end they share one kernel.
/// The workspaces a moved nest reads live until the end: hence the bound.
std::vector<Stmt> SinkOutputNests(const std::vector<Stmt>& top,
                                  const std::vector<Buffer>& workspaces);

/// `top` reordered so that large workspaces die sooner: the statement that last uses a
/// workspace of at least kHoistWorkspaceBytes moves up to just after the last earlier statement
/// it depends on (one that writes what it reads or writes, or reads what it writes), when that
/// ends the workspace's life sooner and the buffers it names first, which it would then hold
/// sooner, are smaller. `allocated`: the buffers allocated at their first use (the entry's
/// outputs and workspaces), whose constant sizes count; `workspaces`: those also freed after
/// their last use. A training
/// backward's logits gradient was last read by the tied weight's matmul near its end, beside
/// every layer's gradients.
std::vector<Stmt> HoistLastReaders(const std::vector<Stmt>& top,
                                   const std::vector<Buffer>& allocated,
                                   const std::vector<Buffer>& workspaces);
inline constexpr int64_t kHoistWorkspaceBytes = int64_t{8} << 20;

/// The most bytes of workspaces one nest SinkOutputNests moves may read (a column reduction's
/// partials: 32 rows of 768 floats are 96 KiB, of 3072 floats 384 KiB), and all of them
/// together (GPT-2's backward moves about 40 nests, its peak is about 1.9 GiB).
inline constexpr int64_t kSinkNestReadBytes = int64_t{1} << 20;
inline constexpr int64_t kSinkReadBytes = int64_t{32} << 20;

/// A nest of at most this many blocks may share a kernel with nests of another grid (a
/// position or seed computation, a column reduction's final sums): it costs the larger nest's
/// blocks one test each, where a launch of its own costs a few microseconds.
inline constexpr int64_t kTinyGridBlocks = 32;
/// How many statements back a nest looks for a group to join: the pass stays linear in the
/// statements (a Program of thousands of independent nests), and kernels far apart in a step
/// would keep their buffers alive longer together.
inline constexpr int kLookBack = 64;
/// The static shared memory a merged group may hold: its nests' shared buffers and the arrays
/// of its block reduce helpers (CUDA allows 48 KB of static shared memory).
inline constexpr int64_t kMaxMergedSharedBytes = 40 * 1024;
/// A block reduce helper instantiation's shared arrays at most: 1024 values of up to 8 bytes
/// and two arrays of 32 (backends/cuda/block_reduce_source.cc).
inline constexpr int64_t kBlockReduceSharedBytes = 1024 * 8 + 2 * 32 * 8;

}  // namespace cinn_like::ir
