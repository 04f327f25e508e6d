/// \file CIdentifier's rules and the reserved words they avoid.
#include "ir/identifier.h"

#include <cctype>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cinn_like::ir {
namespace {

/// Words a generated C/CUDA/OpenCL C translation unit cannot declare as its own names.
bool IsReserved(const std::string& s) {
  static const std::set<std::string>* const kWords = new std::set<std::string>{
      // C and C++ keywords and alternative tokens.
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char16_t", "char32_t", "char8_t", "class", "co_await", "co_return",
      "co_yield", "compl", "concept", "const", "const_cast", "consteval", "constexpr", "constinit",
      "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
      "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline",
      "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
      "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "restrict", "return", "short", "signed", "sizeof", "static", "static_assert",
      "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true", "try",
      "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
      "wchar_t", "while", "NULL",
      // Types and builtins of generated code and the CUDA/OpenCL headers it includes.
      "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
      "size_t", "half", "half2", "nv_bfloat16", "nv_bfloat162", "dim3", "threadIdx", "blockIdx",
      "blockDim", "gridDim", "warpSize", "std", "max", "min", "abs", "isnan", "isinf", "isfinite",
      "signbit", "make_float2", "make_float4",
      // C math functions (both precisions), which generated code calls by name.
      "exp", "expf", "exp2", "exp2f", "expm1", "expm1f", "log", "logf", "log2", "log2f", "log10",
      "log10f", "log1p", "log1pf", "sqrt", "sqrtf", "rsqrt", "rsqrtf", "cbrt", "cbrtf", "pow",
      "powf", "sin", "sinf", "cos", "cosf", "tan", "tanf", "asin", "asinf", "acos", "acosf", "atan",
      "atanf", "atan2", "atan2f", "sinh", "sinhf", "cosh", "coshf", "tanh", "tanhf", "asinh",
      "asinhf", "acosh", "acoshf", "atanh", "atanhf", "erf", "erff", "erfc", "erfcf", "erfinv",
      "erfinvf", "lgamma", "lgammaf", "tgamma", "tgammaf", "floor", "floorf", "ceil", "ceilf",
      "round", "roundf", "rint", "rintf", "trunc", "truncf", "fabs", "fabsf", "fmod", "fmodf",
      "fmax", "fmaxf", "fmin", "fminf", "copysign", "copysignf", "nextafter", "nextafterf", "hypot",
      "hypotf", "frexp", "frexpf", "ldexp", "ldexpf", "fma", "fmaf",
      // OpenCL C: address spaces and qualifiers, its own types, the builtins its printer calls.
      "global", "local", "constant", "private", "kernel", "generic", "read_only", "write_only",
      "read_write", "uniform", "pipe", "uchar", "ushort", "uint", "ulong", "sampler_t", "event_t",
      "image1d_t", "image1d_array_t", "image1d_buffer_t", "image2d_t", "image2d_array_t",
      "image3d_t", "barrier", "mem_fence", "nan", "select", "clamp", "mad", "native_exp",
      "get_global_id", "get_local_id", "get_group_id", "get_global_size", "get_local_size",
      "get_num_groups", "get_work_dim", "get_global_offset"};
  if (kWords->count(s) || absl::StartsWith(s, "__") || absl::StartsWith(s, "cinn_like_")) {
    return true;
  }
  // The C printers' own temporaries: bcast<n> (backends/cuda/codegen_cuda_vector.cc) and
  // cse_<n> (backends/common_subexpressions.h).
  for (const char* prefix : {"bcast", "cse_"}) {
    const std::string p = prefix;
    if (s.size() > p.size() && absl::StartsWith(s, p) &&
        s.find_first_not_of("0123456789", p.size()) == std::string::npos) {
      return true;
    }
  }
  // OpenCL C's conversion, reinterpretation and vector load/store builtins.
  for (const char* prefix : {"convert_", "as_", "vload", "vstore"}) {
    if (absl::StartsWith(s, prefix)) return true;
  }
  // CUDA's and OpenCL's vector types: char, uchar, short, ushort, int, uint, long, ulong,
  // longlong, ulonglong, half, float, double with 1 to 4, 8 or 16 lanes.
  static const char* const kVectorBases[] = {"char",      "uchar",  "short", "ushort", "int",
                                             "uint",      "long",   "ulong", "float",  "longlong",
                                             "ulonglong", "double", "half"};
  for (const char* base : kVectorBases) {
    for (const char* lanes : {"1", "2", "3", "4", "8", "16"}) {
      if (s == absl::StrCat(base, lanes)) return true;
    }
  }
  return false;
}

}  // namespace

std::string CIdentifier(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  if (IsReserved(out)) out = "v_" + out;
  return out;
}

std::string NameSupply::Unique(const std::string& name) {
  const std::string base = CIdentifier(name);
  std::string out = base;
  for (int k = 1; used_.count(out); ++k) out = absl::StrCat(base, "_", k);
  used_.insert(out);
  return out;
}

}  // namespace cinn_like::ir
