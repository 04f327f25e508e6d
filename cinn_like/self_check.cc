/// \file SelfCheck: random inputs, the reference, the x86 build, the comparison, the bisection.
#include "cinn_like/self_check.h"

#include <dlpack/dlpack.h>

#include <cmath>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "cinn_like/compile.h"
#include "hlir/dtype.h"
#include "hlir/op.h"
#include "hlir/reference_interpreter.h"
#include "ir/float16.h"
#include "runtime/cinn_like_runtime.h"

namespace cinn_like {
namespace {

using hlir::DType;
using hlir::HostTensor;

/// A host tensor's bytes in its dtype, and its DLTensor view.
struct Buffer {
  std::vector<char> bytes;
  std::vector<int64_t> shape;
  DLTensor dl{};
};

DLDataType DLTypeOf(DType t) {
  ir::Type ty = hlir::ToIrType(t);
  if (ty.is_bool()) return {6, 8, 1};  // kDLBool
  if (ty.is_bfloat16()) return {kDLBfloat, 16, 1};
  if (ty.is_float()) return {kDLFloat, static_cast<uint8_t>(ty.bits()), 1};
  return {static_cast<uint8_t>(ty.is_int() ? kDLInt : kDLUInt), static_cast<uint8_t>(ty.bits()), 1};
}

void Store(char* p, const ir::Type& t, double v) {
  auto put = [p](auto x) { std::memcpy(p, &x, sizeof(x)); };
  if (t.is_float16()) return put(ir::FloatToHalfBits(ir::DoubleToFloatRoundToOdd(v)));
  if (t.is_bfloat16()) return put(ir::FloatToBFloat16Bits(ir::DoubleToFloatRoundToOdd(v)));
  if (t == ir::Float(32)) return put(static_cast<float>(v));
  if (t == ir::Float(64)) return put(v);
  if (t.is_bool()) return put(static_cast<uint8_t>(v != 0));
  uint64_t bits = static_cast<uint64_t>(static_cast<int64_t>(v));
  std::memcpy(p, &bits, t.bytes());  // little endian: the low bytes wrap
}

double Load(const char* p, const ir::Type& t) {
  auto take = [p](auto x) {
    std::memcpy(&x, p, sizeof(x));
    return x;
  };
  if (t.is_float16()) return ir::HalfBitsToFloat(take(uint16_t{}));
  if (t.is_bfloat16()) return ir::BFloat16BitsToFloat(take(uint16_t{}));
  if (t == ir::Float(32)) return take(float{});
  if (t == ir::Float(64)) return take(double{});
  if (t.is_bool() || t.is_uint()) {
    uint64_t bits = 0;
    std::memcpy(&bits, p, t.bytes());
    return static_cast<double>(bits);
  }
  switch (t.bits()) {
    case 8:
      return take(int8_t{});
    case 16:
      return take(int16_t{});
    case 32:
      return take(int32_t{});
    default:
      return static_cast<double>(take(int64_t{}));
  }
}

std::unique_ptr<Buffer> ToBuffer(const HostTensor& h) {
  auto b = std::make_unique<Buffer>();
  ir::Type t = hlir::ToIrType(h.dtype);
  b->bytes.assign(h.size() * t.bytes() + 1, 0);  // + 1: never a null pointer
  for (int64_t i = 0; i < h.size(); ++i) Store(b->bytes.data() + i * t.bytes(), t, h.data[i]);
  b->shape = h.shape;
  b->dl.data = b->bytes.data();
  b->dl.device = {kDLCPU, 0};
  b->dl.ndim = static_cast<int32_t>(b->shape.size());
  b->dl.dtype = DLTypeOf(h.dtype);
  b->dl.shape = b->shape.data();
  return b;
}

/// Relative and absolute tolerance of a dtype: a few units in the last place of its format.
double Tolerance(DType t) {
  switch (t) {
    case DType::kFloat64:
      return 1e-9;
    case DType::kFloat32:
      return 1e-4;
    case DType::kFloat16:
      return 1e-2;
    case DType::kBFloat16:
      return 2e-2;
    default:
      return 0;  // integers and bool: exact
  }
}

std::vector<HostTensor> RandomInputs(const hlir::Graph& graph, const SelfCheckOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<HostTensor> out;
  for (int id : graph.inputs()) {
    const hlir::TensorDesc& d = graph.values()[id].desc;
    std::vector<int64_t> dims;
    for (const hlir::Dim& dim : d.shape) {
      auto it = o.sizes.find(dim.symbol);
      dims.push_back(!dim.is_symbolic()    ? dim.value
                     : it != o.sizes.end() ? it->second
                                           : o.default_size);
    }
    HostTensor h(d.dtype, dims);
    ir::Type t = hlir::ToIrType(d.dtype);
    for (double& v : h.data) {
      double u = unit(rng);
      if (t.is_bool()) {
        v = u < 0.5;
      } else if (t.is_float()) {
        v = ir::RoundToType(t, -2 + 4 * u);
      } else {
        double lo = t.is_uint() ? std::max(0.0, o.int_low) : o.int_low;
        v = std::floor(lo + (o.int_high - lo + 1) * u);
      }
    }
    out.push_back(std::move(h));
  }
  return out;
}

/// One run: compile, call, compare. Returns "" when every output matches, else what differs.
std::string RunOnce(const frontend::Program& program, const std::vector<HostTensor>& inputs,
                    const std::vector<HostTensor>& want) {
  auto compiled = CompileProgram(program, ir::Target::X86(), "self_check");
  if (!compiled.ok()) return absl::StrCat("compile failed: ", compiled.status().message());
  auto fn = (*compiled)->Lookup("self_check");
  if (!fn.ok()) return absl::StrCat("lookup failed: ", fn.status().message());
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<DLTensor*> args;
  for (const HostTensor& h : inputs) buffers.push_back(ToBuffer(h));
  for (const HostTensor& w : want) {
    HostTensor poison(w.dtype, w.shape);
    for (double& v : poison.data) v = -12345;
    buffers.push_back(ToBuffer(poison));
  }
  for (auto& b : buffers) args.push_back(&b->dl);
  if ((*fn)(args.data(), static_cast<int32_t>(args.size()), nullptr) != 0) {
    return absl::StrCat("the call failed: ", cinn_like_get_last_error());
  }
  std::string diffs;
  for (size_t o = 0; o < want.size(); ++o) {
    const HostTensor& w = want[o];
    const Buffer& got = *buffers[inputs.size() + o];
    ir::Type t = hlir::ToIrType(w.dtype);
    double tol = Tolerance(w.dtype);
    int bad = 0;
    for (int64_t k = 0; k < w.size(); ++k) {
      double g = Load(got.bytes.data() + k * t.bytes(), t), e = w.data[k];
      bool same = std::isnan(e)   ? std::isnan(g)
                  : std::isinf(e) ? g == e
                                  : std::fabs(g - e) <= tol + tol * std::fabs(e);
      if (same) continue;
      if (bad++ < 3) {
        absl::StrAppend(&diffs, "  output ", program.outputs[o], " (", w.Describe(), ") element ",
                        k, ": got ", g, ", want ", e, "\n");
      }
    }
    if (bad > 3) absl::StrAppend(&diffs, "  ... ", bad, " elements of ", program.outputs[o], "\n");
  }
  return diffs;
}

}  // namespace

absl::StatusOr<SelfCheckReport> SelfCheck(const frontend::Program& program,
                                          const SelfCheckOptions& options) {
  auto graph = frontend::BuildGraph(program);
  if (!graph.ok()) return graph.status();
  std::vector<HostTensor> inputs = RandomInputs(*graph, options);
  auto want = hlir::RunReference(*graph, inputs);
  if (!want.ok()) {
    return absl::Status(want.status().code(),
                        absl::StrCat("the reference refuses the random inputs (seed ", options.seed,
                                     "): ", want.status().message()));
  }
  SelfCheckReport report;
  std::string diffs = RunOnce(program, inputs, *want);
  report.ok = diffs.empty();
  report.summary = absl::StrCat(
      program.instructions.size(), " instructions, ", program.outputs.size(), " outputs, seed ",
      options.seed, ": ",
      report.ok ? "every output matches the reference\n" : "differs from the reference\n" + diffs);
  if (report.ok || !options.bisect) return report;
  // The first prefix whose last instruction's results differ: that instruction is at fault (or
  // the fused group its prefix compiles to).
  for (size_t k = 1; k <= program.instructions.size(); ++k) {
    frontend::Program prefix = program;
    prefix.instructions.resize(k);
    prefix.outputs = program.instructions[k - 1].outputs;
    auto g = frontend::BuildGraph(prefix);
    if (!g.ok()) continue;
    auto ref = hlir::RunReference(*g, inputs);
    if (!ref.ok()) continue;
    std::string d = RunOnce(prefix, inputs, *ref);
    if (d.empty()) continue;
    report.first_bad_instruction = static_cast<int>(k - 1);
    report.smallest = prefix;
    absl::StrAppend(&report.summary, "first differing instruction: ", k - 1, " (op ",
                    program.instructions[k - 1].op, ")\n", d);
    break;
  }
  return report;
}

}  // namespace cinn_like
