/// \file Schedules: how each Compute tensor's loop nest is shaped. A Stage holds one tensor's
/// axes (one per dimension, then one per reduce axis), the splits and fuses that derived new
/// axes from them, the order of the leaf axes (outermost first) and how each leaf loop runs.
/// Primitives check their arguments and return a status naming the stage and the axis.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/ir.h"
#include "ir/tensor.h"

namespace cinn_like::ir {

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
    Expr factor;  // split: the inner extent
    bool exact = false;  // split: the parent extent is a multiple of factor (no tail guard)
  };

  explicit Stage(Tensor tensor);

  const Tensor& tensor() const { return tensor_; }
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
  /// Runs iterations on the CPU thread pool.
  absl::Status Parallel(const Var& axis);
  /// Binds the loop to a GPU index: "blockIdx.x" .. "threadIdx.z".
  absl::Status Bind(const Var& axis, const std::string& thread_tag);

 private:
  /// The axis index of a leaf variable, or an error naming the stage and its leaves.
  absl::StatusOr<int> FindLeaf(const Var& axis, const char* primitive) const;
  absl::StatusOr<std::pair<Var, Var>> SplitImpl(const Var& axis, int amount, bool by_nparts);
  int AddAxis(Var var, Expr extent, bool is_reduce);

  Tensor tensor_;
  std::vector<Axis> axes_;
  std::vector<Relation> relations_;
  std::vector<int> leaves_;
};

/// The stages of every Compute tensor needed by some outputs, producers first.
class Schedule {
 public:
  static Schedule Create(const std::vector<Tensor>& outputs);
  /// The stage of a tensor of this schedule (a CHECK failure otherwise: a programming error).
  Stage& operator[](const Tensor& t);
  const std::vector<std::unique_ptr<Stage>>& stages() const { return stages_; }

 private:
  std::vector<std::unique_ptr<Stage>> stages_;
  std::map<const TensorNode*, Stage*> by_tensor_;
};

}  // namespace cinn_like::ir
