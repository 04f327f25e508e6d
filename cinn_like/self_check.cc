/// \file SelfCheck: random inputs, the reference, the compiled run, the comparison, the
/// narrowing to the first differing instruction.
#include "cinn_like/self_check.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "cinn_like/compile.h"
#include "cinn_like/tensor_transfer.h"
#include "hlir/op.h"
#include "hlir/reference_interpreter.h"
#include "ir/float16.h"
#include "runtime/cinn_like_runtime.h"

namespace cinn_like {
namespace {

using hlir::DType;
using hlir::HostTensor;

}  // namespace

std::vector<HostTensor> RandomInputs(const hlir::Graph& graph, const SelfCheckOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<HostTensor> out;
  for (int id : graph.inputs()) {
    const hlir::TensorDesc& d = graph.values()[id].desc;
    std::vector<int64_t> dims;
    for (const hlir::Dim& dim : d.shape) {
      // A polynomial dim (s0*s1) takes its symbols' sizes; an overflow or a negative value
      // (s0 - 8 with s0 = 7), the default size (the call then refuses the inputs).
      std::map<std::string, int64_t> sizes = o.sizes;
      for (const std::string& s : dim.expr().Symbols()) sizes.emplace(s, o.default_size);
      auto size = dim.expr().Evaluate(sizes);
      dims.push_back(size.ok() && *size >= 0 ? *size : o.default_size);
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

std::string CompareOutputs(const std::vector<std::string>& names,
                           const std::vector<HostTensor>& want,
                           const std::vector<HostTensor>& got) {
  std::string diffs;
  for (size_t o = 0; o < want.size(); ++o) {
    const HostTensor& w = want[o];
    const double tol = Tolerance(w.dtype);
    if (got[o].shape != w.shape) {
      absl::StrAppend(&diffs, "  output ", names[o], " is ", got[o].Describe(), ", want ",
                      w.Describe(), "\n");
      continue;
    }
    int bad = 0;
    for (int64_t k = 0; k < w.size(); ++k) {
      double g = got[o].data[k], e = w.data[k];
      bool same = std::isnan(e)   ? std::isnan(g)
                  : std::isinf(e) ? g == e
                                  : std::fabs(g - e) <= tol + tol * std::fabs(e);
      if (same) continue;
      if (bad++ < 3) {
        absl::StrAppend(&diffs, "  output ", names[o], " (", w.Describe(), ") element ", k,
                        ": got ", g, ", want ", e, " (tolerance ", tol, ")\n");
      }
    }
    if (bad > 3) absl::StrAppend(&diffs, "  ... ", bad, " elements of ", names[o], "\n");
  }
  return diffs;
}

std::string RunAndCompare(const frontend::Program& program, const ir::Target& target,
                          const std::vector<HostTensor>& inputs,
                          const std::vector<HostTensor>& want, void* stream) {
  auto compiled = CompileProgram(program, target, "self_check");
  if (!compiled.ok()) return absl::StrCat("compile failed: ", compiled.status().message());
  return CallAndCompare(**compiled, target, inputs, want, program.outputs, stream);
}

std::string CallAndCompare(const CompiledProgram& compiled, const ir::Target& target,
                           const std::vector<HostTensor>& inputs,
                           const std::vector<HostTensor>& want,
                           const std::vector<std::string>& output_names, void* stream) {
  auto fn = compiled.Lookup(compiled.name());
  if (!fn.ok()) return absl::StrCat("lookup failed: ", fn.status().message());
  const DLDevice device = DeviceOf(target);
  std::vector<std::unique_ptr<DeviceTensor>> tensors;
  auto place = [&](const HostTensor& h) {
    auto t = DeviceTensor::Create(h, device);
    if (t.ok()) tensors.push_back(std::move(*t));
    return t.status();
  };
  for (const HostTensor& h : inputs) {
    absl::Status s = place(h);
    if (!s.ok()) return absl::StrCat("placing the inputs failed: ", s.message());
  }
  for (const HostTensor& w : want) {
    HostTensor poison(w.dtype, w.shape);  // what a kernel that writes nothing leaves
    for (double& v : poison.data) v = hlir::RoundToDType(-12345, w.dtype);
    absl::Status s = place(poison);
    if (!s.ok()) return absl::StrCat("placing the outputs failed: ", s.message());
  }
  std::vector<DLTensor*> args;
  for (auto& t : tensors) args.push_back(t->dl());
  if ((*fn)(args.data(), static_cast<int32_t>(args.size()), stream) != 0) {
    return absl::StrCat("the call failed: ", cinn_like_get_last_error());
  }
  std::vector<HostTensor> got;
  for (size_t o = 0; o < want.size(); ++o) {
    auto h = ReadTensor(*args[inputs.size() + o], want[o].dtype);
    if (!h.ok()) return absl::StrCat("reading the outputs failed: ", h.status().message());
    got.push_back(std::move(*h));
  }
  return CompareOutputs(output_names, want, got);
}

FirstDifference FindFirstDifference(const frontend::Program& program,
                                    const std::vector<HostTensor>& inputs, const ir::Target& target,
                                    void* stream) {
  for (size_t k = 1; k <= program.instructions.size(); ++k) {
    frontend::Program prefix = program;
    prefix.instructions.resize(k);
    prefix.outputs = program.instructions[k - 1].outputs;
    auto graph = frontend::BuildGraph(prefix);
    if (!graph.ok()) continue;
    auto want = hlir::RunReference(*graph, inputs);
    if (!want.ok()) continue;
    std::string diffs = RunAndCompare(prefix, target, inputs, *want, stream);
    if (diffs.empty()) continue;
    return FirstDifference{static_cast<int>(k - 1), std::move(prefix), std::move(diffs)};
  }
  return FirstDifference{};
}

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
  const ir::Target x86 = ir::Target::X86();
  std::string diffs = RunAndCompare(program, x86, inputs, *want, /*stream=*/nullptr);
  report.ok = diffs.empty();
  report.summary = absl::StrCat(
      program.instructions.size(), " instructions, ", program.outputs.size(), " outputs, seed ",
      options.seed, ": ",
      report.ok ? "every output matches the reference\n" : "differs from the reference\n" + diffs);
  if (report.ok || !options.bisect) return report;
  FirstDifference first = FindFirstDifference(program, inputs, x86, /*stream=*/nullptr);
  if (first.instruction < 0) {
    absl::StrAppend(&report.summary, "no prefix differs on its own\n");
    return report;
  }
  report.first_bad_instruction = first.instruction;
  report.smallest = std::move(first.prefix);
  absl::StrAppend(&report.summary, "first differing instruction: ", first.instruction, " (op ",
                  program.instructions[first.instruction].op, ")\n", first.diffs);
  return report;
}

}  // namespace cinn_like
