/// \file The pass runner's timing log and dump files.
#include "ir/pass_runner.h"

#include <glog/logging.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "ir/flags.h"
#include "ir/printer.h"

namespace cinn_like::ir {

PassRunnerBase::PassRunnerBase(const char* pipeline, std::string name, const char* ext)
    : pipeline_(pipeline), name_(std::move(name)), ext_(ext) {}

void PassRunnerBase::DumpText(const char* pass, const std::function<std::string()>& text,
                              const char* ext, bool same_step) {
  if (same_step) --step_;
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%02d", step_++);
  if (DumpDir().empty()) return;
  DumpToFile(absl::StrCat(name_, ".", prefix, "_", pass, ext ? ext : ext_), text());
}

void PassRunnerBase::LogTime(const char* pass, std::chrono::steady_clock::time_point start) const {
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  VLOG(2) << pipeline_ << " " << name_ << ": " << pass << " took " << ms << " ms";
}

PassRunner::PassRunner(std::string func)
    : BasicPassRunner("lower", std::move(func), ".ir", [](const Stmt& s) { return ToString(s); }) {}

}  // namespace cinn_like::ir
