/// \file cinn_like_check_overlap: an output may share no memory with another argument. A
/// compiled function reads its inputs while it writes its outputs (a transpose in place would
/// read elements it has already overwritten), so an overlap is refused before anything runs.
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/cinn_like_runtime.h"

namespace {

/// The bytes a checked row-major tensor spans; `base` is what another tensor must share for
/// the two to overlap at all (OpenCL's data is a cl_mem handle, not an address: tensors of
/// different handles never overlap, and offsets compare within one handle).
struct Span {
  uintptr_t base = 0;
  uint64_t begin = 0, end = 0;
  int32_t index = 0;
  bool output = false;
};

bool MakeSpan(const DLTensor* t, int32_t index, bool output, Span* s) {
  uint64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= static_cast<uint64_t>(t->shape[i]);
  if (n == 0 || t->data == nullptr) return false;  // no element: nothing to overlap
  const uint64_t bytes = n * ((t->dtype.bits * t->dtype.lanes + 7) / 8);
  const bool handle = t->device.device_type == kDLOpenCL;
  s->base = handle ? reinterpret_cast<uintptr_t>(t->data) : 0;
  s->begin = (handle ? 0 : reinterpret_cast<uintptr_t>(t->data)) + t->byte_offset;
  s->end = s->begin + bytes;
  s->index = index;
  s->output = output;
  return true;
}

bool Overlap(const Span& a, const Span& b) {
  return a.base == b.base && a.begin < b.end && b.begin < a.end;
}

/// Names in "a,b,c" by position.
std::string NameAt(const char* names, int32_t index) {
  std::string all = names ? names : "";
  size_t start = 0;
  for (int32_t i = 0; i < index; ++i) {
    size_t comma = all.find(',', start);
    if (comma == std::string::npos) return "?";
    start = comma + 1;
  }
  return all.substr(start, all.find(',', start) - start);
}

int Refuse(const char* func, const char* names, const Span& a, const Span& b) {
  const Span& out = a.output ? a : b;
  const Span& other = a.output ? b : a;
  std::ostringstream os;
  os << func << ": output " << NameAt(names, out.index) << " (argument " << out.index
     << ") overlaps " << (other.output ? "output " : "input ") << NameAt(names, other.index)
     << " (argument " << other.index << ") in memory; the function reads its inputs while it "
     << "writes its outputs, so an output must share no memory with another argument (pass a "
     << "separate output buffer)";
  cinn_like_set_last_error(os.str().c_str());
  return -1;
}

}  // namespace

int cinn_like_check_overlap(const char* func, DLTensor* const* args, int32_t num_args,
                            const char* outputs, const char* names) {
  // Few arguments (the common case): every pair, nothing allocated.
  constexpr int32_t kPairwise = 16;
  Span small[kPairwise];
  std::vector<Span> large;
  Span* spans = small;
  if (num_args > kPairwise) {
    large.resize(num_args);
    spans = large.data();
  }
  int32_t n = 0;
  for (int32_t i = 0; i < num_args; ++i) {
    if (MakeSpan(args[i], i, outputs[i] == '1', &spans[n])) ++n;
  }
  if (n <= kPairwise) {
    for (int32_t i = 0; i < n; ++i) {
      for (int32_t j = i + 1; j < n; ++j) {
        if ((spans[i].output || spans[j].output) && Overlap(spans[i], spans[j])) {
          return Refuse(func, names, spans[i], spans[j]);
        }
      }
    }
    return 0;
  }
  // Many: sorted by (base, begin), each span against the furthest-reaching earlier span of its
  // base and the furthest-reaching earlier output; any overlapping pair with an output among
  // them meets one of the two.
  std::sort(spans, spans + n, [](const Span& a, const Span& b) {
    return a.base != b.base ? a.base < b.base : a.begin < b.begin;
  });
  const Span* reach = nullptr;      // of this base, the earlier span ending last
  const Span* reach_out = nullptr;  // the same among outputs
  for (int32_t i = 0; i < n; ++i) {
    const Span& s = spans[i];
    if (reach && reach->base != s.base) reach = reach_out = nullptr;
    if (reach_out && Overlap(*reach_out, s)) return Refuse(func, names, *reach_out, s);
    if (s.output && reach && Overlap(*reach, s)) return Refuse(func, names, *reach, s);
    if (!reach || s.end > reach->end) reach = &s;
    if (s.output && (!reach_out || s.end > reach_out->end)) reach_out = &s;
  }
  return 0;
}
