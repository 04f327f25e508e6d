/// \file Fuzz target: the JSON form of a Program (frontend/program_json.h), as the C API takes it.
/// Any bytes in: ProgramFromJson returns a status and never crashes or throws; what it accepts
/// prints back to JSON that parses to the same text (the round trip), and BuildGraph (every op's
/// inference and attribute checks) returns a status on it.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "frontend/program.h"
#include "frontend/program_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cinn_like::frontend;
  std::string text(reinterpret_cast<const char*>(data), size);
  auto program = ProgramFromJson(text);
  if (!program.ok()) return 0;
  std::string json = ProgramToJson(*program);
  auto again = ProgramFromJson(json);
  if (!again.ok()) {
    std::fprintf(stderr, "round trip: the printed program does not parse: %s\n%s\n",
                 std::string(again.status().message()).c_str(), json.c_str());
    std::abort();
  }
  if (ProgramToJson(*again) != json) {
    std::fprintf(stderr, "round trip: the program prints differently after a parse\n%s\n%s\n",
                 json.c_str(), ProgramToJson(*again).c_str());
    std::abort();
  }
  (void)BuildGraph(*program);
  return 0;
}
