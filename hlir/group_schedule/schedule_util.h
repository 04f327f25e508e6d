/// \file Small questions and moves the tactics share: a stage's leaves by kind, static extents,
/// fusing leaves, column reductions, threads per row.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/schedule.h"
#include "ir/target.h"

namespace cinn_like::hlir {

/// Threads per block of the GPU tactics that do not size their blocks otherwise (a choice,
/// within every GPU's max_threads_per_block).
constexpr int kBlockThreads = 256;
/// The length from which a row that BlockPerRow reads without vectors takes blocks of 1024
/// threads (reduction_tactics.cc).
constexpr int64_t kLongScalarRow = 16384;
/// Reductions of at most this many elements per output are computed per thread on GPUs (a
/// pooling window, a short row): a block or a warp per output would leave most lanes idle.
constexpr int64_t kPerThreadMaxReduce = 32;
/// An elementwise stage whose innermost extent the vectors do not tile is vectorized along its
/// fused extent only when that innermost extent (a row) is at least this long: a vector then
/// rarely spans two rows, whose values of another shape it reads lane by lane.
constexpr int64_t kMinRowOfGatheredVectors = 512;

struct Leaves {
  std::vector<ir::Var> spatial, reduce;  // outermost first
};
Leaves SplitLeaves(const ir::Stage& s);

/// The product of the extents of `vars`' axes of `s`, or -1 when one is symbolic.
int64_t StaticExtent(const ir::Stage& s, const std::vector<ir::Var>& vars);

/// The number of elements each output of reduction stage `s` combines (its reduce root axes),
/// or -1 when one is symbolic.
int64_t ReduceExtent(const ir::Stage& s);

/// The extent of the one reduce root axis of reduction stage `s` when it is symbolic (a row of
/// symbolic length), undefined when it is static or `s` reduces over several axes. A copy:
/// scheduling `s` adds axes.
ir::Expr SymbolicReduceLength(const ir::Stage& s);

/// Reductions that load nothing along their reduce axes (a one-hot computed from indices, a
/// fill) of at most this many elements are row reductions (IsColumnReduction).
inline constexpr int64_t kLoadFreeRowMax = int64_t{1} << 20;

/// True when loads of the reduction stage's body index with a reduce axis, but none its last
/// dimension: the reduced axes are not the contiguous one (a column reduction). A reduction
/// that loads nothing along its reduce axes is one only past kLoadFreeRowMax elements (or of a
/// symbolic length), where the column tactics' chunks keep long sums exact: below, its reduce
/// axis costs no memory and row tactics split it over threads (as a column tactic it put a
/// whole 50257-long row on each thread of one two-stage kernel: 4 ms of GPT-2's step). On x86
/// such a sum then takes the row tactics too (vector partials, blocked: LongSumsX86).
bool IsColumnReduction(const ir::Stage& s);

/// For an elementwise stage that changes a layout (a transpose, fused or not): the position
/// among `spatial` (the stage's spatial root axes, outermost first) of the axis indexing the
/// innermost dim of a load that reads along the innermost axis but not in its innermost dim
/// (a transposed operand; a broadcast one does not read along it), or -1 when there is none. With
/// `buffers`, also the buffers of the loads whose innermost index that axis indexes.
int TransposedAxis(const ir::Stage& s, const std::vector<ir::Var>& spatial,
                   std::set<const ir::BufferNode*>* buffers = nullptr);

/// Whether every load of `buffer` in `s` (its stages inlined) is one and the same access whose
/// indices are each one of `axes` (the stage's root axes) or a constant: a permutation of the
/// output's indices, whose tile per thread is a box a local copy holds (an index of a reshape's
/// division, or two offsets, would not be: such a buffer is left in memory, not an error).
bool PermutedLoads(const ir::Stage& s, const std::vector<ir::Var>& axes,
                   const ir::BufferNode* buffer);

/// Whether `body` (`s`'s InlinedBody, built once by the caller for all its buffers) has one load
/// of `buffer`, whose indices are `s`'s root axes, each once, every one of extent above 1 among
/// them (constants allowed): over the stage's domain, each element of `buffer` is read once (a
/// broadcast operand, a window, a diagonal or a reshape's division is not).
bool ReadsEachElementOnce(const ir::Stage& s, const ir::Expr& body, const ir::BufferNode* buffer);

/// Whether reduction stage `s` (its stages inlined) has one reduce root axis and every load
/// indexes its last dim by that axis alone or not at all, and no other dim by it: each load is
/// contiguous along the reduction (or the same for all of it), so that vectors along the axis
/// are vector accesses, not gathers.
bool ReadsAlongReduceAxis(const ir::Stage& s);

/// `lanes` (one 16-byte vector of the widest element a row reduction reads) where every stage of
/// `reductions` reads along its one reduce axis (ReadsAlongReduceAxis) and a static row of
/// `extent` elements is a multiple of one vector for each of `threads` threads (no thread has a
/// partial vector; a row's start the host or the kernel checks for alignment,
/// backends/cuda/kernel_alignment.h); 0 otherwise (scalar loads).
int StaticRowVectorLanes(const std::vector<const ir::Stage*>& reductions, int lanes, int64_t extent,
                         int threads);

/// One 16-byte vector (the target's widest access) of the widest element `stages` read (their
/// stages inlined), leaving out `skip`; at least that of `bytes`. 0 when nothing is read.
int VectorLanesOfReads(const std::vector<const ir::Stage*>& stages,
                       const std::set<const ir::BufferNode*>& skip, int bytes,
                       const ir::Target& target);

/// Threads of a block reducing `extent` elements per row (-1: unknown): kBlockThreads, or
/// fewer for a short row (a multiple of the target's warp size covering it); for an unknown
/// (symbolic) length, the flag cinn_like_symbolic_row_threads (32: a warp per row).
int RowThreads(int64_t extent, const ir::Target& target);

/// Fuses the adjacent leaves `vars` (outermost first, at least one) of `s` into one loop.
absl::StatusOr<ir::Var> FuseAll(ir::Stage& s, const std::vector<ir::Var>& vars);

/// float32 lanes of the widest vector register of the device `target` runs on (x86: the
/// host's, 8 with AVX2, 16 with AVX-512; ir/device_properties.h).
int FloatLanes(const ir::Target& target);

/// The largest power of two from `widest` down to 2 that divides `n` (> 0), or 0.
int LanesDividing(int64_t n, int widest);

/// For each buffer, the stages of `sch` whose own bodies (not inlined) load from it, in
/// schedule order: one walk of every body, where asking Reads of each stage for each buffer
/// would walk the whole schedule once per buffer (a Program's schedule holds all its groups).
using ReaderIndex = std::map<const ir::BufferNode*, std::vector<const ir::Stage*>>;
ReaderIndex DirectReaders(const ir::Schedule& sch);

/// A row group's consumer as rows and columns: its first `row_dims` leaves fused into one row
/// loop (their static count, -1 when symbolic), the rest left as column leaves. Without a row
/// dim (a scalar reduction: the whole consumer is one row) the fused columns get an outer loop
/// of extent 1 split off as the row.
struct RowLeaves {
  ir::Var row;
  int64_t num_rows = -1;
  std::vector<ir::Var> cols;
};
absl::StatusOr<RowLeaves> FuseRows(ir::Stage& consumer, int row_dims);

/// Splits the loop `fused` of `s` by `threads`: the outer part on blockIdx.x, the inner on
/// threadIdx.x.
absl::Status BindBlocksAndThreads(ir::Stage& s, const ir::Var& fused, int threads);

/// Fuses the leaves `cols` (none: nothing to do) and splits them by `threads`, the inner part
/// on threadIdx.x (a row's columns over the threads of its warp or block).
absl::Status BindColumnsToThreads(ir::Stage& s, const std::vector<ir::Var>& cols, int threads);

/// `cols` of `s` fused, then in vectors of `lanes` contiguous elements (none: `lanes` < 2:
/// BindColumnsToThreads), the vectors dealt out over `threads` threads on threadIdx.x: a warp's
/// lanes then read 16 bytes each, side by side. The vector's tail guard (a row not a multiple of
/// `lanes`) makes the vectorizer branch to scalar lanes at the row's end only
/// (ir/transforms/vectorize.h); the vectors' alignment is checked at run time
/// (backends/cuda/kernel_alignment.h). With `serial`, the loop each thread runs over its vectors
/// (its columns without vectors).
absl::Status BindVectorsToThreads(ir::Stage& s, const std::vector<ir::Var>& cols, int threads,
                                  int lanes, ir::Var* serial = nullptr);

/// On CPUs, vectorizes the innermost reduce loop of row reduction `s` so that it accumulates
/// partials in vector registers (four of them where the row is long: four independent adds in
/// flight), summed once at the end (ir/transforms/vectorize_reduce.h; a tail runs serially).
/// Returns the vector width, 0 when the row is too short or symbolic.
absl::StatusOr<int> VectorizeRowReduce(ir::Stage& s, const ir::Target& target);

/// `n`, or "symbolic" when it is negative (unknown at compile time): for the dump's reasons.
std::string CountText(int64_t n);

/// The variables of `s`'s leaves, outermost first.
std::vector<ir::Var> LeafVars(const ir::Stage& s);

}  // namespace cinn_like::hlir
