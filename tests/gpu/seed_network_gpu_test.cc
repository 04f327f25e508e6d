/// \file GPU machine only: the seed network (conv 3x3 pad 1 with 16 output channels on
/// 1x3x224x224, batch_norm with random parameters as graph inputs, relu) built with
/// NetBuilder, compiled through the graph passes and the fused graph compiler, run on the
/// device against the reference interpreter, with FLAGS_cinn_like_extern_libs on and off.
#include <gtest/gtest.h>

#include "ir/flags.h"
#include "tests/fusion_cases.h"
#include "tests/gpu_executor.h"

namespace cinn_like::testing {
namespace {

TEST(SeedNetworkGpu, MatchesReferenceWithAndWithoutExternLibraries) {
  const bool saved = FLAGS_cinn_like_extern_libs;
  for (bool externs : {true, false}) {
    SCOPED_TRACE(externs ? "extern libs on" : "extern libs off");
    FLAGS_cinn_like_extern_libs = externs;
    RunProgramCase(ConvBnRelu(1, 3, 224, 16), ir::Target::NVGPU(), RunOnGpu);
  }
  FLAGS_cinn_like_extern_libs = saved;
}

}  // namespace
}  // namespace cinn_like::testing
