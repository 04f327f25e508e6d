/// \file What the tuner must do for any program and target (tests/cinn_like/autotune_test.cc
/// on x86, tests/gpu/autotune_gpu_test.cc on the GPU machine): time its group's knob once,
/// remember the choice, take a choice from the cache file without timing, and compute the
/// reference's results with every value of the knob.
#pragma once

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cinn_like/compile.h"
#include "cinn_like/tune/autotune.h"
#include "cinn_like/verify/first_difference.h"
#include "frontend/program_json.h"
#include "hlir/reference_interpreter.h"
#include "ir/flags.h"
#include "tests/reference_case.h"

namespace cinn_like::testing {

inline std::string ReadText(const std::string& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

/// The knob values a tactics dump line offers: "[<knob> <value> of a/b/c]" -> {a, b, c}.
inline std::vector<int> KnobOptions(const std::string& tactics, const std::string& knob) {
  std::vector<int> options;
  const size_t at = tactics.find("[" + knob + " ");
  if (at == std::string::npos) return options;
  const size_t of = tactics.find(" of ", at);
  std::stringstream list(tactics.substr(of + 4, tactics.find(']', of) - of - 4));
  for (std::string item; std::getline(list, item, '/');) options.push_back(std::stoi(item));
  return options;
}

/// Tunes `program` for `target` (one group with knob `knob`), then checks the memory, the
/// file and the results of each of the knob's values against the reference interpreter on
/// fresh random inputs.
inline void CheckTuning(const frontend::Program& program, const ir::Target& target,
                        const std::string& knob, const std::string& tag) {
  gflags::FlagSaver saver;
  const std::string dir = ::testing::TempDir() + "/autotune_" + tag;
  const std::string cache = dir + "/choices.json";
  std::remove(cache.c_str());
  FLAGS_cinn_like_dump_dir = dir;
  FLAGS_cinn_like_autotune = true;
  FLAGS_cinn_like_autotune_cache = cache;
  ForgetTuning();

  // Timed once: every option compiled and run, the fastest kept in the file.
  const TuningStats before = GetTuningStats();
  auto compiled = CompileProgram(program, target, "tuned");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const TuningStats timed = GetTuningStats();
  EXPECT_EQ(timed.groups_timed, before.groups_timed + 1);
  const std::string tactics = ReadText(dir + "/tuned.tactics.txt");
  const std::vector<int> options = KnobOptions(tactics, knob);
  ASSERT_GE(options.size(), 2u) << tactics;
  EXPECT_EQ(timed.trials, before.trials + static_cast<int64_t>(options.size()));
  EXPECT_THAT(ReadText(dir + "/tuned.autotune.txt"), ::testing::HasSubstr(knob));
  nlohmann::json file = nlohmann::json::parse(ReadText(cache), nullptr, false);
  ASSERT_TRUE(file.is_object() && file["choices"].size() == 1) << ReadText(cache);
  const std::string key = file["choices"].begin().key();
  EXPECT_EQ(file["choices"][key]["knob"], knob);
  const int chosen = file["choices"][key]["value"].get<int>();
  EXPECT_THAT(tactics, ::testing::HasSubstr("[" + knob + " " + std::to_string(chosen) + " of"));

  // Remembered: compiling again times nothing.
  ASSERT_TRUE(CompileProgram(program, target, "again").ok());
  EXPECT_EQ(GetTuningStats().trials, timed.trials);
  EXPECT_EQ(GetTuningStats().groups_remembered, timed.groups_remembered + 1);

  // Each value, written into the file as another process's choice, is used without timing
  // and computes what the reference does.
  const ReferenceCase reference = MakeReferenceCase(program);
  ASSERT_TRUE(reference.ok);
  SCOPED_TRACE(reference.seed);
  for (int value : options) {
    SCOPED_TRACE(knob + " " + std::to_string(value));
    file["choices"][key]["value"] = value;
    std::ofstream(cache) << file.dump();
    ForgetTuning();
    EXPECT_EQ(RunAndCompare(program, target, reference.inputs, reference.want, nullptr), "");
    EXPECT_THAT(ReadText(dir + "/self_check.tactics.txt"),
                ::testing::HasSubstr("[" + knob + " " + std::to_string(value) + " of"));
  }
  EXPECT_EQ(GetTuningStats().trials, timed.trials);
  ForgetTuning();
}

}  // namespace cinn_like::testing
