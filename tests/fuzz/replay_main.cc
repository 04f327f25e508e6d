/// \file The main of the fuzz targets' replay programs (<target>_replay): feeds each file named
/// on the command line, or found in a folder named there, to LLVMFuzzerTestOneInput, as
/// libFuzzer would, so the corpus and the committed crashers run in CI without libFuzzer.
/// A missing folder is skipped (git keeps no empty folder); a crash or abort fails the run.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

void RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::printf("replay %s (%zu bytes)\n", path.c_str(), bytes.size());
  std::fflush(stdout);
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  int files = 0;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      std::vector<std::filesystem::path> paths;
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') {
          paths.push_back(entry.path());
        }
      }
      std::sort(paths.begin(), paths.end());
      for (const auto& p : paths) RunFile(p), ++files;
    } else if (std::filesystem::is_regular_file(arg)) {
      RunFile(arg), ++files;
    } else {
      std::printf("skip %s (not found)\n", argv[i]);
    }
  }
  std::printf("replayed %d inputs\n", files);
  return 0;
}
