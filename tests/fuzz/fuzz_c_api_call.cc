/// \file Fuzz target: calling compiled functions through the C API (cinn_like_call) with the
/// DLTensor descriptors a careless or hostile host might pass. A few small Programs are compiled
/// once; the bytes pick one, the argument count and array, and for each argument a null pointer or
/// a descriptor that starts as the right one and is then bent: rank (negative, larger), a null
/// shape, dims negative or huge, dtype code, bits and lanes, device, strides, byte offset, a null
/// data pointer. The call must return 0 or an error, never crash. Descriptors never lie about
/// memory they own: shape and strides arrays hold ndim entries, and data holds every element the
/// shape claims (with room for the byte offset) whenever that is at most 1 MiB; a larger claim
/// passes null data, which the callee must refuse (a negative dim gets a small buffer).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cinn_like/c_api.h"
#include "frontend/net_builder.h"
#include "frontend/program_json.h"
#include "ir/flags.h"
#include "tests/fuzz/fuzz_input.h"

namespace cinn_like::fuzz {
namespace {

using frontend::NetBuilder;
using hlir::Dim;
using hlir::DType;

/// One compiled entry and the descriptors its arguments should have (symbolic dims as -1).
struct Entry {
  cinn_like_module module = nullptr;  // kept for the process's life
  cinn_like_function fn = nullptr;
  struct Arg {
    DLDataType dtype;
    std::vector<int64_t> shape;
  };
  std::vector<Arg> args;
};

DLDataType DLType(DType t) {
  switch (t) {
    case DType::kBool:
      return {6, 8, 1};  // kDLBool (newer than this DLPack header)
    case DType::kFloat16:
      return {kDLFloat, 16, 1};
    case DType::kBFloat16:
      return {kDLBfloat, 16, 1};
    case DType::kFloat32:
      return {kDLFloat, 32, 1};
    case DType::kFloat64:
      return {kDLFloat, 64, 1};
    case DType::kUInt8:
      return {kDLUInt, 8, 1};
    default:
      return {kDLInt, static_cast<uint8_t>(hlir::DTypeBits(t)), 1};
  }
}

Entry Compile(const frontend::Program& program) {
  std::string json = frontend::ProgramToJson(program);
  Entry e;
  if (cinn_like_compile(json.c_str(), "x86", "f", &e.module) != 0) {
    std::fprintf(stderr, "fuzz_c_api_call: a fixed program does not compile: %s\n%s\n",
                 cinn_like_get_last_error(), json.c_str());
    std::abort();
  }
  cinn_like_module_lookup(e.module, "f", &e.fn);
  auto graph = frontend::BuildGraph(program);
  std::vector<int> ids = graph->inputs();
  ids.insert(ids.end(), graph->outputs().begin(), graph->outputs().end());
  for (int id : ids) {
    const hlir::TensorDesc& d = graph->values()[id].desc;
    Entry::Arg a{DLType(d.dtype), {}};
    for (const Dim& dim : d.shape) a.shape.push_back(dim.is_symbolic() ? -1 : dim.value);
    e.args.push_back(a);
  }
  return e;
}

/// add with broadcasting over a symbolic dim; a reduction of int32 over a symbolic dim; a
/// one-element tensor times a float16 tensor; a program with no input (arange); a cast of bool to
/// float64.
const std::vector<Entry>& Entries() {
  // Never destroyed: the modules stay reachable, so leak checking at exit sees no leak.
  static const auto* entries = new std::vector<Entry>([] {
    std::vector<Entry> out;
    {
      NetBuilder b;
      auto x = b.CreateInput(DType::kFloat32, {Dim::Symbol("n"), Dim::Known(4)}, "x");
      auto y = b.CreateInput(DType::kFloat32, hlir::MakeShape({4}), "y");
      b.MarkOutput(b.Add(x, y));
      out.push_back(Compile(*b.Build()));
    }
    {
      NetBuilder b;
      auto x = b.CreateInput(DType::kInt32, {Dim::Known(3), Dim::Symbol("m")}, "x");
      b.MarkOutput(b.Op("reduce_sum", {x}, {{"axes", std::vector<int64_t>{1}}})[0]);
      out.push_back(Compile(*b.Build()));
    }
    {
      NetBuilder b;
      auto s = b.CreateInput(DType::kFloat16, hlir::MakeShape({1}), "s");  // rank 0: unsupported
      auto x = b.CreateInput(DType::kFloat16, hlir::MakeShape({2, 3, 5}), "x");
      b.MarkOutput(b.Op("mul", {s, x})[0]);
      out.push_back(Compile(*b.Build()));
    }
    {
      NetBuilder b;
      b.MarkOutput(b.Op("arange", {}, {{"end", 10.0}, {"step", 3.0}})[0]);
      out.push_back(Compile(*b.Build()));
    }
    {
      NetBuilder b;
      auto x = b.CreateInput(DType::kBool, {Dim::Symbol("n"), Dim::Symbol("m")}, "x");
      b.MarkOutput(b.Op("cast", {x}, {{"dtype", std::string("float64")}})[0]);
      out.push_back(Compile(*b.Build()));
    }
    return out;
  }());
  return *entries;
}

const std::vector<int64_t> kDims = {0,
                                    1,
                                    2,
                                    3,
                                    4,
                                    5,
                                    7,
                                    -1,
                                    -2,
                                    int64_t{1} << 31,
                                    (int64_t{1} << 31) - 1,
                                    int64_t{1} << 32,
                                    int64_t{1} << 62,
                                    std::numeric_limits<int64_t>::max(),
                                    std::numeric_limits<int64_t>::min()};

/// One argument's descriptor and the memory it points at.
struct Arg {
  DLTensor t{};
  std::vector<int64_t> shape, strides;
  std::vector<char> data;
};

/// The bytes the shape claims, or -1 when a dim is negative, -2 when the claim is over 1 MiB
/// (or overflows).
int64_t ClaimedBytes(const Arg& a, int64_t element_bytes) {
  int64_t n = 1;
  bool empty = false, negative = false;
  for (int64_t d : a.shape) {
    empty |= d == 0;
    negative |= d < 0;
  }
  if (negative) return -1;
  if (empty) return 0;
  for (int64_t d : a.shape) {
    if (d > (int64_t{1} << 20) || n > (int64_t{1} << 20) / d) return -2;
    n *= d;
  }
  return n * element_bytes > (int64_t{1} << 20) ? -2 : n * element_bytes;
}

/// Whether FUZZ_AVOID (a comma-separated list) names `what`: a known crash class (args_null,
/// shape_null) left out so that fuzzing reaches past it until it is fixed.
bool Avoid(const char* what) {
  static const std::string avoid = std::getenv("FUZZ_AVOID") ? std::getenv("FUZZ_AVOID") : "";
  return ("," + avoid + ",").find(std::string(",") + what + ",") != std::string::npos;
}

void MakeArg(const Entry::Arg& want, FuzzInput& in, Arg& a) {
  int64_t sym = in.Range(0, 6);
  // The right descriptor, dims bound to a small size or a fuzzed one.
  a.shape = want.shape;
  for (int64_t& d : a.shape) {
    if (d < 0) d = sym;
  }
  a.t.dtype = want.dtype;
  a.t.device = {kDLCPU, 0};
  int32_t ndim = static_cast<int32_t>(a.shape.size());
  // The bends.
  if (in.OneIn(6)) {
    ndim = static_cast<int32_t>(in.OneIn(4) ? in.Pick(std::vector<int64_t>{-1, -2, INT32_MIN})
                                            : in.Range(0, 9));
    a.shape.resize(std::max(ndim, 0), 1);
  }
  for (int64_t& d : a.shape) {
    if (in.OneIn(8)) d = in.Pick(kDims);
  }
  if (in.OneIn(8)) a.t.dtype.code = in.Byte();
  if (in.OneIn(8)) a.t.dtype.bits = in.Byte();
  if (in.OneIn(10)) a.t.dtype.lanes = static_cast<uint16_t>(in.Bits(2));
  if (in.OneIn(10)) {  // values of this DLPack's enum only: another value is UB to load in C++
    a.t.device.device_type = in.Pick(std::vector<DLDeviceType>{
        kDLCPU, kDLCUDA, kDLCUDAHost, kDLOpenCL, kDLVulkan, kDLMetal, kDLROCM, kDLExtDev});
  }
  if (in.OneIn(10)) a.t.device.device_id = static_cast<int32_t>(in.Bits(4));
  if (in.OneIn(4)) {  // strides: dense, or bent
    a.strides.assign(a.shape.size(), 1);
    for (int i = static_cast<int>(a.shape.size()) - 2; i >= 0; --i) {
      a.strides[i] = static_cast<int64_t>(static_cast<uint64_t>(a.strides[i + 1]) *
                                          static_cast<uint64_t>(a.shape[i + 1]));  // may wrap
    }
    for (int64_t& s : a.strides) {
      if (in.OneIn(4)) s = in.Pick(kDims);
    }
  }
  a.t.byte_offset = in.OneIn(8) ? static_cast<uint64_t>(in.Range(0, 64)) : 0;
  int64_t element_bytes =
      std::max<int64_t>(8, (int64_t{a.t.dtype.bits} * std::max<int>(a.t.dtype.lanes, 1) + 7) / 8);
  int64_t claimed = ClaimedBytes(a, element_bytes);
  if (claimed != -2 && !in.OneIn(16)) {
    a.data.assign(static_cast<size_t>(std::max<int64_t>(claimed, 64) + 64), 0);
  }
  a.t.ndim = ndim;
  a.t.shape = (ndim != 0 && in.OneIn(16) && !Avoid("shape_null")) ? nullptr : a.shape.data();
  a.t.strides = a.strides.empty() ? nullptr : a.strides.data();
  a.t.data = a.data.empty() ? nullptr : a.data.data();
}

/// The call on stderr (FUZZ_VERBOSE=1), to say what a crasher passes.
void Describe(const Entry& entry, cinn_like_function fn, DLTensor** list, int32_t num_args,
              const std::vector<DLTensor*>& pointers, const std::vector<Arg>& args) {
  std::fprintf(stderr, "call entry %d (%zu args)%s: num_args %d, args %s\n",
               static_cast<int>(&entry - Entries().data()), entry.args.size(), fn ? "" : " fn null",
               num_args, list ? "" : "null");
  for (size_t i = 0; list && i < pointers.size(); ++i) {
    if (!pointers[i]) {
      std::fprintf(stderr, "  [%zu] null\n", i);
      continue;
    }
    const DLTensor& t = args[i].t;
    std::string dims;
    for (int64_t d : args[i].shape) dims += std::to_string(d) + " ";
    std::fprintf(stderr,
                 "  [%zu] ndim %d shape %s[%s] dtype %d/%d/%d device %d:%d strides %s data %s "
                 "offset %llu\n",
                 i, t.ndim, t.shape ? "" : "null ", dims.c_str(), t.dtype.code, t.dtype.bits,
                 t.dtype.lanes, t.device.device_type, t.device.device_id,
                 t.strides ? "set" : "null", t.data ? "set" : "null",
                 static_cast<unsigned long long>(t.byte_offset));
  }
}

void RunOne(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  const Entry& entry = in.Pick(Entries());
  const int32_t expected = static_cast<int32_t>(entry.args.size());
  int32_t num_args = in.OneIn(8) ? static_cast<int32_t>(in.Range(-2, expected + 2)) : expected;
  std::vector<Arg> args(static_cast<size_t>(std::max(num_args, 0)));
  std::vector<DLTensor*> pointers;
  for (size_t i = 0; i < args.size(); ++i) {
    if (in.OneIn(16)) {
      pointers.push_back(nullptr);
      continue;
    }
    MakeArg(entry.args[i % entry.args.size()], in, args[i]);
    pointers.push_back(&args[i].t);
  }
  int stream_object = 0;
  void* stream = in.OneIn(8) ? &stream_object : nullptr;
  DLTensor** list =
      (pointers.empty() || (in.OneIn(16) && !Avoid("args_null"))) ? nullptr : pointers.data();
  cinn_like_function fn = in.OneIn(32) ? nullptr : entry.fn;
  if (std::getenv("FUZZ_VERBOSE")) Describe(entry, fn, list, num_args, pointers, args);
  if (cinn_like_call(fn, list, num_args, stream) != 0) {
    (void)std::strlen(cinn_like_get_last_error());
  }
}

}  // namespace
}  // namespace cinn_like::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FLAGS_cinn_like_cache = false;  // every input compiled: a cache hit would skip what is fuzzed
  cinn_like::fuzz::Entries();     // compiled before the first input
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cinn_like::fuzz::RunOne(data, size);
  return 0;
}
