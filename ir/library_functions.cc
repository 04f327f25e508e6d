/// \file The registered library functions, by arch and call.
#include "ir/library_functions.h"

#include <chrono>
#include <map>
#include <mutex>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ir/compile_options.h"
#include "ir/flags.h"

namespace cinn_like::ir {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::pair<Target::Arch, LibraryCall>, LibraryFunction> functions;
};

Registry& GetRegistry() {
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

const char* LibraryCallName(LibraryCall call) {
  switch (call) {
    case LibraryCall::kMatmul:
      return "matmul";
    case LibraryCall::kMatmulEpilogue:
      return "matmul (with epilogue)";
    case LibraryCall::kConv2d:
      return "conv2d";
    case LibraryCall::kConv2dChannelsLast:
      return "conv2d (channels last)";
    case LibraryCall::kConv2dEpilogue:
      return "conv2d (with epilogue)";
    case LibraryCall::kConv2dBackwardData:
      return "conv2d backward data";
    case LibraryCall::kConv2dBackwardFilter:
      return "conv2d backward filter";
    case LibraryCall::kAttention:
      return "attention";
  }
  return "?";
}

void RegisterLibraryFunction(Target::Arch arch, LibraryCall call, LibraryFunction function) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.functions[{arch, call}] = std::move(function);
}

namespace {
thread_local double check_ms = 0;
}  // namespace

double LibraryCheckMilliseconds() { return check_ms; }

absl::StatusOr<LibraryFunction> FindLibraryFunction(const Target& target, LibraryCall call,
                                                    const std::vector<int64_t>& args) {
  LibraryFunction f;
  {
    Registry& r = GetRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.functions.find({target.arch, call});
    if (it == r.functions.end()) {
      return absl::NotFoundError(
          absl::StrCat("no library ", LibraryCallName(call), " for target ", target.ToString()));
    }
    f = it->second;
  }
  for (absl::string_view name : absl::StrSplit(CurrentCompileOptions().decline_libraries, ',')) {
    if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(name), f.library)) {
      return absl::FailedPreconditionError(
          absl::StrCat(f.library, " declined by the flag cinn_like_decline_libraries"));
    }
  }
  // Outside the lock: a check may load a library and build its plan.
  if (f.check) {
    const auto start = std::chrono::steady_clock::now();
    auto checked = f.check(args);
    check_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!checked.ok()) return checked.status();
    f.checked = *checked;
  }
  return f;
}

}  // namespace cinn_like::ir
