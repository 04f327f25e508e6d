/// \file The units lowering produces and backends consume: LoweredFunc and Module.
#pragma once

#include <array>
#include <climits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/target.h"

namespace cinn_like::ir {

/// One argument of a lowered function: a buffer (input or output) or a scalar.
struct Argument {
  enum class Kind : uint8_t { kInput, kOutput, kScalar };
  Kind kind = Kind::kInput;
  Buffer buffer;  // kInput / kOutput
  Var var;        // kScalar
  /// The Program declares the tensor rank 0: `buffer` holds its one element as shape [1]
  /// (hlir's graph compiler), and the host entry takes a rank-0 tensor for it as well.
  bool rank_zero = false;
  bool is_buffer() const { return kind != Kind::kScalar; }
  const std::string& name() const { return is_buffer() ? buffer->name : var.name(); }
  static Argument Input(Buffer b) { return {Kind::kInput, std::move(b), Var()}; }
  static Argument Output(Buffer b) { return {Kind::kOutput, std::move(b), Var()}; }
  static Argument Scalar(Var v) { return {Kind::kScalar, nullptr, std::move(v)}; }
};

struct LoweredFuncNode;
using LoweredFunc = std::shared_ptr<LoweredFuncNode>;

/// A compiled unit.
///  - kHostEntry: what the framework calls, through the calling convention of DESIGN.md:
///    `int name(DLTensor** args, int32_t num_args, void* stream)` with one DLTensor per buffer
///    argument, in `args` order. Symbolic dimensions (Variables in buffer shapes) are read from
///    the tensors' shapes. Lowered for a GPU target, it is split (SplitHostDevice): its body
///    launches the device kernels in `kernels` (intrinsic launch_kernel) and has no GPU-bound
///    loop left.
///  - kDeviceKernel: a CUDA `__global__` function taking each buffer's data pointer and each
///    scalar by value, launched with `grid_dims` x `block_dims`.
struct LoweredFuncNode {
  enum class Kind : uint8_t { kHostEntry, kDeviceKernel };
  std::string name;
  Kind kind = Kind::kHostEntry;
  std::vector<Argument> args;
  Stmt body;
  std::array<Expr, 3> grid_dims{Expr(1), Expr(1), Expr(1)};
  std::array<Expr, 3> block_dims{Expr(1), Expr(1), Expr(1)};
  int shared_mem_bytes = 0;
  /// A split host entry: the device kernels its body launches, each once, in the order of
  /// their first launches (a later launch may name an earlier kernel).
  std::vector<LoweredFunc> kernels;
  /// A host entry's symbolic sizes, by variable name: the Program's symbol each stands for,
  /// and the least and most values a call may bind (checked where the entry binds it); `why`:
  /// what needs it at least 1 beyond the Program's own bounds (an op over an axis it sizes that
  /// has no value when empty), for the message, or empty.
  struct SizeSymbol {
    std::string symbol;
    int64_t min = 0, max = INT32_MAX;
    std::string why;
  };
  std::map<std::string, SizeSymbol> size_symbols;
};

/// A kernel's threads per block (the product of its block dims) when every dim is a constant,
/// else -1.
int64_t BlockThreads(const LoweredFuncNode& kernel);

/// The symbolic dimension variables of a host entry, in first-appearance order over its
/// buffer arguments' shapes.
std::vector<Var> ShapeVars(const LoweredFuncNode& func);

/// "function myadd(A, B, C) {\n<body>}\n", then each of its kernels the same way ("kernel
/// myadd_kernel(A, B, C) grid(...) block(...) {...}").
std::string ToString(const LoweredFuncNode& func);

/// A set of host entries for one target (each with its device kernels on a GPU target).
struct Module {
  /// Names the module's files (dumps, saved CUDA source) and messages, never a symbol: keep it
  /// a file name (SafeFileName, ir/flags.h), as the graph compiler does.
  std::string name;
  Target target;
  std::vector<LoweredFunc> functions;
};

/// The device kernels of every host entry of `module`, in order.
std::vector<LoweredFunc> DeviceKernels(const Module& module);

/// The names of the kernels `s` launches (intrinsic launch_kernel), in order, repeats kept.
std::vector<std::string> LaunchedKernels(const Stmt& s);

std::string ToString(const Module& module);

}  // namespace cinn_like::ir
