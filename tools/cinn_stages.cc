/// \file cinn_stages: prints every compilation stage of a built-in example for a target
/// (lowered IR, CUDA source or LLVM IR, compile-time breakdown) and runs it against the
/// example's reference. `--example=all --target=all --print_stages=false` is the demo.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdio>
#include <iostream>

#include "backends/compiler.h"
#include "ir/printer.h"
#include "tools/example_runner.h"
#include "tools/examples.h"

DEFINE_string(example, "myadd", "a built-in example name, or 'all'");
DEFINE_string(target, "x86",
              "x86, cuda, 'cuda -arch=sm_90', opencl, 'opencl -device=cpu', or 'all' (cuda only "
              "with a GPU, opencl only with an OpenCL device)");
DEFINE_bool(print_stages, true, "print the lowered IR and the generated source");
DEFINE_bool(run, true, "run the example on fresh random data and check it");
DEFINE_int64(n, 0, "problem size; 0 runs every size the example is checked at");
DEFINE_int32(timed_runs, 5, "timed calls per size after the checked call");

namespace {

using cinn_like::backends::Compiler;

/// Prints, builds and runs one example; returns false on any failure.
bool RunOne(const cinn_like::examples::Example& ex, Compiler& compiler) {
  const auto& target = compiler.target();
  std::printf("== %s on %s: %s\n", ex.name.c_str(), target.ToString().c_str(),
              ex.description.c_str());
  auto func = ex.build(target);
  if (!func.ok()) {
    std::printf("   lowering failed: %s\n", std::string(func.status().message()).c_str());
    return false;
  }
  cinn_like::ir::Module module{ex.name, target, {*func}};
  if (FLAGS_print_stages) {
    std::cout << "-- lowered IR\n" << cinn_like::ir::ToString(**func);
    auto source = compiler.GetSourceCode(module);
    if (!source.ok()) {
      std::printf("   codegen failed: %s\n", std::string(source.status().message()).c_str());
      return false;
    }
    std::cout << (target.is_nvgpu()    ? "-- CUDA source\n"
                  : target.is_opencl() ? "-- OpenCL C source\n"
                                       : "-- LLVM IR\n")
              << *source << "\n";
  }
  if (!FLAGS_run) return true;
  absl::Status built = compiler.Build(module);
  if (!built.ok()) {
    std::printf("   build failed: %s\n", std::string(built.message()).c_str());
    return false;
  }
  std::printf("-- compile times (ms)\n%s", compiler.last_build_times().ToString().c_str());
  bool ok = true;
  std::vector<int64_t> sizes = FLAGS_n > 0 ? std::vector<int64_t>{FLAGS_n} : ex.sizes;
  for (int64_t n : sizes) {
    auto report = cinn_like::examples::RunExample(ex, compiler, n, FLAGS_timed_runs);
    if (!report.ok()) {
      std::printf("   run n=%ld failed: %s\n", static_cast<long>(n),
                  std::string(report.status().message()).c_str());
      ok = false;
      continue;
    }
    std::printf("   %s\n", report->ToString().c_str());
    ok &= report->passed;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage("print every compilation stage of a built-in example and run it");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);

  if (FLAGS_example != "all") {
    auto found = cinn_like::examples::Find(FLAGS_example);
    if (!found.ok()) {
      std::fprintf(stderr, "%s\n", std::string(found.status().message()).c_str());
      return 2;
    }
  }
  std::vector<std::string> targets;
  if (FLAGS_target == "all") {
    targets = {"x86", "cuda", "opencl"};
  } else {
    targets = {FLAGS_target};
  }
  bool all_ok = true;
  for (auto& text : targets) {
    auto target = cinn_like::ir::Target::Parse(text);
    if (!target.ok()) {
      std::fprintf(stderr, "%s\n", std::string(target.status().message()).c_str());
      return 2;
    }
    auto compiler = Compiler::Create(*target);
    if (!compiler.ok()) {
      std::printf("== target %s unavailable: %s\n", text.c_str(),
                  std::string(compiler.status().message()).c_str());
      // With --target=all a missing GPU is expected; a target asked for by name is not.
      if (FLAGS_target != "all") all_ok = false;
      continue;
    }
    for (auto& ex : cinn_like::examples::All()) {
      if (FLAGS_example != "all" && ex.name != FLAGS_example) continue;
      all_ok &= RunOne(ex, **compiler);
    }
  }
  std::printf(all_ok ? "ALL OK\n" : "FAILURES\n");
  return all_ok ? 0 : 1;
}
