/// \file The gtest entry of every test binary: flags from the command line (the environment's
/// FLAGS_<name> are read when libcinn_like loads; see ir/flags.h).
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  return RUN_ALL_TESTS();
}
