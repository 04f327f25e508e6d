/// \file The one pass runner of cinn_like: it runs the passes of a pipeline (the graph passes,
/// the loop-IR passes), logs how long each took and dumps what each produced under a numbered
/// name, for any IR that prints as text.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace cinn_like::ir {

/// What does not depend on the IR: the timing log and the numbered dump files.
class PassRunnerBase {
 public:
  /// Dumps `text()` (called only when dumping is on, flag cinn_like_dump_dir) as the next step:
  /// file "<name>.<NN>_<pass><ext>", NN counting the steps from 00; `ext` null means the
  /// runner's own. With `same_step` it is a second file of the last step (same NN).
  void DumpText(const char* pass, const std::function<std::string()>& text,
                const char* ext = nullptr, bool same_step = false);

  /// Runs `fn()` and logs its time as `pass`; returns what fn returns.
  template <typename Fn>
  auto Time(const char* pass, Fn&& fn) {
    auto start = std::chrono::steady_clock::now();
    auto out = std::forward<Fn>(fn)();
    LogTime(pass, start);
    return out;
  }

 protected:
  /// Log lines read "<pipeline> <name>: <pass> took <ms> ms" (GLOG_v=2).
  PassRunnerBase(const char* pipeline, std::string name, const char* ext);

 private:
  void LogTime(const char* pass, std::chrono::steady_clock::time_point start) const;

  const char* pipeline_;
  std::string name_;
  const char* ext_;
  int step_ = 0;
};

/// Runs passes over `IR`. A pass returns the IR itself, or absl::StatusOr<IR> when it can fail
/// (a failed pass dumps nothing and its status is returned as is).
template <typename IR>
class BasicPassRunner : public PassRunnerBase {
 public:
  using Printer = std::string (*)(const IR&);

  BasicPassRunner(const char* pipeline, std::string name, const char* ext, Printer print)
      : PassRunnerBase(pipeline, std::move(name), ext), print_(print) {}

  /// Runs `fn` on `in`, logs its time and dumps its result as the next step.
  template <typename Fn>
  auto Run(const char* pass, Fn&& fn, const IR& in) {
    auto out = Time(pass, [&] { return std::forward<Fn>(fn)(in); });
    if (const IR* ir = Succeeded(out)) Dump(pass, *ir);
    return out;
  }
  /// Dumps `ir` as the next step (the pipeline's input, say).
  void Dump(const char* pass, const IR& ir) {
    DumpText(pass, [&] { return print_(ir); });
  }

 private:
  static const IR* Succeeded(const IR& out) { return &out; }
  static const IR* Succeeded(const absl::StatusOr<IR>& out) { return out.ok() ? &*out : nullptr; }
  Printer print_;
};

/// The loop-IR pipeline's runner (ir::Lower): logs "lower <func>: <pass> took <ms> ms" and
/// dumps "<func>.<NN>_<pass>.ir".
class PassRunner : public BasicPassRunner<Stmt> {
 public:
  explicit PassRunner(std::string func);
};

}  // namespace cinn_like::ir
