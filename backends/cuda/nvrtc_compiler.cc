/// \file The NVRTC driver: options, arch check, error log with quoted source lines.
#include "backends/cuda/nvrtc_compiler.h"

#include <glog/logging.h>
#include <nvrtc.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ir/compile_options.h"
#include "ir/flags.h"

namespace cinn_like::backends::nvrtc {
namespace {

/// Writes `text` to <FLAGS_cinn_like_source_save_path>/<file> (creating the folder) when that
/// flag is set, and to the dump dir when dumping is on.
void SaveAndDump(const std::string& file, const std::string& text) {
  SaveSourceFile(file, text);
  DumpToFile(file, text);
}

/// The line numbers of every "<program>(<LINE>): error" (and "catastrophic error") in an NVRTC
/// log; errors inside included headers are not lines of the program.
std::set<int> ErrorLines(const std::string& log, const std::string& program) {
  std::set<int> lines;
  for (absl::string_view entry : absl::StrSplit(log, '\n')) {
    for (size_t close = entry.find("): "); close != absl::string_view::npos;
         close = entry.find("): ", close + 1)) {
      absl::string_view rest = entry.substr(close + 3);
      if (!absl::StartsWith(rest, "error") && !absl::StartsWith(rest, "catastrophic error")) {
        continue;
      }
      size_t open = entry.rfind('(', close);
      if (open == absl::string_view::npos || open + 1 == close) break;
      if (!absl::EndsWith(entry.substr(0, open), program)) break;
      int line = 0;
      bool digits = true;
      for (size_t k = open + 1; k < close && digits; ++k) {
        digits = entry[k] >= '0' && entry[k] <= '9';
        line = line * 10 + (entry[k] - '0');
      }
      if (digits && line > 0) lines.insert(line);
      break;
    }
  }
  return lines;
}

/// "  3 | <text of line 3>\n" for each error line of the log that lies within `source`.
std::string QuoteErrorLines(const std::string& log, const std::string& program,
                            const std::string& source) {
  std::vector<absl::string_view> lines = absl::StrSplit(source, '\n');
  std::string out;
  for (int line : ErrorLines(log, program)) {
    if (line > static_cast<int>(lines.size())) continue;
    absl::StrAppend(&out, "  ", line, " | ", absl::StripSuffix(lines[line - 1], "\r"), "\n");
  }
  return out;
}

/// Destroys the program when it goes out of scope.
struct ProgramGuard {
  nvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program) nvrtcDestroyProgram(&program);
  }
};

}  // namespace

std::string Compiler::Version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return absl::StrCat(major, ".", minor);
}

std::vector<int> Compiler::SupportedArchs() {
  static std::once_flag once;
  static std::vector<int>* archs = new std::vector<int>();
  std::call_once(once, [] {
    int count = 0;
    if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return;
    archs->resize(count);
    if (nvrtcGetSupportedArchs(archs->data()) != NVRTC_SUCCESS) archs->clear();
    std::sort(archs->begin(), archs->end());
  });
  return *archs;
}

absl::Status Compiler::CheckArch(int arch, const std::string& origin) {
  std::vector<int> archs = SupportedArchs();
  if (std::find(archs.begin(), archs.end(), arch) != archs.end()) return absl::OkStatus();
  std::string range = archs.empty() ? std::string("NVRTC reports none")
                                    : absl::StrCat("sm_", archs.front(), " to sm_", archs.back());
  std::string from;
  if (!origin.empty()) {
    from = absl::StrCat(" (", absl::StartsWith(origin, "from ") ? "" : "from ", origin, ")");
  }
  return absl::InvalidArgumentError(absl::StrCat("CUDA arch sm_", arch, from,
                                                 " is not supported by NVRTC ", Version(),
                                                 " (supported: ", range, ")"));
}

absl::StatusOr<std::string> Compiler::Compile(const std::string& source, int arch, bool to_cubin,
                                              const std::string& name) {
  absl::Status arch_ok = CheckArch(arch, "the caller");
  if (!arch_ok.ok()) return arch_ok;
  const std::string program_name = name + ".cu";
  // Saved before compiling, so that source NVRTC rejects can be read too.
  SaveAndDump(program_name, source);

  ProgramGuard guard;
  nvrtcResult r =
      nvrtcCreateProgram(&guard.program, source.c_str(), program_name.c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) {
    return absl::InternalError(
        absl::StrCat("nvrtcCreateProgram(", program_name, ") failed: ", nvrtcGetErrorString(r)));
  }
  std::vector<std::string> options = {
      absl::StrCat("--gpu-architecture=", to_cubin ? "sm_" : "compute_", arch), "-std=c++17",
      "-default-device"};
  if (ir::CurrentCompileOptions().fast_math) options.push_back("--use_fast_math");
#ifdef CINN_LIKE_CUDA_INCLUDE_DIR
  options.push_back(absl::StrCat("--include-path=", CINN_LIKE_CUDA_INCLUDE_DIR));
#endif
  std::vector<const char*> option_ptrs;
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());
  r = nvrtcCompileProgram(guard.program, static_cast<int>(option_ptrs.size()), option_ptrs.data());

  if (r != NVRTC_SUCCESS) {
    std::string log;
    size_t log_size = 0;
    if (nvrtcGetProgramLogSize(guard.program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
      log.resize(log_size);
      nvrtcGetProgramLog(guard.program, log.data());
      log.resize(log_size - 1);  // the terminating NUL
    }
    while (!log.empty() && (log.back() == '\n' || log.back() == '\r')) log.pop_back();
    if (log.empty()) log = nvrtcGetErrorString(r);
    std::string quoted = QuoteErrorLines(log, program_name, source);
    while (!quoted.empty() && quoted.back() == '\n') quoted.pop_back();
    return absl::InvalidArgumentError(
        absl::StrCat("NVRTC failed to compile ", program_name, ":\n", log,
                     quoted.empty() ? "" : "\noffending source:\n", quoted));
  }

  std::string image;
  size_t size = 0;
  if (to_cubin) {
    r = nvrtcGetCUBINSize(guard.program, &size);
    if (r == NVRTC_SUCCESS) {
      image.resize(size);
      r = nvrtcGetCUBIN(guard.program, image.data());
    }
  } else {
    r = nvrtcGetPTXSize(guard.program, &size);
    if (r == NVRTC_SUCCESS) {
      image.resize(size);
      r = nvrtcGetPTX(guard.program, image.data());
      // The size counts the terminating NUL; the loader adds it back (std::string::c_str).
      while (!image.empty() && image.back() == '\0') image.pop_back();
    }
  }
  if (r != NVRTC_SUCCESS) {
    return absl::InternalError(absl::StrCat("reading the ", to_cubin ? "CUBIN" : "PTX", " of ",
                                            program_name,
                                            " from NVRTC failed: ", nvrtcGetErrorString(r)));
  }
  if (!to_cubin) SaveAndDump(name + ".ptx", image);
  return image;
}

}  // namespace cinn_like::backends::nvrtc
