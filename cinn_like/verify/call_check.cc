/// \file The call-time self-check: the registry of checked functions, the copies of a call's
/// tensors, the comparison and the message.
#include "cinn_like/verify/call_check.h"

#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "cinn_like/compare/compare_outputs.h"
#include "cinn_like/compare/tensor_transfer.h"
#include "cinn_like/verify/first_difference.h"
#include "hlir/op.h"
#include "hlir/reference_interpreter.h"
#include "ir/flags.h"
#include "runtime/call_hooks.h"
#include "runtime/cinn_like_runtime.h"

namespace cinn_like {
namespace {

using hlir::HostTensor;

/// The checked functions. Never destroyed: a host may call or free during exit.
struct Registry {
  std::mutex mu;
  std::map<backends::EntryFunction, std::shared_ptr<const CallCheckContext>> checks;
};

Registry& GlobalRegistry() {
  static auto* registry = new Registry();
  return *registry;
}

std::shared_ptr<const CallCheckContext> FindCallCheck(backends::EntryFunction fn) {
  Registry& r = GlobalRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.checks.find(fn);
  return it == r.checks.end() ? nullptr : it->second;
}

/// "fusion group 1 of 3 (elementwise: add, exp, tanh)".
std::string DescribeGroup(const hlir::FusedGraph& fused, size_t g) {
  std::vector<std::string> ops;
  for (int n : fused.groups[g].nodes) ops.push_back(fused.graph.nodes()[n].op);
  return absl::StrCat("fusion group ", g, " of ", fused.groups.size(), " (",
                      hlir::OpPatternName(fused.groups[g].pattern), ": ", absl::StrJoin(ops, ", "),
                      ")");
}

/// Whether the call's inputs can be read: the runtime's own checks of the argument list and
/// of each input tensor, which the function makes again (so a refused call reports its error).
bool InputsReadable(const CallCheckContext& c, DLTensor** args, int32_t num_args) {
  const char* fn = c.function.c_str();
  const auto& inputs = c.graph.inputs();
  const int32_t expected = static_cast<int32_t>(inputs.size() + c.graph.outputs().size());
  if (cinn_like_check_args(fn, args, num_args, expected) != 0) return false;
  const int32_t device = DeviceOf(c.target).device_type;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const hlir::Value& v = c.graph.values()[inputs[i]];
    const DLDataType t = DLTypeOf(v.desc.dtype);
    const auto ndim = static_cast<int32_t>(v.desc.shape.size());
    // At most 2^31 - 1 elements: larger calls (64-bit indexed functions) are not checked, as
    // the reference interpreter would hold them in doubles.
    if (cinn_like_check_tensor(fn, args[i], static_cast<int32_t>(i), v.name.c_str(), t.code, t.bits,
                               ndim, device, ir::MaxIndexedElements(ir::Int(32))) != 0) {
      return false;
    }
  }
  return true;
}

/// The tensors args[first + k] for the graph values `ids`, on the host.
absl::StatusOr<std::vector<HostTensor>> ReadArguments(const CallCheckContext& c, DLTensor** args,
                                                      size_t first, const std::vector<int>& ids) {
  std::vector<HostTensor> out;
  for (size_t k = 0; k < ids.size(); ++k) {
    const hlir::Value& v = c.graph.values()[ids[k]];
    auto h = ReadTensor(*args[first + k], v.desc.dtype);
    if (!h.ok()) {
      return absl::Status(h.status().code(), absl::StrCat("reading argument ", first + k, " (",
                                                          v.name, "): ", h.status().message()));
    }
    out.push_back(std::move(*h));
  }
  return out;
}

int CheckCouldNotRun(const CallCheckContext& c, absl::string_view why) {
  const std::string message =
      absl::StrCat("cinn_like_call: the self-check of ", c.function, " could not run (", why,
                   "); its outputs are written but unverified");
  cinn_like_set_last_error(message.c_str());
  return -1;
}

/// The error of a call whose outputs differ: `diffs` (CompareOutputs') and the narrowing.
int Mismatch(const CallCheckContext& c, const std::string& diffs,
             const std::vector<HostTensor>& inputs, void* stream) {
  std::string message =
      absl::StrCat("cinn_like_call: self-check of ", c.function,
                   ": outputs differ from the reference interpreter on the call's inputs\n", diffs);
  FirstDifference first = FindFirstDifference(c.program, inputs, c.target, stream);
  if (first.instruction < 0) {
    absl::StrAppend(&message,
                    "no prefix of the Program differs on its own: only the whole Program does");
  } else {
    const frontend::Instruction& ins = c.program.instructions[first.instruction];
    const std::string out = ins.outputs.empty() ? "" : ins.outputs[0];
    auto group = c.group_of_value.find(out);
    absl::StrAppend(&message, "first differing instruction: ", first.instruction, " (op ", ins.op,
                    ", output ", out, "), in ",
                    group != c.group_of_value.end()
                        ? group->second
                        : "no fusion group (the graph passes removed or merged it)",
                    "\n", first.diffs);
  }
  cinn_like_set_last_error(std::string(absl::StripTrailingAsciiWhitespace(message)).c_str());
  return -1;
}

}  // namespace

std::shared_ptr<const CallCheckContext> MakeCallCheckContext(const frontend::Program& program,
                                                             const hlir::Graph& graph,
                                                             const ir::Target& target,
                                                             const std::string& function,
                                                             const hlir::FusedGraph& fused) {
  auto context = std::make_shared<CallCheckContext>(
      CallCheckContext{function, program, graph, target, /*group_of_value=*/{}});
  for (size_t g = 0; g < fused.groups.size(); ++g) {
    const std::string group = DescribeGroup(fused, g);
    for (int n : fused.groups[g].nodes) {
      for (int v : fused.graph.nodes()[n].outputs) {
        context->group_of_value[fused.graph.values()[v].name] = group;
      }
    }
  }
  return context;
}

void RegisterCallCheck(backends::EntryFunction fn,
                       std::shared_ptr<const CallCheckContext> context) {
  Registry& r = GlobalRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.checks[fn] = std::move(context);
}

void UnregisterCallChecks(const CallCheckContext* context) {
  Registry& r = GlobalRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto it = r.checks.begin(); it != r.checks.end();) {
    it = it->second.get() == context ? r.checks.erase(it) : std::next(it);
  }
}

int CallWithSelfCheck(backends::EntryFunction fn, DLTensor** args, int32_t num_args, void* stream) {
  std::shared_ptr<const CallCheckContext> context;
  if (FLAGS_cinn_like_self_check) context = FindCallCheck(fn);
  if (!context || !InputsReadable(*context, args, num_args)) return fn(args, num_args, stream);
  const CallCheckContext& c = *context;
  // The inputs are read before the call: an output may share an input's memory.
  auto inputs = ReadArguments(c, args, 0, c.graph.inputs());
  const int rc = fn(args, num_args, stream);
  if (rc != 0) return rc;
  if (!inputs.ok()) return CheckCouldNotRun(c, inputs.status().message());
  auto got = ReadArguments(c, args, inputs->size(), c.graph.outputs());
  if (!got.ok()) return CheckCouldNotRun(c, got.status().message());
  auto want = hlir::RunReference(c.graph, *inputs);
  if (!want.ok()) {
    return CheckCouldNotRun(
        c, absl::StrCat("the reference interpreter refuses the inputs: ", want.status().message()));
  }
  const std::string diffs = CompareOutputs(c.program.outputs, *want, *got);
  if (diffs.empty()) return 0;
  // The diagnosis runs other functions on copies: the caller's hooks (runtime/call_hooks.h)
  // are for its own call, whose argument indices theirs are not.
  runtime::CallHooksScope no_hooks(nullptr, nullptr, nullptr, nullptr);
  return Mismatch(c, diffs, *inputs, stream);
}

}  // namespace cinn_like
