/// \file The persistent store (cinn_like/cache/store.h) and its records (record.h): keys and
/// entry names, keyed records round-tripped, and refused when damaged, truncated or written
/// under another key (then removed); what is not a regular file is neither read, removed nor
/// replaced; eviction removes the least recently used of the store's own files and nothing
/// else; processes writing one key at once leave one whole record; the lock holds between
/// processes; a directory others can change is refused. Through the compile cache:
/// disk_cache_test.cc; through the C API from Python: tests/python/test_store.py.
#include "cinn_like/cache/store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cinn_like/cache/module_file.h"
#include "cinn_like/cache/record.h"
#include "runtime/files.h"

namespace cinn_like::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

/// A fresh store directory for one test.
Store FreshStore(const std::string& tag) {
  const std::string dir = ::testing::TempDir() + "/store_" + tag;
  fs::remove_all(dir);
  auto store = Store::Open(dir);
  EXPECT_TRUE(store.ok()) << store.status();
  return *store;
}

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Store, KeysAreSha256DigestsAndNameTheEntries) {
  EXPECT_EQ(StoreKey("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_TRUE(IsStoreKey(StoreKey("")));
  for (const char* not_key : {"", "abc", "../etc/passwd",
                              "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"}) {
    EXPECT_FALSE(IsStoreKey(not_key)) << not_key;
  }
  const Store store = FreshStore("names");
  const std::string key = StoreKey("k");
  EXPECT_EQ(store.Path(StoreKind::kModule, key), store.dir() + "/" + key + ".clm");
  EXPECT_EQ(store.Path(StoreKind::kPlan, key), store.dir() + "/" + key + ".clp");
  EXPECT_EQ(StoreKindNamed("plan"), StoreKind::kPlan);
  EXPECT_EQ(StoreKindNamed("module"), StoreKind::kModule);
  EXPECT_FALSE(StoreKindNamed("clp").has_value());
}

TEST(Store, ARecordRoundTripsAndADamagedOneIsRefusedAndRemoved) {
  const Store store = FreshStore("damaged");
  const std::string key = StoreKey("graph");
  const std::string payload = std::string("{\"plan\": 1}\0binary", 18);
  EXPECT_EQ(MissOf(store.Get(StoreKind::kPlan, key).status()), StoreMiss::kAbsent);
  ASSERT_TRUE(store.Put(StoreKind::kPlan, key, payload).ok());
  EXPECT_EQ(*store.Get(StoreKind::kPlan, key), payload);
  const std::string path = store.Path(StoreKind::kPlan, key);
  const std::string good = *runtime::ReadWholeFile(path);

  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x01;
  std::string other_version = good;
  other_version[8] = 7;
  for (const std::string& bad : {flipped, good.substr(0, good.size() - 1), good.substr(0, 5),
                                 other_version, std::string("cinn_like plan 2 abc\n{}")}) {
    SCOPED_TRACE(bad.size());
    ASSERT_TRUE(runtime::WriteFileAtomically(path, bad).ok());
    auto got = store.Get(StoreKind::kPlan, key);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(MissOf(got.status()), StoreMiss::kDamaged) << got.status();
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(path));
    EXPECT_FALSE(fs::exists(path));  // removed: the next Put writes it anew
  }
  ASSERT_TRUE(runtime::WriteFileAtomically(path, flipped).ok());
  EXPECT_THAT(std::string(store.Get(StoreKind::kPlan, key).status().message()),
              HasSubstr("checksum"));
  ASSERT_TRUE(store.Put(StoreKind::kPlan, key, payload).ok());
  EXPECT_EQ(*store.Get(StoreKind::kPlan, key), payload);
}

// Two records trading places (files swapped, one copied over the other): each is refused under
// the other's name.
TEST(Store, ARecordIsUsedOnlyUnderTheKeyItWasWrittenFor) {
  const Store store = FreshStore("bound");
  const std::string a = StoreKey("a"), b = StoreKey("b");
  ASSERT_TRUE(store.Put(StoreKind::kPlan, a, "plan a").ok());
  ASSERT_TRUE(store.Put(StoreKind::kPlan, b, "plan b").ok());
  fs::copy_file(store.Path(StoreKind::kPlan, a), store.Path(StoreKind::kPlan, b),
                fs::copy_options::overwrite_existing);
  auto got = store.Get(StoreKind::kPlan, b);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(MissOf(got.status()), StoreMiss::kDamaged);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("holds the plan record of key '" + a +
                                                             "', not the plan record of its name"));
  EXPECT_EQ(*store.Get(StoreKind::kPlan, a), "plan a");
}

TEST(Store, RecordsKeepTheModuleFilesMessages) {
  const std::string sealed = SealRecord(kModuleFile, "body");
  EXPECT_EQ(sealed.substr(0, 8), "CLMODULE");
  EXPECT_EQ(*OpenRecord(kModuleFile, sealed, "f"), "body");
  EXPECT_EQ(OpenRecord(kModuleFile, "#!/bin/sh", "f").status().message(),
            "f is not a cinn_like module file (no CLMODULE magic)");
  EXPECT_EQ(OpenRecord(kKeyedRecord, sealed, "f").status().message(),
            "f is not a cinn_like record (no CLRECORD magic)");
  EXPECT_EQ(OpenRecord(kModuleFile, sealed.substr(0, sealed.size() - 1), "f").status().message(),
            "f is damaged: its SHA-256 checksum does not match (truncated or changed)");
}

// A FIFO (as a device node would be) or a link at an entry's path is neither read (a FIFO would
// wait for a writer), removed nor replaced.
TEST(Store, WhatIsNotARegularFileIsLeftAlone) {
  const Store store = FreshStore("not_regular");
  const std::string key = StoreKey("fifo");
  const std::string path = store.Path(StoreKind::kPlan, key);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(MissOf(store.Get(StoreKind::kPlan, key).status()), StoreMiss::kRefused);
  EXPECT_THAT(std::string(store.Put(StoreKind::kPlan, key, "x").message()),
              HasSubstr("it is a FIFO, not a regular file"));
  EXPECT_TRUE(fs::is_fifo(path));

  const std::string outside = ::testing::TempDir() + "/store_link_target";
  std::ofstream(outside) << "the user's";
  const std::string linked = store.Path(StoreKind::kPlan, StoreKey("link"));
  fs::create_symlink(outside, linked);
  EXPECT_EQ(MissOf(store.Get(StoreKind::kPlan, StoreKey("link")).status()), StoreMiss::kRefused);
  EXPECT_FALSE(store.Put(StoreKind::kPlan, StoreKey("link"), "x").ok());
  EXPECT_TRUE(fs::is_symlink(linked));
  EXPECT_EQ(*runtime::ReadWholeFile(outside), "the user's");
  // Marking the entry used (as Get does once it reads one) never touches what a link points to.
  const auto before = fs::file_time_type::clock::now() - std::chrono::hours(5);
  fs::last_write_time(outside, before);
  store.Touch(StoreKind::kPlan, StoreKey("link"));
  EXPECT_EQ(fs::last_write_time(outside), before);
  // A regular file of another format at an entry's path is not overwritten either.
  const std::string foreign = store.Path(StoreKind::kPlan, StoreKey("foreign"));
  std::ofstream(foreign) << "the user's notes";
  EXPECT_THAT(std::string(store.Put(StoreKind::kPlan, StoreKey("foreign"), "x").message()),
              HasSubstr("it is not a cinn_like record"));
}

// Eviction with a cap of nothing, in a directory that also holds files that are not the
// store's: only the store's entries, and its locks and temporary files of writers that died,
// go.
TEST(Store, EvictionRemovesOnlyTheStoresOwnFiles) {
  const Store store = FreshStore("own_files");
  const std::string& dir = store.dir();
  const std::string key = StoreKey("entry");
  ASSERT_TRUE(store.Put(StoreKind::kPlan, key, "a plan").ok());
  ASSERT_TRUE(store.Write(StoreKind::kModule, key, SealRecord(kModuleFile, "m"), kModuleFile).ok());
  const std::string old_plan = std::string(32, 'd') + ".clp";  // named as before the store
  const std::vector<std::string> dead = {key + ".lock", key + ".clp.tmp.12.3",
                                         std::string(16, 'e') + ".clm.tmp.1.2"};
  const std::vector<std::string> not_ours = {"notes.txt",
                                             "x.clp",
                                             "model.clm",
                                             "job.lock",
                                             "abc.clm",
                                             key + ".txt",
                                             key + ".clp.tmp.x.1",
                                             key + ".clpx",
                                             std::string(63, 'a') + ".clp",
                                             key};
  for (const std::string& name : not_ours) std::ofstream(dir + "/" + name) << "the user's";
  for (const std::string& name : dead) std::ofstream(dir + "/" + name) << "a dead writer's";
  std::ofstream(dir + "/" + old_plan) << "an old plan";
  const std::string outside = ::testing::TempDir() + "/store_outside";
  std::ofstream(outside) << "not the store's";
  const std::string link = StoreKey("link") + ".clp";
  fs::create_symlink(outside, dir + "/" + link);
  const std::string sub = StoreKey("dir") + ".clm";
  fs::create_directory(dir + "/" + sub);
  const auto hours_ago = fs::file_time_type::clock::now() - std::chrono::hours(2);
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_symlink()) fs::last_write_time(e.path(), hours_ago);
  }

  EXPECT_EQ(store.Evict(0, ""), 3);  // the two entries and the old plan
  std::vector<std::string> left = not_ours;
  left.push_back(link);
  left.push_back(sub);
  std::sort(left.begin(), left.end());
  EXPECT_EQ(Names(dir), left);
  EXPECT_EQ(*runtime::ReadWholeFile(outside), "not the store's");
}

TEST(Store, EvictionTakesTheLeastRecentlyUsedFirstAndTheKeptOneLast) {
  const Store store = FreshStore("lru");
  std::vector<std::string> keys;
  for (int i = 0; i < 4; ++i) {
    keys.push_back(StoreKey(absl::StrCat("entry ", i)));
    ASSERT_TRUE(store.Put(StoreKind::kPlan, keys.back(), std::string(100, 'x')).ok());
    fs::last_write_time(store.Path(StoreKind::kPlan, keys.back()),
                        fs::file_time_type::clock::now() - std::chrono::minutes(10 - i));
  }
  const uint64_t one = fs::file_size(store.Path(StoreKind::kPlan, keys[0]));
  store.Touch(StoreKind::kPlan, keys[0]);  // used now: the newest
  // Room for two: entries 1 and 2 go, the oldest of the others.
  EXPECT_EQ(store.Evict(2 * one, store.Path(StoreKind::kPlan, keys[3])), 2);
  EXPECT_TRUE(store.Get(StoreKind::kPlan, keys[0]).ok());
  EXPECT_FALSE(store.Get(StoreKind::kPlan, keys[1]).ok());
  EXPECT_FALSE(store.Get(StoreKind::kPlan, keys[2]).ok());
  EXPECT_TRUE(store.Get(StoreKind::kPlan, keys[3]).ok());
  // Room for none: the kept entry goes last, and still goes.
  EXPECT_EQ(store.Evict(0, store.Path(StoreKind::kPlan, keys[3])), 2);
  EXPECT_TRUE(Names(store.dir()).empty());
}

// Processes writing one key at once: every read between sees a whole record of one of them,
// and they leave one whole record and no temporary file.
TEST(Store, ProcessesWritingOneKeyAtOnceLeaveOneWholeRecord) {
  const Store store = FreshStore("race");
  const std::string key = StoreKey("raced");
  constexpr int kWriters = 4, kWrites = 60;
  auto payload = [](int writer) {
    return std::string(4096 + writer, static_cast<char>('a' + writer));
  };
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int bad = 0;
      for (int i = 0; i < kWrites; ++i) {
        if (!store.Put(StoreKind::kPlan, key, payload(w)).ok()) ++bad;
        auto got = store.Get(StoreKind::kPlan, key);
        if (got.ok() && got->size() != 4096 + static_cast<size_t>(got->front() - 'a')) ++bad;
        if (!got.ok() && MissOf(got.status()) != StoreMiss::kAbsent) ++bad;
      }
      _exit(bad == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto got = store.Get(StoreKind::kPlan, key);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_FALSE(got->empty());
  EXPECT_EQ(*got, payload(got->front() - 'a'));
  EXPECT_EQ(Names(store.dir()), std::vector<std::string>{key + ".clp"});
}

TEST(Store, TheLockHoldsBetweenProcesses) {
  const Store store = FreshStore("lock");
  const std::string key = StoreKey("locked");
  {
    StoreLock held(store.dir(), key);
    ASSERT_TRUE(held.held());
    EXPECT_FALSE(held.waited());
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int waits = 0;  // told once, as the wait begins
      StoreLock blocked(store.dir(), key, /*max_wait_ms=*/50, [&] { ++waits; });
      StoreLock other(store.dir(), StoreKey("other"), 50, [&] { ++waits; });
      _exit(blocked.waited() && !blocked.held() && other.held() && !other.waited() && waits == 1
                ? 0
                : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  StoreLock again(store.dir(), key, 50);  // released, and its file gone with it
  EXPECT_TRUE(again.held());
  EXPECT_FALSE(again.waited());
}

TEST(Store, ADirectoryOthersCanChangeIsRefused) {
  const Store store = FreshStore("private");
  EXPECT_EQ(fs::status(store.dir()).permissions() & fs::perms::all, fs::perms::owner_all);
  fs::permissions(store.dir(), fs::perms::owner_all | fs::perms::group_write,
                  fs::perm_options::replace);
  EXPECT_THAT(std::string(Store::Open(store.dir()).status().message()),
              HasSubstr("writable by its group"));
  fs::permissions(store.dir(), fs::perms::owner_all, fs::perm_options::replace);
  EXPECT_TRUE(Store::Open(store.dir()).ok());
  const std::string file = store.dir() + "/a_file";
  std::ofstream(file) << "x";
  EXPECT_THAT(std::string(Store::Open(file).status().message()), HasSubstr(file));
}

}  // namespace
}  // namespace cinn_like::testing
