/// \file The group report on the GPU (cinn_like/tune/group_report.h): every group of a compile
/// for NVGPU timed alone on the device, a library call's group (cuBLAS) and a generated
/// kernel's alike (tests/group_report_check.h).
#include <gtest/gtest.h>

#include "tests/group_report_check.h"

namespace cinn_like::testing {
namespace {

TEST(GroupReportGpu, EveryGroupIsTimedAloneAndListedSlowestFirst) {
  CheckHeavyGroupFirst(ir::Target::NVGPU(), "heavy_gpu", 2048, "elementwise.");
}

}  // namespace
}  // namespace cinn_like::testing
