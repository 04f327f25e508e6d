/// \file The persistent compile cache (cinn_like/cache/disk_cache.h) and saved modules
/// (cinn_like/cache/module_file.h) on x86: a second compile loads the entry and computes what the
/// reference does; damaged and truncated entries, and entries of another key, are compiled again
/// and replaced; the size cap holds and evicts only the cache's own files; what is not a regular
/// file is never read or replaced; a directory others can change is not used; the key (a
/// SHA-256) follows the flags that change code; a saved module loads and runs, Save replaces
/// nothing but a module file, and files of another format version, another CPU or GPU arch, a
/// FIFO, a device or damaged ones are refused with a message. Across processes:
/// tests/python/test_disk_cache.py.
#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "cinn_like/cache/disk_cache.h"
#include "cinn_like/cache/module_file.h"
#include "cinn_like/compare/call_and_compare.h"
#include "cinn_like/compile.h"
#include "frontend/program_json.h"
#include "hlir/reference_interpreter.h"
#include "ir/flags.h"
#include "runtime/byte_io.h"
#include "runtime/files.h"
#include "runtime/sha256.h"
#include "tests/fusion_cases.h"
#include "tests/reference_case.h"

namespace cinn_like::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const ir::Target kX86 = ir::Target::X86();

/// A fresh cache directory for one test, the cache on.
std::string FreshCacheDir(const std::string& tag) {
  const std::string dir = ::testing::TempDir() + "/disk_cache_" + tag;
  fs::remove_all(dir);
  FLAGS_cinn_like_cache = true;
  FLAGS_cinn_like_cache_dir = dir;
  EXPECT_EQ(DiskCacheDir(), dir);
  return dir;
}

/// The key of `program` (its canonical JSON, as CompileProgram keys it) for x86.
std::string Key(const frontend::Program& program, const std::string& name) {
  return DiskCacheKey(frontend::ProgramToJson(program), &program, kX86, name);
}

std::vector<fs::path> Entries(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".clm") out.push_back(e.path());
  }
  return out;
}

/// Checks the results of `compiled` (of `program`) against the reference interpreter on fresh
/// random inputs.
void ExpectRightResults(const CompiledProgram& compiled, const frontend::Program& program) {
  const ReferenceCase reference = MakeReferenceCase(program);
  ASSERT_TRUE(reference.ok);
  auto fn = compiled.Lookup(compiled.name());
  ASSERT_TRUE(fn.ok()) << fn.status();
  EXPECT_EQ(CallAndCompare(*fn, kX86, reference.inputs, reference.want, program.outputs, nullptr),
            "")
      << reference.seed;
}

TEST(DiskCache, ASecondCompileLoadsTheEntry) {
  gflags::FlagSaver saver;
  const std::string dir = FreshCacheDir("hit");
  const frontend::Program program = BiasGelu(S({37, 129}), 129);
  const DiskCacheStats before = GetDiskCacheStats();
  auto first = CompileProgram(program, kX86, "f");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE((*first)->from_cache());
  EXPECT_EQ(GetDiskCacheStats().misses, before.misses + 1);
  EXPECT_EQ(GetDiskCacheStats().stores, before.stores + 1);
  ASSERT_EQ(Entries(dir).size(), 1u);

  auto second = CompileProgram(program, kX86, "f");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE((*second)->from_cache());
  EXPECT_EQ(GetDiskCacheStats().hits, before.hits + 1);
  EXPECT_EQ((*second)->signature(), (*first)->signature());
  ExpectRightResults(**second, program);
  // The source of a loaded Program is lowered again on request.
  EXPECT_THAT((*second)->source(), HasSubstr("define"));

  // Another entry name, another Program: other entries.
  ASSERT_TRUE(CompileProgram(program, kX86, "g").ok());
  ASSERT_TRUE(CompileProgram(BiasGelu(S({37, 128}), 128), kX86, "f").ok());
  EXPECT_EQ(Entries(dir).size(), 3u);
  EXPECT_EQ(GetDiskCacheStats().hits, before.hits + 1);
}

TEST(DiskCache, DamagedAndTruncatedEntriesAreCompiledAgainAndReplaced) {
  gflags::FlagSaver saver;
  const std::string dir = FreshCacheDir("damaged");
  const frontend::Program program = BiasGelu(S({16, 64}), 64);
  ASSERT_TRUE(CompileProgram(program, kX86, "f").ok());
  ASSERT_EQ(Entries(dir).size(), 1u);
  const fs::path entry = Entries(dir)[0];
  const std::string good = *runtime::ReadWholeFile(entry.string());

  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x20;
  for (const std::string& bad :
       {flipped, good.substr(0, good.size() / 3), good.substr(0, 5), std::string()}) {
    SCOPED_TRACE(bad.size());
    ASSERT_TRUE(runtime::WriteFileAtomically(entry.string(), bad).ok());
    const DiskCacheStats before = GetDiskCacheStats();
    auto compiled = CompileProgram(program, kX86, "f");
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_FALSE((*compiled)->from_cache());
    EXPECT_EQ(GetDiskCacheStats().damaged, before.damaged + 1);
    EXPECT_EQ(GetDiskCacheStats().stores, before.stores + 1);
    ExpectRightResults(**compiled, program);
    // Replaced by a whole entry, which the next compile loads.
    EXPECT_EQ(*runtime::ReadWholeFile(entry.string()), good);
    auto again = CompileProgram(program, kX86, "f");
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE((*again)->from_cache());
  }
}

TEST(DiskCache, EvictionKeepsTheCapLeastRecentlyUsedFirst) {
  gflags::FlagSaver saver;
  const std::string dir = FreshCacheDir("evict");
  ASSERT_TRUE(CompileProgram(BiasGelu(S({8, 32}), 32), kX86, "f").ok());
  const uintmax_t one = fs::file_size(Entries(dir)[0]);
  FLAGS_cinn_like_cache_max_bytes = static_cast<int64_t>(3 * one + one / 2);
  const DiskCacheStats before = GetDiskCacheStats();
  for (int64_t cols = 33; cols < 40; ++cols) {
    ASSERT_TRUE(CompileProgram(BiasGelu(S({8, cols}), cols), kX86, "f").ok());
    // The first entry, used again after each compile, stays.
    auto first = CompileProgram(BiasGelu(S({8, 32}), 32), kX86, "f");
    ASSERT_TRUE(first.ok());
    EXPECT_TRUE((*first)->from_cache()) << cols;
  }
  uintmax_t total = 0;
  for (const fs::path& p : Entries(dir)) total += fs::file_size(p);
  EXPECT_LE(total, static_cast<uintmax_t>(FLAGS_cinn_like_cache_max_bytes));
  EXPECT_GE(Entries(dir).size(), 2u);
  EXPECT_GE(GetDiskCacheStats().evictions, before.evictions + 4);
  // The newest is there.
  auto newest = CompileProgram(BiasGelu(S({8, 39}), 39), kX86, "f");
  ASSERT_TRUE(newest.ok());
  EXPECT_TRUE((*newest)->from_cache());
}

TEST(DiskCache, KeysAreSha256Digests) {
  const std::string key = Key(BiasGelu(S({8, 32}), 32), "f");
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos) << key;
}

// Two Programs of one signature whose entries trade places (two files swapped on disk, or one
// copied over the other, as a colliding key would share it): each refuses the other's entry,
// compiles its own and computes its own results.
TEST(DiskCache, AnEntryRunsOnlyForTheKeyItWasStoredUnder) {
  gflags::FlagSaver saver;
  const std::string dir = FreshCacheDir("bound");
  const frontend::Program sum = ReduceRows(8, 64, 1), twice = ScaledRowSum(8, 64);
  ASSERT_TRUE(CompileProgram(sum, kX86, "f").ok());
  ASSERT_TRUE(CompileProgram(twice, kX86, "f").ok());
  const std::string sum_entry = dir + "/" + Key(sum, "f") + ".clm";
  const std::string twice_entry = dir + "/" + Key(twice, "f") + ".clm";
  const std::string sum_bytes = *runtime::ReadWholeFile(sum_entry);
  const std::string twice_bytes = *runtime::ReadWholeFile(twice_entry);
  EXPECT_EQ(DecodeModuleImage(sum_bytes, sum_entry)->key, Key(sum, "f"));

  ASSERT_TRUE(runtime::WriteFileAtomically(sum_entry, twice_bytes).ok());
  ASSERT_TRUE(runtime::WriteFileAtomically(twice_entry, sum_bytes).ok());
  for (const frontend::Program* program : {&sum, &twice}) {
    const DiskCacheStats before = GetDiskCacheStats();
    auto compiled = CompileProgram(*program, kX86, "f");
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_FALSE((*compiled)->from_cache());
    EXPECT_EQ(GetDiskCacheStats().damaged, before.damaged + 1);
    ExpectRightResults(**compiled, *program);
    // Its own entry replaced the other's, and is loaded next.
    auto again = CompileProgram(*program, kX86, "f");
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE((*again)->from_cache());
    ExpectRightResults(**again, *program);
  }
  EXPECT_EQ(*runtime::ReadWholeFile(sum_entry), sum_bytes);

  // A module saved by a host holds no key: it is no cache entry either.
  ASSERT_TRUE((*CompileProgram(sum, kX86, "f"))->Save(twice_entry).ok());
  EXPECT_FALSE(DiskCacheLookup(dir, Key(twice, "f")).has_value());
}

// Eviction under a cap of one byte, in a directory that also holds files that are not the
// cache's: a module the user saved, locks and temporary files of other names (an hour old),
// a link named as an entry. Only the cache's own files go.
TEST(DiskCache, EvictionRemovesOnlyTheCachesOwnFiles) {
  gflags::FlagSaver saver;
  const std::string dir = FreshCacheDir("own_files");
  fs::create_directories(dir);
  FLAGS_cinn_like_cache = false;
  auto saved = CompileProgram(BiasGelu(S({8, 32}), 32), kX86, "f");
  ASSERT_TRUE(saved.ok()) << saved.status();
  ASSERT_TRUE((*saved)->Save(dir + "/model.clm").ok());
  FLAGS_cinn_like_cache = true;
  const std::string outside = ::testing::TempDir() + "/disk_cache_outside.clm";
  std::ofstream(outside) << "not the cache's";
  const std::string ours_old = std::string(64, 'a');
  const std::vector<std::string> not_ours = {"model.clm",
                                             "job.lock",
                                             "data.tmp.1",
                                             "x.clp",
                                             "notes.clm.tmp.1.2",
                                             "abc.clm",
                                             std::string(64, 'b') + ".clm.tmp.x.1"};
  for (const std::string& name : not_ours) {
    if (name != "model.clm") std::ofstream(dir + "/" + name) << "the user's";
  }
  fs::create_symlink(outside, dir + "/" + std::string(64, 'c') + ".clm");
  for (const std::string& name : {ours_old + ".lock", ours_old + ".clm.tmp.12.3"}) {
    std::ofstream(dir + "/" + name) << "a dead writer's";
  }
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(2);
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_symlink()) fs::last_write_time(e.path(), hour_ago);
  }
  ASSERT_TRUE(CompileProgram(BiasGelu(S({8, 33}), 33), kX86, "f").ok());
  // A cap that holds one entry: the next store evicts the first, and nothing else.
  const std::string first = dir + "/" + Key(BiasGelu(S({8, 33}), 33), "f") + ".clm";
  FLAGS_cinn_like_cache_max_bytes = static_cast<int64_t>(fs::file_size(first) * 3 / 2);
  const DiskCacheStats before = GetDiskCacheStats();
  ASSERT_TRUE(CompileProgram(BiasGelu(S({8, 34}), 34), kX86, "f").ok());
  EXPECT_EQ(GetDiskCacheStats().evictions, before.evictions + 1);  // the first entry
  EXPECT_FALSE(fs::exists(first));
  for (const std::string& name : not_ours) EXPECT_TRUE(fs::exists(dir + "/" + name)) << name;
  EXPECT_TRUE(fs::is_symlink(dir + "/" + std::string(64, 'c') + ".clm"));
  EXPECT_EQ(*runtime::ReadWholeFile(outside), "not the cache's");
  EXPECT_TRUE(LoadCompiledProgram(dir + "/model.clm").ok());
  // The dead writer's lock and temporary file were the cache's: removed.
  EXPECT_FALSE(fs::exists(dir + "/" + ours_old + ".lock"));
  EXPECT_FALSE(fs::exists(dir + "/" + ours_old + ".clm.tmp.12.3"));
}

// A FIFO (as a device node would be) or a link where an entry goes is neither read, removed
// nor replaced: the compile succeeds without the entry.
TEST(DiskCache, WhatIsNotARegularFileIsNeverReadOrReplaced) {
  gflags::FlagSaver saver;
  const std::string dir = FreshCacheDir("not_regular");
  fs::create_directories(dir);
  const frontend::Program program = BiasGelu(S({8, 35}), 35);
  const std::string entry = dir + "/" + Key(program, "f") + ".clm";
  ASSERT_EQ(mkfifo(entry.c_str(), 0600), 0);
  const DiskCacheStats before = GetDiskCacheStats();
  auto compiled = CompileProgram(program, kX86, "f");  // would wait for a writer if it read
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ExpectRightResults(**compiled, program);
  EXPECT_TRUE(fs::is_fifo(entry));
  EXPECT_EQ(GetDiskCacheStats().write_errors, before.write_errors + 1);
  EXPECT_EQ(GetDiskCacheStats().damaged, before.damaged);

  fs::remove(entry);
  const std::string outside = ::testing::TempDir() + "/disk_cache_link_target";
  std::ofstream(outside) << "the user's";
  fs::create_symlink(outside, entry);
  ASSERT_TRUE(CompileProgram(program, kX86, "f").ok());
  EXPECT_TRUE(fs::is_symlink(entry));
  EXPECT_EQ(*runtime::ReadWholeFile(outside), "the user's");
}

// A directory another user owns, or that its group or others can write, holds machine code
// someone else may have put there: not used (nothing read from it or written to it), and the
// compile succeeds uncached.
TEST(DiskCache, ADirectoryOthersCanChangeIsNotUsed) {
  gflags::FlagSaver saver;
  const std::string dir = FreshCacheDir("shared");
  const frontend::Program program = BiasGelu(S({8, 36}), 36);
  ASSERT_TRUE(CompileProgram(program, kX86, "f").ok());
  ASSERT_EQ(Entries(dir).size(), 1u);
  for (fs::perms open : {fs::perms::others_write, fs::perms::group_write}) {
    fs::permissions(dir, fs::perms::owner_all | open, fs::perm_options::replace);
    EXPECT_EQ(DiskCacheDir(), "");
    const DiskCacheStats before = GetDiskCacheStats();
    auto compiled = CompileProgram(program, kX86, "f");
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_FALSE((*compiled)->from_cache());
    EXPECT_EQ(GetDiskCacheStats().hits + GetDiskCacheStats().misses, before.hits + before.misses);
    ExpectRightResults(**compiled, program);
  }
  if (geteuid() == 0) {  // another user's: one made nobody's
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
    ASSERT_EQ(chown(dir.c_str(), 65534, static_cast<gid_t>(-1)), 0);
    EXPECT_EQ(DiskCacheDir(), "");
    ASSERT_EQ(chown(dir.c_str(), 0, static_cast<gid_t>(-1)), 0);
  } else {
    FLAGS_cinn_like_cache_dir = "/";
    EXPECT_EQ(DiskCacheDir(), "");
    FLAGS_cinn_like_cache_dir = dir;
  }
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  EXPECT_EQ(DiskCacheDir(), dir);
  auto again = CompileProgram(program, kX86, "f");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)->from_cache());
}

TEST(DiskCache, OneCompileOfAKeyAtATime) {
  gflags::FlagSaver saver;
  const std::string dir = FreshCacheDir("lock");
  const frontend::Program program = BiasGelu(S({8, 40}), 40);
  const std::string key = Key(program, "f");
  const DiskCacheStats before = GetDiskCacheStats();
  {
    DiskCacheCompileLock held(dir, key);
    EXPECT_FALSE(held.waited());
    EXPECT_TRUE(fs::exists(dir + "/" + key + ".lock"));
    // Another holder of the key waits (here until its short limit), another key does not.
    const auto start = std::chrono::steady_clock::now();
    DiskCacheCompileLock blocked(dir, key, /*max_wait_ms=*/50);
    EXPECT_TRUE(blocked.waited());
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
    DiskCacheCompileLock other(dir, Key(program, "g"), 50);
    EXPECT_FALSE(other.waited());
  }
  EXPECT_EQ(GetDiskCacheStats().waits, before.waits + 1);
  EXPECT_FALSE(fs::exists(dir + "/" + key + ".lock"));  // removed by its holder

  // A compile that comes while another holds the key waits for it and loads its entry.
  std::optional<DiskCacheCompileLock> first(std::in_place, dir, key);
  std::atomic<bool> done{false};
  absl::StatusOr<std::unique_ptr<CompiledProgram>> second;
  std::thread waiter([&] {
    second = CompileProgram(program, kX86, "f");
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(done.load());
  {
    // What the holder does: compile and store the entry, then release.
    FLAGS_cinn_like_cache = false;  // this thread's compile (flags are global: briefly off)
    auto compiled = CompileProgram(program, kX86, "f");
    FLAGS_cinn_like_cache = true;
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    const std::string saved = dir + "/saved.module";
    ASSERT_TRUE((*compiled)->Save(saved).ok());
    auto image = DecodeModuleImage(*runtime::ReadWholeFile(saved), saved);
    ASSERT_TRUE(image.ok()) << image.status();
    DiskCacheStore(dir, key, *std::move(image));  // the entry, stored under its key
  }
  first.reset();
  waiter.join();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE((*second)->from_cache());
  EXPECT_EQ(GetDiskCacheStats().waits, before.waits + 2);
  ExpectRightResults(**second, program);
}

TEST(DiskCache, KeysFollowFlagsThatChangeCodeOnly) {
  gflags::FlagSaver saver;
  const frontend::Program program = BiasGelu(S({8, 32}), 32);
  const std::string key = Key(program, "f");
  EXPECT_EQ(Key(program, "f"), key);
  EXPECT_NE(Key(program, "g"), key);
  EXPECT_NE(Key(BiasGelu(S({8, 33}), 33), "f"), key);
  FLAGS_cinn_like_cache_dir = "/elsewhere";
  FLAGS_cinn_like_cache_max_bytes = 1;
  EXPECT_EQ(Key(program, "f"), key);
  FLAGS_cinn_like_fast_math = true;
  EXPECT_NE(Key(program, "f"), key);
}

TEST(DiskCache, TheCApisTextIsTheKeyAndAHitParsesNothing) {
  gflags::FlagSaver saver;
  const std::string dir = FreshCacheDir("text");
  const frontend::Program program = BiasGelu(S({8, 41}), 41);
  const std::string text = frontend::ProgramToJson(program);
  // A Program compiled from C++ and its canonical text share an entry.
  auto compiled = CompileProgram(program, kX86, "f");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto from_text = CompileProgramJson(text, kX86, "f");
  ASSERT_TRUE(from_text.ok()) << from_text.status();
  EXPECT_TRUE((*from_text)->from_cache());
  ExpectRightResults(**from_text, program);
  // The hit's source is its Program's, parsed and lowered again when asked for.
  EXPECT_FALSE((*from_text)->source().empty());
  EXPECT_EQ((*from_text)->source(), (*compiled)->source());
  // The same Program spelled otherwise is another entry, compiled, and right.
  auto spaced = CompileProgramJson(nlohmann::json::parse(text).dump(2), kX86, "f");
  ASSERT_TRUE(spaced.ok()) << spaced.status();
  EXPECT_FALSE((*spaced)->from_cache());
  ExpectRightResults(**spaced, program);
  EXPECT_EQ(Entries(dir).size(), 2u);
  // Text that does not parse is refused with the parser's message and stores nothing.
  auto cut = CompileProgramJson(text.substr(0, text.size() / 2), kX86, "f");
  ASSERT_FALSE(cut.ok());
  EXPECT_THAT(std::string(cut.status().message()), HasSubstr("JSON"));
  EXPECT_EQ(Entries(dir).size(), 2u);
}

TEST(DiskCache, LibraryOpsAreFoundInTheTextWithoutParsingIt) {
  bool convolutions = true;
  EXPECT_FALSE(
      ProgramJsonUsesLibraries(frontend::ProgramToJson(BiasGelu(S({4, 8}), 8)), &convolutions));
  EXPECT_FALSE(convolutions);
  const std::string mlp = frontend::ProgramToJson(Mlp(4, 8, 16, 8));
  EXPECT_TRUE(ProgramJsonUsesLibraries(mlp, &convolutions));
  EXPECT_FALSE(convolutions);
  EXPECT_TRUE(
      ProgramJsonUsesLibraries(frontend::ProgramToJson(ConvBnRelu(1, 3, 8, 4)), &convolutions));
  EXPECT_TRUE(convolutions);
  // An op name spelled with an escape is found too (the text is parsed).
  std::string escaped = mlp;
  const size_t at = escaped.find("\"linear\"");
  ASSERT_NE(at, std::string::npos);
  escaped.replace(at, 8, "\"l\\u0069near\"");
  ASSERT_TRUE(frontend::ProgramFromJson(escaped).ok());
  EXPECT_TRUE(ProgramJsonUsesLibraries(escaped, &convolutions));
  // The text alone keys it as its parsed Program does (the library environment in both).
  const auto parsed = frontend::ProgramFromJson(escaped);
  EXPECT_EQ(DiskCacheKey(escaped, nullptr, kX86, "f"), DiskCacheKey(escaped, &*parsed, kX86, "f"));
  // Text that does not parse is read as using every library.
  EXPECT_TRUE(ProgramJsonUsesLibraries("{\"op\": \"m\\u0061", &convolutions));
  EXPECT_TRUE(convolutions);
}

TEST(DiskCache, OffOrBypassedWhereEveryStageMustRun) {
  gflags::FlagSaver saver;
  FreshCacheDir("bypass");
  FLAGS_cinn_like_cache = false;
  EXPECT_EQ(DiskCacheDir(), "");
  FLAGS_cinn_like_cache = true;
  FLAGS_cinn_like_dump_dir = ::testing::TempDir() + "/disk_cache_dump";
  EXPECT_EQ(DiskCacheDir(), "");
  FLAGS_cinn_like_dump_dir = "";
  FLAGS_cinn_like_self_check = true;
  EXPECT_EQ(DiskCacheDir(), "");
  FLAGS_cinn_like_self_check = false;
  FLAGS_cinn_like_cache_dir = "/proc/no_cache_here";  // cannot be created: no cache
  EXPECT_EQ(DiskCacheDir(), "");
  ASSERT_TRUE(CompileProgram(BiasGelu(S({8, 32}), 32), kX86, "f").ok());
}

TEST(ModuleFile, ASavedModuleLoadsAndRuns) {
  gflags::FlagSaver saver;
  FLAGS_cinn_like_cache = false;
  const frontend::Program program = BiasGelu(S({19, 77}), 77);
  auto compiled = CompileProgram(program, kX86, "saved_fn");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string path = ::testing::TempDir() + "/saved_fn.clm";
  ASSERT_TRUE((*compiled)->Save(path).ok());
  auto loaded = LoadCompiledProgram(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->name(), "saved_fn");
  EXPECT_EQ((*loaded)->signature(), (*compiled)->signature());
  EXPECT_EQ((*loaded)->source(), "");  // a file holds code, not the Program
  ExpectRightResults(**loaded, program);
  EXPECT_THAT((*loaded)->Lookup("other").status().message(), HasSubstr("saved_fn"));
}

TEST(ModuleFile, OtherVersionsArchsAndDamagedFilesAreRefused) {
  gflags::FlagSaver saver;
  FLAGS_cinn_like_cache = false;
  auto compiled = CompileProgram(BiasGelu(S({8, 32}), 32), kX86, "f");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string path = ::testing::TempDir() + "/refused.clm";
  ASSERT_TRUE((*compiled)->Save(path).ok());
  const std::string good = *runtime::ReadWholeFile(path);
  auto decoded = DecodeModuleImage(good, path);
  ASSERT_TRUE(decoded.ok()) << decoded.status();

  auto refused = [&](const std::string& bytes) {
    EXPECT_TRUE(runtime::WriteFileAtomically(path, bytes).ok());
    auto loaded = LoadCompiledProgram(path);
    EXPECT_FALSE(loaded.ok());
    return std::string(loaded.status().message());
  };
  EXPECT_THAT(refused("#!/bin/sh\n"), HasSubstr("not a cinn_like module file"));
  std::string version = good;
  version[8] = static_cast<char>(kModuleFileVersion + 1);
  EXPECT_THAT(refused(version), HasSubstr("format version"));
  std::string flipped = good;
  flipped[good.size() - 20] ^= 1;
  EXPECT_THAT(refused(flipped), HasSubstr("checksum"));
  EXPECT_THAT(refused(good.substr(0, good.size() - 100)), HasSubstr("damaged"));
  EXPECT_THAT(refused(good.substr(0, 10)), HasSubstr("damaged"));

  // Past the checksum (the bytes re-sealed after the change): the structure is checked too.
  auto sealed = [](std::string body) {
    const runtime::Sha256Digest digest = runtime::Sha256(body);
    return body + std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
  };
  const std::string body = good.substr(0, good.size() - 32);
  EXPECT_EQ(sealed(body), good);  // the checksum is the SHA-256 of the rest
  EXPECT_THAT(refused(sealed(body + "xyz")), HasSubstr("bytes its header does not describe"));
  std::string header_count = body;
  const std::string count = "\"host_objects\":1";
  const size_t at = header_count.find(count);
  ASSERT_NE(at, std::string::npos);
  header_count[at + count.size() - 1] = '9';  // 9 objects in a file that holds 1
  EXPECT_THAT(refused(sealed(header_count)), HasSubstr("a host object runs past the end"));

  ModuleImage other_runtime = *decoded;
  other_runtime.runtime = "runtime 0";
  EXPECT_THAT(refused(EncodeModuleImage(other_runtime)), HasSubstr("made for the runtime"));

  ModuleImage other_cpu = *decoded;
  other_cpu.code.host = "x86_64-unknown-linux-gnu i486 +x87";
  EXPECT_THAT(refused(EncodeModuleImage(other_cpu)), HasSubstr("made for the CPU"));

  ModuleImage gpu = *decoded;  // as if built for a GPU this machine does not have
  gpu.target = "cuda -arch=sm_10";
  gpu.code.device.push_back(backends::DeviceBinary{true, "not a cubin", {"k"}});
  const std::string message = refused(EncodeModuleImage(gpu));
  EXPECT_THAT(message, HasSubstr("cannot load " + path));
  // Without a GPU here the device is what is missing; on one, its arch is not sm_10.
  EXPECT_THAT(message,
              ::testing::AnyOf(HasSubstr("built for sm_10"), HasSubstr("CUDA driver"),
                               HasSubstr("no CUDA device"), HasSubstr("without the CUDA toolkit")));
  EXPECT_THAT(refused(""), HasSubstr("not a cinn_like module file"));
  fs::remove(path);
  EXPECT_THAT(LoadCompiledProgram(path).status().message(), HasSubstr("cannot read"));
}

// A file of format version 2 (an FNV-1a checksum) is refused by its version, before anything
// else of it is read.
TEST(ModuleFile, AnOldFormatVersionIsRefusedWithAMessage) {
  std::string old_file = "CLMODULE";
  runtime::PutU32(&old_file, 2);
  runtime::PutBytes(&old_file, "{\"producer\": \"cinn_like 0\"}");
  runtime::PutU64(&old_file, runtime::Fnv1a64(old_file));
  const std::string path = ::testing::TempDir() + "/version2.clm";
  ASSERT_TRUE(runtime::WriteFileAtomically(path, old_file).ok());
  auto loaded = LoadCompiledProgram(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            path +
                " has module file format version 2; this cinn_like reads version 3 (compile "
                "the Program again with this library)");
}

// A FIFO and a device are refused without reading (a FIFO would wait for a writer, /dev/zero
// never ends).
TEST(ModuleFile, LoadingRefusesWhatIsNotARegularFile) {
  const std::string fifo = ::testing::TempDir() + "/module_fifo.clm";
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(LoadCompiledProgram(fifo).status().message(),
            "cannot read the module file " + fifo + ": it is a FIFO, not a regular file");
  EXPECT_EQ(LoadCompiledProgram("/dev/zero").status().message(),
            "cannot read the module file /dev/zero: it is a character device, not a regular file");
  EXPECT_THAT(LoadCompiledProgram(::testing::TempDir()).status().message(),
              HasSubstr("it is a directory"));
  fs::remove(fifo);
}

// Save replaces a module file (or an empty file) and nothing else.
TEST(ModuleFile, SaveReplacesOnlyAModuleFile) {
  gflags::FlagSaver saver;
  FLAGS_cinn_like_cache = false;
  auto compiled = CompileProgram(BiasGelu(S({8, 32}), 32), kX86, "f");
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string dir = ::testing::TempDir() + "/module_save";
  fs::remove_all(dir);
  fs::create_directories(dir);
  ASSERT_TRUE((*compiled)->Save(dir + "/m.clm").ok());
  ASSERT_TRUE((*compiled)->Save(dir + "/m.clm").ok());  // a module file: replaced
  std::ofstream(dir + "/empty.clm").flush();
  ASSERT_TRUE((*compiled)->Save(dir + "/empty.clm").ok());
  EXPECT_TRUE(LoadCompiledProgram(dir + "/empty.clm").ok());

  std::ofstream(dir + "/weights.bin") << "the user's weights";
  EXPECT_EQ((*compiled)->Save(dir + "/weights.bin").message(),
            "refusing to overwrite " + dir + "/weights.bin: it is not a cinn_like module file");
  EXPECT_EQ(*runtime::ReadWholeFile(dir + "/weights.bin"), "the user's weights");
  fs::create_directory(dir + "/sub");
  EXPECT_EQ((*compiled)->Save(dir + "/sub").message(),
            "refusing to replace " + dir + "/sub: it is a directory, not a regular file");
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  EXPECT_THAT(std::string((*compiled)->Save(dir + "/fifo").message()),
              HasSubstr("it is a FIFO, not a regular file"));
  EXPECT_TRUE(fs::is_fifo(dir + "/fifo"));
  // A link, even to a module file, is not written through nor replaced.
  fs::create_symlink(dir + "/m.clm", dir + "/link.clm");
  EXPECT_THAT(std::string((*compiled)->Save(dir + "/link.clm").message()),
              HasSubstr("it is a symbolic link, not a regular file"));
  EXPECT_TRUE(fs::is_symlink(dir + "/link.clm"));
  // (A device node is refused as the FIFO is; not tried here: as root, a library without this
  // check would replace the machine's /dev/null.)
}

}  // namespace
}  // namespace cinn_like::testing
