/// \file Schedules: how each Compute tensor's loop nest is shaped. A Stage holds one tensor's
/// axes (one per dimension, then one per reduce axis), the splits and fuses that derived new
/// axes from them, the order of the leaf axes (outermost first) and how each leaf loop runs.
/// It also says where the nest goes: its own top-level nest (the default), nowhere (inlined
/// into its consumers, or its consumer folded into its store), or inside a loop of a consumer
/// (compute_at, over the region that consumer needs). The Schedule adds and rewires stages
/// (cache_read, cache_write, rfactor). Primitives check their arguments and return a status
/// naming the stage and the axis.
///
/// Limits of compute_at: the consumer's loops must be scheduled before the call (the region is
/// inferred then, and lowering fails if they changed); the consumer's indices into the
/// producer must be affine in the loop variables with constant coefficients, and the region
/// must have a constant shape (the common split/tile cases). A dimension the consumer steps
/// through by one inner loop with a constant stride (a thread's strided share of a tile) gets
/// a compact region of that stride.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "ir/tensor.h"

namespace cinn_like::ir {

class Stage;

/// What the stages of one schedule share; stages point to it, so it outlives copies of the
/// Schedule handle.
struct ScheduleState {
  std::vector<std::unique_ptr<Stage>> stages;  // producers first
  std::map<const TensorNode*, Stage*> by_tensor;
  std::map<const BufferNode*, Stage*> by_buffer;  // each stage's tensor's buffer
  /// Adds `stage` to the maps (its place in `stages` is the caller's).
  void Index(Stage* stage);
  /// The stage whose tensor owns `buffer`, or null.
  Stage* ByBuffer(const BufferNode* buffer) const;
};

class Stage {
 public:
  struct Axis {
    Var var;
    Expr extent;
    bool is_reduce = false;
    ForKind kind = ForKind::kSerial;
    int bind_axis = -1;  // 0..2 for GPU-bound axes
  };
  /// parent -> (outer, inner) by a factor (inner extent) or nparts (outer extent); or
  /// (outer, inner) -> fused. Indices into axes().
  struct Relation {
    enum class Kind : uint8_t { kSplit, kFuse } kind;
    int parent = -1, outer = -1, inner = -1, fused = -1;
    Expr factor;         // split: the inner extent
    bool exact = false;  // split: the parent extent is a multiple of factor (no tail guard)
  };

  /// A stage's loops, and those of the stages it is computed at: per level (this stage first)
  /// the leaf loops, the number of splits and fuses, and the consumer loop the level is
  /// computed at. Two are equal when the loops are the same variables (nodes, not names) with
  /// structurally equal extents and the same threadIdx bindings; other loop kinds (unroll,
  /// vectorize, parallel) do not count, as they do not change a region.
  struct Signature {
    struct Level {
      std::vector<Axis> leaves;
      size_t num_relations = 0;
      Var attach_loop;  // undefined when the level is not computed at a loop
    };
    std::vector<Level> levels;
    bool operator==(const Signature& other) const;
    bool operator!=(const Signature& other) const { return !(*this == other); }
  };

  /// Where the nest of a stage computed at a consumer's loop goes, and over what region.
  struct Attach {
    const Stage* consumer = nullptr;
    Var loop;                     // a leaf of the consumer
    std::vector<Expr> min;        // region origin per dimension, in enclosing loop variables
    std::vector<int64_t> extent;  // region shape
    std::vector<int64_t> stride;  // element r of dimension d is index min[d] + stride[d] * r
    Buffer buffer;                // the region-shaped buffer the stage writes
    Signature signature;          // the consumer's loops when the region was inferred
    bool guard = false;           // the consumer's loops may run past the tensor's bounds
    bool thread_private = false;  // one thread's region (ComputeAt's thread_private)
    bool own_buffer = false;      // the tensor's own buffer at the region's indices
  };

  Stage(Tensor tensor, ScheduleState* state);

  const Tensor& tensor() const { return tensor_; }
  /// The element this stage computes, in terms of its root axes (the tensor's body unless
  /// cache_read/cache_write/rfactor rewired it); for a reduction, the value combined.
  const Expr& body() const { return body_; }
  ReduceKind reduce() const { return reduce_; }
  /// Number of spatial root axes (the tensor's rank); the reduce root axes follow them.
  int rank() const { return rank_; }
  int num_root_axes() const { return num_root_; }
  /// The buffer the nest stores to: the tensor's, a region buffer after compute_at, or the
  /// consumer's after reverse_compute_inline.
  const Buffer& store_buffer() const;
  bool inlined() const { return inlined_; }
  /// True when this stage was folded into its producer's store (reverse_compute_inline).
  bool folded() const { return folded_into_ != nullptr; }
  const Attach* attach() const { return attach_ ? &*attach_ : nullptr; }
  /// Where reverse_compute_inline folded a consumer in: the value stored is `fold_value`
  /// with `fold_placeholder` standing for this stage's element; in terms of the root axes.
  const Buffer& fold_buffer() const { return fold_buffer_; }
  const Expr& fold_value() const { return fold_value_; }
  const Var& fold_placeholder() const { return fold_placeholder_; }
  /// body() with the loads of inlined stages replaced by their bodies.
  Expr InlinedBody() const;
  /// Whether InlinedBody() loads `buffer`, found without building it (a walk of this body and
  /// of the inlined stages' bodies, each once).
  bool InlinedBodyReads(const BufferNode* buffer) const;
  /// The indices of the first load of `buffer` in InlinedBody() that is not this stage's own
  /// element (its root axes in order); none when every load is (an elementwise read of a
  /// producer of this stage's shape). With `flat`: loads whose row-major offset in `buffer`
  /// (of its own shape, static) is this stage's own row-major offset count as its own element
  /// too (a reshape of a producer of as many elements, read element for element; the loads are
  /// taken to be in bounds, as the IR's loads are).
  std::optional<std::vector<Expr>> ReadNotAtOwnIndex(const BufferNode* buffer,
                                                     bool flat = false) const;
  /// Whether every load of `buffer` in InlinedBody() reads, at its first `row_dims` dims, this
  /// stage's own root axes and, at the others, this stage's reduce axes in order: a row
  /// reduction reading `buffer` element for element along its rows.
  bool ReadsAlongOwnRows(const BufferNode* buffer, int row_dims) const;
  /// Stages computed at leaf `loop` of this stage, in schedule order.
  std::vector<const Stage*> AttachedAt(const Var& loop) const;
  /// This stage's loops and those of the stages it is computed at; compute_at records it to
  /// detect consumers rescheduled after the region was inferred.
  Signature LoopSignature() const;
  /// (row dimension, factor, offset) from storage_align, or axis -1.
  std::array<int, 3> storage_align() const { return align_; }
  const std::vector<Axis>& axes() const { return axes_; }
  const std::vector<Relation>& relations() const { return relations_; }
  /// Indices of the leaf axes, outermost loop first.
  const std::vector<int>& leaves() const { return leaves_; }
  /// The variable of the i-th leaf loop (outermost is 0); an error when out of range.
  absl::StatusOr<Var> LeafAxis(int i) const;
  /// Names of the leaf axes, outermost first ("i_outer, i_inner").
  std::string LeafNames() const;

  /// Splits `axis` into outer and inner loops, inner of extent `factor`.
  absl::StatusOr<std::pair<Var, Var>> Split(const Var& axis, int factor);
  /// Splits `axis` into `nparts` outer iterations.
  absl::StatusOr<std::pair<Var, Var>> SplitNParts(const Var& axis, int nparts);
  /// Puts the given leaf axes in this relative order, in the positions they occupy now.
  absl::Status Reorder(const std::vector<Var>& order);
  /// Splits x and y and orders the result (x_outer, y_outer, x_inner, y_inner).
  absl::StatusOr<std::array<Var, 4>> Tile(const Var& x, const Var& y, int x_factor, int y_factor);
  /// Fuses two adjacent leaves (outer directly encloses inner) into one loop.
  absl::StatusOr<Var> Fuse(const Var& outer, const Var& inner);
  /// Runs the loop as vector code; its extent must be a constant.
  absl::Status Vectorize(const Var& axis);
  /// Splits off an inner loop of `factor` iterations and vectorizes it; returns it.
  absl::StatusOr<Var> Vectorize(const Var& axis, int factor);
  /// Repeats the body for each iteration; the extent must be a constant. With `full` false
  /// the loop stays a loop that the backend unrolls (CUDA `#pragma unroll`, an LLVM unroll
  /// hint), and any extent is accepted.
  absl::Status Unroll(const Var& axis, bool full = true);
  /// Gives the outer loop `axis` of a split with a tail guard (a split of a symbolic extent)
  /// the constant extent `bound`: the caller knows its true extent is at most `bound` (a
  /// specialization the host entry selects by a condition on the sizes); the iterations past
  /// the true extent are skipped by the split's guard. A loop of symbolic extent then becomes
  /// one a thread can hold in registers (unrolled) or bind to a constant launch dimension.
  absl::Status AssumeExtentAtMost(const Var& axis, int64_t bound);
  /// Runs iterations on the CPU thread pool.
  absl::Status Parallel(const Var& axis);
  /// Binds the loop to a GPU index: "blockIdx.x" .. "threadIdx.z".
  absl::Status Bind(const Var& axis, const std::string& thread_tag);

  /// Does not materialize the tensor: its consumers compute its body in place of each load.
  /// Reductions cannot be inlined.
  absl::Status ComputeInline();
  /// Folds this elementwise stage into its only computed producer: the producer's store
  /// writes this stage's value of it to this stage's buffer. The producer must be read by no
  /// other stage, elementwise (at this stage's own indices), and not be a reduction.
  absl::Status ReverseComputeInline();
  /// Computes this stage inside `consumer`'s leaf loop `loop`, only over the region that one
  /// iteration of that loop reads, into a buffer of the region's shape (local scope unless
  /// cache_read/cache_write chose shared). Loops bound to threadIdx enclosing the point are
  /// widened over all threads when the buffer is shared. Call it before scheduling this
  /// stage's own loops, after scheduling the consumer's; this stage's root axes become
  /// `<tensor>_i`, `<tensor>_j`, ... over the region (read them with LeafAxis afterwards).
  /// Other readers must be stages already computed at the same loop (their reads count in the
  /// region: a softmax's row sum reading the row max); the consumer itself need not read it
  /// when they do. Loops inside the attach point need constant extents only where an access
  /// uses their variable. With `thread_private` (a local buffer whose stage keeps its own
  /// loops off thread indices) the buffer holds one thread's region: loops bound to a thread
  /// index inside the attach point, and those of readers computed at the same loop, are fixed
  /// to that index (thread_index, ir/intrinsics.h) instead of widening the region (a row kept
  /// in registers, each thread its share). Each loop bound to a thread index must span its
  /// launch dimension; where the consumer's splits have tails (a row of symbolic length held to
  /// a bound), the region's elements past the tensor's bounds are guarded, not computed.
  absl::Status ComputeAt(Stage& consumer, const Var& loop, bool thread_private = false);
  /// ComputeAt into the tensor's own (global) buffer instead of a region buffer: each
  /// iteration of `loop` stores its region at the tensor's own indices, so the tensor is
  /// stored whole once the consumer's nest has run and may be a function argument (an
  /// output) or a temporary that later nests read (stages after the consumer; one before it
  /// is refused). Readers inside the nest read the same
  /// buffer at those indices. On GPUs every thread of the nest that runs the region stores it
  /// (the same value: a row's statistic stored from inside the row's kernel).
  absl::Status ComputeAtOwnBuffer(Stage& consumer, const Var& loop);
  /// Pads the row stride of the region buffer of a stage computed at another: dimension
  /// `axis` gets a stride of round_up(stride, factor) + offset elements (against shared
  /// memory bank conflicts). Only for stages computed at a consumer's loop.
  absl::Status StorageAlign(int axis, int factor, int offset);

 private:
  friend class Schedule;
  /// ComputeAt and ComputeAtOwnBuffer: with `own_buffer`, readers after the consumer need not
  /// be computed at the same loop.
  absl::Status AttachAt(Stage& consumer, const Var& loop, bool thread_private, bool own_buffer);
  /// Rebuilds the root axes from the current body/reduce description (no scheduling kept).
  void ResetAxes(std::vector<Var> spatial, std::vector<IterVar> reduce_axes);
  /// Gives the root axes fresh variables named `<tensor>_<axis>` and rewrites the body.
  void RenameRootAxes();
  /// The axis index of a leaf variable, or an error naming the stage and its leaves.
  absl::StatusOr<int> FindLeaf(const Var& axis, const char* primitive) const;
  absl::StatusOr<std::pair<Var, Var>> SplitImpl(const Var& axis, int amount, bool by_nparts);
  int AddAxis(Var var, Expr extent, bool is_reduce);

  Tensor tensor_;
  ScheduleState* state_;
  Expr body_;
  ReduceKind reduce_ = ReduceKind::kNone;
  int rank_ = 0, num_root_ = 0;
  bool inlined_ = false;
  Stage* folded_into_ = nullptr;
  Buffer fold_buffer_;
  Expr fold_value_;
  Var fold_placeholder_;
  std::optional<Attach> attach_;
  std::array<int, 3> align_{-1, 0, 0};
  std::vector<Axis> axes_;
  std::vector<Relation> relations_;
  std::vector<int> leaves_;
};

/// The order in which the loop nests of a schedule's stages run: a stage runs in its own nest,
/// or, computed at a loop of another stage, in that stage's (followed out to a root).
class NestOrder {
 public:
  explicit NestOrder(const std::vector<std::unique_ptr<Stage>>& stages);
  /// Whether the nest `s` runs in comes after `other`'s nest: all of `other`'s stores, its own
  /// buffer's included, are done by then.
  bool RunsAfter(const Stage& s, const Stage& other) const;

 private:
  std::map<const Stage*, size_t> position_;
};

/// The stages of every Compute tensor needed by some outputs, producers first.
class Schedule {
 public:
  static Schedule Create(const std::vector<Tensor>& outputs);
  /// The stage of a tensor of this schedule (a CHECK failure otherwise: a programming error).
  Stage& operator[](const Tensor& t);
  const std::vector<std::unique_ptr<Stage>>& stages() const { return state_->stages; }

  /// A new stage `<tensor>_<scope>` copying `tensor` into a buffer of `scope` ("shared" or
  /// "local"); each reader's loads of `tensor` read the copy instead. Returns the copy.
  absl::StatusOr<Tensor> CacheRead(const Tensor& tensor, const std::string& scope,
                                   const std::vector<Tensor>& readers);
  /// A new stage `<tensor>_<scope>` that computes what `tensor` did (reduction included) into
  /// a buffer of `scope`; `tensor`'s stage becomes a copy out of it. `tensor` must not be
  /// scheduled yet. Returns the cache tensor.
  absl::StatusOr<Tensor> CacheWrite(const Tensor& tensor, const std::string& scope);
  /// Splits reduction `tensor` over its reduce axis `axis` (a leaf of its stage, made by a
  /// split of a reduce axis): a new tensor `<tensor>_rf` holds partial results indexed by
  /// `axis` first, then `tensor`'s dimensions, reducing over the other reduce axes; `tensor`
  /// then reduces the partials over `axis`. `tensor`'s stage is rebuilt (its schedule is
  /// dropped). Returns the partials tensor.
  absl::StatusOr<Tensor> Rfactor(const Tensor& tensor, const Var& axis);

 private:
  /// Inserts a stage for `t` just before `before` in the schedule order.
  Stage* InsertStage(Tensor t, const Stage* before);
  std::shared_ptr<ScheduleState> state_ = std::make_shared<ScheduleState>();
};

}  // namespace cinn_like::ir
