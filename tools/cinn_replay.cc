/// \file cinn_replay: what a user attaches to a bug report, replayed. Takes a Program JSON (a
/// file, or `<name>.program.json` from a cinn_like_dump_dir), compiles it for x86, runs it on
/// fresh random inputs, compares with the reference interpreter and, when they differ, names
/// the first differing instruction and writes the smallest failing Program. With --source, it
/// prints instead the source generated for a target (CUDA C needs no GPU: nothing is built).
///   cinn_replay --program=dump/f.program.json --sizes=n=33,m=5 --seed=7 --out=small.json
///   cinn_replay --program=dump/f.program.json --source=cuda
/// Exit status: 0 every output matches, 1 a difference (or a failed compile or call), 2 the
/// replay could not run (a bad file, inputs the reference refuses).
#include <gflags/gflags.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "cinn_like/compile.h"
#include "cinn_like/verify/self_check.h"
#include "frontend/program_json.h"

DEFINE_string(program, "", "the Program JSON file");
DEFINE_uint64(seed, 1, "random inputs' seed");
DEFINE_string(sizes, "", "symbolic dims, e.g. n=33,m=5 (others are --default_size)");
DEFINE_int64(default_size, 7, "the size of a symbolic dim not in --sizes");
DEFINE_int64(int_low, -5, "integer inputs' lowest value (uint8 from 0)");
DEFINE_int64(int_high, 5, "integer inputs' highest value");
DEFINE_bool(bisect, true, "narrow a difference to the first differing instruction");
DEFINE_string(out, "", "write the smallest failing Program JSON here");
DEFINE_string(source, "",
              "print the source generated for this target (x86, cuda, "
              "'cuda -arch=sm_90') instead of running");

int main(int argc, char** argv) {
  gflags::SetUsageMessage("cinn_replay --program=FILE [--sizes=n=8] [--seed=1] [--out=FILE]");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  std::ifstream in(FLAGS_program);
  if (FLAGS_program.empty() || !in) {
    std::fprintf(stderr, "cinn_replay: cannot read --program '%s'\n", FLAGS_program.c_str());
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto program = cinn_like::frontend::ProgramFromJson(text.str());
  if (!program.ok()) {
    std::fprintf(stderr, "cinn_replay: %s: %s\n", FLAGS_program.c_str(),
                 std::string(program.status().message()).c_str());
    return 2;
  }
  if (!FLAGS_source.empty()) {
    auto target = cinn_like::ir::Target::Parse(FLAGS_source);
    auto source = target.ok() ? cinn_like::ProgramSource(*program, *target, "main")
                              : absl::StatusOr<std::string>(target.status());
    if (!source.ok()) {
      std::fprintf(stderr, "cinn_replay: %s\n", std::string(source.status().message()).c_str());
      return 1;
    }
    std::printf("%s", source->c_str());
    return 0;
  }
  cinn_like::SelfCheckOptions options;
  options.seed = FLAGS_seed;
  options.default_size = FLAGS_default_size;
  options.int_low = static_cast<double>(FLAGS_int_low);
  options.int_high = static_cast<double>(FLAGS_int_high);
  options.bisect = FLAGS_bisect;
  for (absl::string_view item : absl::StrSplit(FLAGS_sizes, ',', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(item, '=');
    int64_t v = 0;
    if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &v) || v < 0) {
      std::fprintf(stderr, "cinn_replay: --sizes item '%s' is not name=size\n",
                   std::string(item).c_str());
      return 2;
    }
    options.sizes[kv.first] = v;
  }
  auto report = cinn_like::SelfCheck(*program, options);
  if (!report.ok()) {
    std::fprintf(stderr, "cinn_replay: %s\n", std::string(report.status().message()).c_str());
    return 2;
  }
  std::printf("%s", report->summary.c_str());
  if (!report->ok && !FLAGS_out.empty() && report->first_bad_instruction >= 0) {
    std::ofstream(FLAGS_out) << cinn_like::frontend::ProgramToJson(report->smallest) << "\n";
    std::printf("smallest failing program: %s\n", FLAGS_out.c_str());
  }
  return report->ok ? 0 : 1;
}
