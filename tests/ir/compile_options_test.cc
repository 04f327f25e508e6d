/// \file CompileOptions (issue 50, class 2): a compile's snapshot of the code-changing flags is
/// what every read inside it sees, whatever another thread sets meanwhile; outside a compile the
/// flags are read as they are.
#include "ir/compile_options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "ir/flags.h"

namespace cinn_like::ir {
namespace {

bool Holds(const CompileOptions& o, const std::string& name, const std::string& value) {
  return std::find(o.values.begin(), o.values.end(), std::make_pair(name, value)) != o.values.end();
}

TEST(CompileOptions, ASnapshotHoldsWhileAnotherThreadChangesTheFlags) {
  const bool fast = FLAGS_cinn_like_fast_math;
  const std::string wrong = StringFlag("cinn_like_debug_wrong_op");
  ASSERT_TRUE(SetFlag("cinn_like_fast_math", "false", nullptr));
  ASSERT_TRUE(SetFlag("cinn_like_debug_wrong_op", "", nullptr));
  {
    CompileOptionsScope scope(std::make_shared<const CompileOptions>(CompileOptions::Read()));
    std::thread other([] {
      SetFlag("cinn_like_fast_math", "true", nullptr);
      SetFlag("cinn_like_debug_wrong_op", "add", nullptr);
    });
    other.join();
    EXPECT_TRUE(FLAGS_cinn_like_fast_math);
    const CompileOptions& now = CurrentCompileOptions();
    EXPECT_FALSE(now.fast_math);
    EXPECT_EQ(now.debug_wrong_op, "");
    EXPECT_TRUE(Holds(now, "cinn_like_fast_math", "false"));  // the key's text: the same
    // A thread the compile starts with its snapshot sees it too.
    bool seen = true;
    std::thread worker([&seen, options = InstalledCompileOptions()] {
      CompileOptionsScope inner(options);
      seen = CurrentCompileOptions().fast_math;
    });
    worker.join();
    EXPECT_FALSE(seen);
  }
  // Outside a compile: the flags as they are.
  EXPECT_TRUE(CurrentCompileOptions().fast_math);
  EXPECT_EQ(CurrentCompileOptions().debug_wrong_op, "add");
  SetFlag("cinn_like_fast_math", fast ? "true" : "false", nullptr);
  SetFlag("cinn_like_debug_wrong_op", wrong, nullptr);
}

TEST(CompileOptions, PlacesAndCacheSettingsAreNotCodeFlags) {
  for (const char* place :
       {"cinn_like_dump_dir", "cinn_like_cache_dir", "cinn_like_cache", "cinn_like_cache_max_bytes",
        "cinn_like_source_save_path", "cinn_like_group_report"}) {
    EXPECT_FALSE(ChangesCode(place)) << place;
  }
  for (const char* code : {"cinn_like_fast_math", "cinn_like_fusion", "cinn_like_extern_libs",
                           "cinn_like_debug_wrong_op", "cinn_like_cuda_arch"}) {
    EXPECT_TRUE(ChangesCode(code)) << code;
  }
  const CompileOptions o = CompileOptions::Read();
  EXPECT_TRUE(std::is_sorted(o.values.begin(), o.values.end()));
  for (auto& [name, value] : o.values) EXPECT_TRUE(ChangesCode(name)) << name;
}

}  // namespace
}  // namespace cinn_like::ir
