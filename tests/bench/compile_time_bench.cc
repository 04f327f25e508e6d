/// \file Compile-time benchmark (not a test): how the time and memory of a whole compile
/// (Program -> graph passes -> lowering -> LLVM IR -> ORC) grow with the size of the Program,
/// on x86. Each case runs in a fresh child process of this program, so its peak resident set is
/// its own; the parent prints one row per case: the stages' wall times in ms (Program to graph,
/// graph passes, lowering, LLVM IR, LLVM's O3, machine code and ORC link), the whole compile's
/// wall and CPU time in ms (CPU time is the steadier figure on a loaded machine) and the peak RSS
/// of the process (the Program's construction and the library's start included).
///
///   compile_time_bench                       the curve: chains of 100..3000 ops, concat 100/1000
///   compile_time_bench --cases=chain:3000    one case (kinds: chain, chain8, concat)
///   compile_time_bench --cases=file:d/x.program.json   a Program dumped by a compile
///                                            (FLAGS_cinn_like_dump_dir), a zoo model's say
///
/// A chain is mixed elementwise ops on one float32 [64, 256] tensor, with a second input to a
/// binary op every few ops (as real graphs read weights); concat joins that many [4, 256]
/// inputs along axis 0.
#include <gflags/gflags.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/compiler.h"
#include "frontend/net_builder.h"
#include "frontend/program_json.h"
#include "hlir/graph_compiler.h"
#include "hlir/pass/pipeline.h"
#include "ir/target.h"
#include "tests/bench/compile_time_programs.h"

DEFINE_string(cases,
              "chain:100,chain:300,chain:1000,chain:3000,chain8:100,chain8:300,chain8:1000,"
              "chain8:3000,concat:100,concat:1000",
              "comma-separated kind:size cases (kinds: chain, concat)");
DEFINE_bool(child, false, "run the one case of --cases in this process (used by the parent)");

namespace cinn_like {
namespace {

using Clock = std::chrono::steady_clock;
double Ms(Clock::time_point begin) {
  return std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
}

/// The Program of case `spec`: kind:size or file:path.
absl::StatusOr<frontend::Program> CaseProgram(const std::string& spec) {
  std::vector<std::string> parts = absl::StrSplit(spec, absl::MaxSplits(':', 1));
  if (parts.size() == 2 && parts[0] == "file") {
    std::ifstream in(parts[1]);
    if (!in) return absl::NotFoundError("cannot read " + parts[1]);
    std::stringstream text;
    text << in.rdbuf();
    return frontend::ProgramFromJson(text.str());
  }
  int size = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &size) || size <= 0) {
    return absl::InvalidArgumentError("bad case '" + spec + "' (want kind:size or file:path)");
  }
  return bench::MakeProgram(parts[0], size);
}

/// Compiles one case in this process and prints its row (without the header).
int RunChild(const std::string& spec) {
  auto program = CaseProgram(spec);
  if (!program.ok()) {
    std::fprintf(stderr, "%s: %s\n", spec.c_str(), program.status().ToString().c_str());
    return 2;
  }
  ir::Target target = ir::Target::X86();
  auto begin = Clock::now();
  auto graph = frontend::BuildGraph(*program);
  if (!graph.ok()) {
    std::fprintf(stderr, "%s: %s\n", spec.c_str(), graph.status().ToString().c_str());
    return 1;
  }
  double build_graph_ms = Ms(begin);
  auto t = Clock::now();
  auto fused = hlir::RunGraphPasses(*graph, hlir::PassOptions());
  if (!fused.ok()) {
    std::fprintf(stderr, "%s: %s\n", spec.c_str(), fused.status().ToString().c_str());
    return 1;
  }
  double passes_ms = Ms(t);
  t = Clock::now();
  auto module = hlir::CompileFusedGraph(*fused, target, "bench");
  if (!module.ok()) {
    std::fprintf(stderr, "%s: %s\n", spec.c_str(), module.status().ToString().c_str());
    return 1;
  }
  double lower_ms = Ms(t);
  auto compiler = backends::Compiler::Create(target);
  if (!compiler.ok()) {
    std::fprintf(stderr, "%s: %s\n", spec.c_str(), compiler.status().ToString().c_str());
    return 1;
  }
  absl::Status built = (*compiler)->Build(*module);
  if (!built.ok()) {
    std::fprintf(stderr, "%s: %s\n", spec.c_str(), built.ToString().c_str());
    return 1;
  }
  double total_ms = Ms(begin);
  const backends::CompileTimes& times = (*compiler)->last_build_times();
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  std::string label = spec.substr(spec.find_last_of('/') + 1);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  double cpu_ms = (seconds(usage.ru_utime) + seconds(usage.ru_stime)) * 1e3;
  std::printf("%-14s %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f\n", label.c_str(),
              build_graph_ms, passes_ms, lower_ms, times.host_codegen_ms, times.host_optimize_ms,
              times.orc_link_ms, total_ms, cpu_ms, usage.ru_maxrss / 1024.0);
  std::fflush(stdout);
  return 0;
}

/// Runs each case in a child process of this program; returns nonzero when one failed.
int RunAll(const char* self) {
  std::printf("%-14s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "case", "graph", "passes", "lower",
              "llvm_ir", "llvm_opt", "mc_link", "total", "cpu", "peak_MB");
  std::fflush(stdout);
  int failures = 0;
  for (const std::string& spec :
       std::vector<std::string>(absl::StrSplit(FLAGS_cases, ',', absl::SkipEmpty()))) {
    std::string cases_flag = "--cases=" + spec;
    std::vector<char*> argv = {const_cast<char*>(self), const_cast<char*>("--child"),
                               cases_flag.data(), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) != 0) {
      std::fprintf(stderr, "could not start a child for %s\n", spec.c_str());
      return 1;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::printf("%-14s failed (%s %d)\n", spec.c_str(), WIFEXITED(status) ? "exit" : "signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      ++failures;
    }
  }
  return failures ? 1 : 0;
}

}  // namespace
}  // namespace cinn_like

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (FLAGS_child) return cinn_like::RunChild(FLAGS_cases);
  return cinn_like::RunAll(argv[0]);
}
