/// \file The gtest entry of every test binary: flags from the command line and environment.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <gtest/gtest.h>

#include "ir/flags.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  cinn_like::InitFlagsFromEnv();
  return RUN_ALL_TESTS();
}
