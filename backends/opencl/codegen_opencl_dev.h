/// \file CodeGenOpenCLDev: the device kernels of a split module as one OpenCL C program.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/codegen_c.h"
#include "ir/module.h"

namespace cinn_like::backends {

/// One OpenCL C program and the kernels it defines.
struct OpenCLSource {
  std::string source;
  std::vector<std::string> kernels;
};

class CodeGenOpenCLDev : public CodeGenC {
 public:
  /// What the device can compile: a dtype it lacks is an error naming the dtype and the device.
  struct DeviceTypes {
    bool fp16 = true;  // cl_khr_fp16
    bool fp64 = true;  // cl_khr_fp64
    std::string device = "the device";
  };
  /// `__kernel void name(__global const float* restrict A, ..., int n)` per kernel of the
  /// module's host entries (ir::DeviceKernels), with reqd_work_group_size where the launch is
  /// constant. A bound loop is `int v = get_group_id(0);` (or get_local_id), guarded only when
  /// its extent is not the launch dimension; shared arrays are `__local` arrays at the kernel's
  /// top (OpenCL C allows them nowhere else); cross-thread reductions are trees in local memory
  /// (no sub-group shuffles: neither PoCL's CPU device nor NVIDIA's OpenCL has them); vector
  /// statements as PrintVectorStore says.
  static absl::StatusOr<OpenCLSource> Generate(const ir::Module& module, const DeviceTypes& types);

 protected:
  explicit CodeGenOpenCLDev(DeviceTypes types) : types_(std::move(types)) {}
  const char* Language() const override { return "OpenCL C"; }
  std::string TypeName(const ir::Type& t) override;
  std::string FloatLiteral(const ir::Type& t, double v) override;
  std::string ScopePrefix(ir::MemoryScope scope) override;
  std::string WidenToFloat(const ir::Type& t, const std::string& e) override;
  std::string NarrowFromFloat(const ir::Type& t, const std::string& e) override;
  std::string MathFunctionName(ir::MathOp op, const ir::Type& t) override;
  const char* IntrinsicFunctionName(ir::IntrinsicOp op) override;
  void PrintBoundFor(const ir::For* op) override;
  void VisitCall(const ir::Call* op) override;
  void VisitCast(const ir::Cast* op) override;
  void VisitMin(const ir::Min* op) override;
  void VisitMax(const ir::Max* op) override;
  void VisitAllocate(const ir::Allocate* op) override;
  /// Records the known divisor of an integer let's value (for the aligned vector accesses).
  void VisitLetStmt(const ir::LetStmt* op) override;

 private:
  void AddKernel(const ir::LoweredFuncNode& kernel);
  /// The element type of a buffer in memory: bool is stored as uchar (OpenCL C has no bool in
  /// buffers or kernel arguments).
  std::string MemoryTypeName(const ir::Type& t) override;
  /// OpenCL C's vector of `lanes` elements of `elem`: float4, int4, half8, uchar16.
  std::string VectorTypeName(const ir::Type& elem, int lanes);
  /// fmin/fmax for floats (NaN-ignoring, as CUDA's fminf), min/max for integers.
  void PrintMinMax(const ir::BinaryNode* op, bool is_min);
  /// A store of a vector value, or of a vector_reduce: dense loads as vector temporaries, the
  /// lanes as scalars, a dense store as one vector store. An access of 8 or 16 bytes of a
  /// kernel argument whose index is a known multiple of its lanes is a dereference of a vector
  /// pointer (every buffer argument is 16-byte aligned: runtime/opencl/opencl_runtime.h), so the
  /// device compiler issues one wide access; others are vload<n>/vstore<n>, which assume only
  /// the element's alignment.
  void PrintVectorStore(const ir::Store* op) override;
  /// The text of the block-reduce helper for (kind, type), defined once per program.
  std::string BlockReduceHelper(const std::string& name, ir::IntrinsicOp op, const ir::Type& t);

  DeviceTypes types_;
  const ir::LoweredFuncNode* kernel_ = nullptr;
  int vector_count_ = 0;
  bool uses_fp16_ = false;
  bool uses_fp64_ = false;
  /// Block-reduce helpers the program needs, by name, and the local scratch array each kernel
  /// declares per element type.
  std::map<std::string, std::string> helpers_;
  std::map<std::string, ir::Type> scratch_;
  /// The known divisor of each enclosing integer let (ir::KnownDivisor).
  std::map<const ir::Variable*, int64_t> lets_;
};

}  // namespace cinn_like::backends
