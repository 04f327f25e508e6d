/// \file The module-file fuzz target's structure-aware mutator (tests/fuzz/module_file_mutator.h):
/// from a valid file it makes files that pass the checksum (so the fuzzer reaches the checks
/// behind it), each different from its input and each a file the decoder reads back to the same
/// bytes; a file that does not decode is mutated byte-wise.
#include "tests/fuzz/module_file_mutator.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cinn_like/c_api.h"
#include "frontend/net_builder.h"
#include "frontend/program_json.h"
#include "tests/fusion_cases.h"

namespace cinn_like {
namespace {

std::string ValidModuleFile() {
  frontend::NetBuilder b;
  auto x = b.CreateInput(hlir::DType::kFloat32, testing::S({4, 8}), "x");
  b.MarkOutput(b.Relu(x));
  const std::string json = frontend::ProgramToJson(*b.Build());
  cinn_like_module module = nullptr;
  EXPECT_EQ(cinn_like_compile(json.c_str(), "x86", "f", &module), 0) << cinn_like_get_last_error();
  const std::string path = ::testing::TempDir() + "/mutator_seed.clm";
  EXPECT_EQ(cinn_like_module_save(module, path.c_str()), 0) << cinn_like_get_last_error();
  cinn_like_module_free(module);
  std::stringstream bytes;
  bytes << std::ifstream(path, std::ios::binary).rdbuf();
  return bytes.str();
}

TEST(ModuleFileMutator, MutationsOfAValidFilePassTheChecksumAndDiffer) {
  const std::string seed_file = ValidModuleFile();
  ASSERT_TRUE(DecodeModuleImage(seed_file, "seed").ok());
  std::mt19937 flips(7);
  auto flip = [&flips](std::string* s, size_t) { fuzz::FlipSomeByte(s, &flips); };
  int decoded = 0, changed = 0;
  constexpr int kRuns = 300;
  for (uint32_t seed = 0; seed < kRuns; ++seed) {
    const std::string out = fuzz::MutateModuleFile(seed_file, seed, 1 << 24, flip);
    changed += out != seed_file;
    auto image = DecodeModuleImage(out, "mutated");
    if (!image.ok()) continue;
    ++decoded;
    EXPECT_EQ(EncodeModuleImage(*image), out) << "seed " << seed;
  }
  // A byte flip would pass the checksum almost never; these nearly always do (a field the format
  // itself constrains, such as a version text, may not).
  EXPECT_GT(decoded, kRuns * 8 / 10);
  // Some choices change nothing here (an x86 file has no device image to flip; a flipped high
  // bit of a header character is masked off again).
  EXPECT_GT(changed, kRuns * 3 / 4);
  // A file that does not decode goes to the byte mutator.
  std::string broken = seed_file;
  broken[broken.size() / 2] ^= 1;
  ASSERT_FALSE(DecodeModuleImage(broken, "broken").ok());
  EXPECT_NE(fuzz::MutateModuleFile(broken, 1, 1 << 24, flip), broken);
}

TEST(ModuleFileMutator, NoMutationIsLongerThanMaxSize) {
  // libFuzzer's buffer holds max_size bytes: a file that did not decode came back from the byte
  // mutator as long as it made it, up to 64 bytes past max_size (a heap-buffer-overflow in the
  // fuzz target's LLVMFuzzerCustomMutator under -fork=1).
  const std::string seed_file = ValidModuleFile();
  auto grow = [](std::string* s, size_t) { s->append(64, 'x'); };
  std::string broken = seed_file;
  broken[broken.size() / 2] ^= 1;
  ASSERT_FALSE(DecodeModuleImage(broken, "broken").ok());
  for (const std::string& in : {broken, seed_file, std::string("CLMODULE")}) {
    for (uint32_t seed = 0; seed < 24; ++seed) {
      EXPECT_LE(fuzz::MutateModuleFile(in, seed, in.size(), grow).size(), in.size())
          << "seed " << seed << ", input of " << in.size() << " bytes";
    }
  }
}

}  // namespace
}  // namespace cinn_like
