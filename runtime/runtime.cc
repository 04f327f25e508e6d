/// \file The last-error slot and the argument checks of the host calling convention, and the
/// device names of their messages.
#include "runtime/cinn_like_runtime.h"

#include <cstdint>
#include <sstream>
#include <string>

#include "runtime/call_hooks.h"
#include "runtime/device_name.h"

namespace {

thread_local std::string last_error;

int Fail(const std::string& message) {
  last_error = message;
  return -1;
}

const char* DTypeName(int code, int bits) {
  static thread_local std::string name;
  switch (code) {
    case kDLInt:
      name = "int" + std::to_string(bits);
      break;
    case kDLUInt:
      name = "uint" + std::to_string(bits);
      break;
    case kDLFloat:
      name = "float" + std::to_string(bits);
      break;
    case kDLBfloat:
      name = "bfloat" + std::to_string(bits);
      break;
    case 6:
      name = bits == 8 ? "bool" : "bool" + std::to_string(bits);
      break;  // kDLBool
    default:
      name = "dtype(code=" + std::to_string(code) + ", bits=" + std::to_string(bits) + ")";
  }
  return name.c_str();
}

/// "[2, 3]": `ndim` sizes, the first 16 at most; with `symbolic`, a negative size (one the
/// entry checks itself) as "?".
std::string SizesText(int32_t ndim, const int64_t* sizes, bool symbolic = false) {
  std::ostringstream os;
  os << "[";
  int shown = ndim < 16 ? ndim : 16;
  for (int i = 0; i < shown; ++i) {
    os << (i ? ", " : "");
    if (symbolic && sizes[i] < 0) {
      os << "?";
    } else {
      os << sizes[i];
    }
  }
  if (shown < ndim) os << ", ...";
  os << "]";
  return os.str();
}

/// The tensor's shape as SizesText.
std::string ShapeText(const DLTensor* t) { return SizesText(t->ndim, t->shape); }

/// Whether the sizes of a tensor whose dims are >= 0 multiply to at most `max_elements`.
bool FitsIndexRange(const DLTensor* t, int64_t max_elements) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) {
    if (__builtin_mul_overflow(n, t->shape[i], &n) || n > max_elements) return false;
  }
  return true;
}

/// For a tensor whose shape is valid (and fits the index range): the innermost dim whose
/// stride breaks the dense row-major layout, with the stride it should have in *expected;
/// -1 when the layout is dense (null strides say so; a dim of size 1 may have any stride).
int FirstNonRowMajorDim(const DLTensor* t, int64_t* expected) {
  if (t->strides == nullptr) return -1;
  int64_t expect = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] != 1 && t->strides[i] != expect) {
      *expected = expect;
      return i;
    }
    expect *= t->shape[i];
  }
  return -1;
}

/// Whether `t` passes cinn_like_check_tensor, checked without formatting or allocating.
bool TensorPasses(const DLTensor* t, int32_t dtype_code, int32_t dtype_bits, int32_t ndim,
                  int32_t device_type, int64_t max_elements, bool lazy = false) {
  if (t == nullptr || t->dtype.code != dtype_code || t->dtype.bits != dtype_bits ||
      t->dtype.lanes != 1 || t->ndim != ndim || (t->shape == nullptr && ndim != 0) ||
      t->device.device_type != device_type) {
    return false;
  }
  bool empty = false, negative = false;
  int64_t expect = 0;
  for (int i = 0; i < ndim; ++i) {
    empty |= t->shape[i] == 0;
    negative |= t->shape[i] < 0;
  }
  return !negative && (t->data != nullptr || empty || lazy) && FitsIndexRange(t, max_elements) &&
         (empty || FirstNonRowMajorDim(t, &expect) < 0);
}

/// The message of a tensor that failed TensorPasses: the first check that fails, named with the
/// function, the argument's index and name, what was expected and what was given. `dims` (the
/// expected sizes, -1 where symbolic; null where the caller has none) and `program_ndim` (the
/// Program's rank: 0 where the function holds a rank-0 value as one element) are for the
/// message of a wrong rank only.
int TensorError(const char* func, const DLTensor* t, int32_t index, const char* name,
                int32_t dtype_code, int32_t dtype_bits, int32_t ndim, int32_t device_type,
                int64_t max_elements, const int64_t* dims, int32_t program_ndim) {
  std::ostringstream os;
  os << func << ": argument " << index << " (" << name << ") ";
  if (t == nullptr) return Fail(os.str() + "is a null DLTensor");
  if (t->dtype.code != dtype_code || t->dtype.bits != dtype_bits || t->dtype.lanes != 1) {
    std::string want = DTypeName(dtype_code, dtype_bits);
    os << "has dtype " << DTypeName(t->dtype.code, t->dtype.bits);
    if (t->dtype.lanes != 1) os << "x" << t->dtype.lanes;
    os << ", expected " << want;
    return Fail(os.str());
  }
  if (t->ndim != ndim) {
    os << "has rank " << t->ndim;
    if (t->ndim == 0 || (t->shape != nullptr && t->ndim > 0)) {
      os << " (shape " << ShapeText(t) << ")";
    }
    os << ", expected ";
    if (program_ndim == 0 && ndim == 1) os << "rank 0 (shape []) or ";
    os << "rank " << ndim;
    if (dims != nullptr) os << " (shape " << SizesText(ndim, dims, /*symbolic=*/true) << ")";
    return Fail(os.str());
  }
  if (t->shape == nullptr && ndim > 0) {
    os << "has a null shape, expected " << ndim << " sizes";
    return Fail(os.str());
  }
  if (t->device.device_type != device_type) {
    os << "is on " << cinn_like::runtime::DeviceName(t->device.device_type) << ", expected "
       << cinn_like::runtime::DeviceName(device_type);
    return Fail(os.str());
  }
  bool empty = false;
  for (int i = 0; i < ndim; ++i) {
    if (t->shape[i] < 0) {
      os << "has size " << t->shape[i] << " at dim " << i << ", expected a size >= 0";
      return Fail(os.str());
    }
    empty |= t->shape[i] == 0;
  }
  if (t->data == nullptr && !empty) {
    os << "has null data, expected the address of its elements (shape " << ShapeText(t) << ")";
    return Fail(os.str());
  }
  if (!FitsIndexRange(t, max_elements)) {
    os << "has shape " << ShapeText(t) << ": more than " << max_elements
       << " elements, which this function's " << (max_elements > 2147483647 ? "64" : "32")
       << "-bit indexing cannot address";
    return Fail(os.str());
  }
  // An empty tensor has no element to lay out: any strides are dense (as PyTorch says).
  int64_t expect = 0;
  const int bad = empty ? -1 : FirstNonRowMajorDim(t, &expect);
  if (bad >= 0) {
    os << "is not contiguous (stride " << t->strides[bad] << " at dim " << bad << ", expected "
       << expect << ")";
    return Fail(os.str());
  }
  return Fail(os.str() + "failed a check that names no cause (a bug of cinn_like)");
}

}  // namespace

namespace cinn_like::runtime {

std::string DeviceName(int32_t device_type) {
  switch (device_type) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda";
    default:
      return "device type " + std::to_string(device_type);
  }
}

}  // namespace cinn_like::runtime

extern "C" {

const char* cinn_like_get_last_error(void) { return last_error.c_str(); }
void cinn_like_set_last_error(const char* message) { last_error = message ? message : ""; }
void cinn_like_clear_last_error(void) { last_error.clear(); }

int cinn_like_check_args(const char* func, DLTensor* const* args, int32_t got, int32_t expected) {
  if (got == expected && (args != nullptr || expected == 0)) return 0;
  std::ostringstream os;
  os << func << ": expected " << expected << " tensor arguments (inputs then outputs), got ";
  if (got != expected) {
    os << got;
  } else {
    os << "a null argument array";
  }
  return Fail(os.str());
}

int cinn_like_check_tensor(const char* func, const DLTensor* t, int32_t index, const char* name,
                           int32_t dtype_code, int32_t dtype_bits, int32_t ndim,
                           int32_t device_type, int64_t max_elements) {
  // Every message is built in TensorError, once a check has failed.
  if (TensorPasses(t, dtype_code, dtype_bits, ndim, device_type, max_elements)) return 0;
  return TensorError(func, t, index, name, dtype_code, dtype_bits, ndim, device_type, max_elements,
                     nullptr, ndim);
}

int cinn_like_check_arguments(const char* func, DLTensor* const* args, int32_t num_args,
                              const cinn_like_argument_desc* descs, const int64_t* dims,
                              void** data) {
  for (int32_t i = 0; i < num_args; ++i) {
    const cinn_like_argument_desc& d = descs[i];
    const DLTensor* t = args[i];
    // The function holds a Program's rank-0 value as one element (its dim 1, nothing to
    // check): a rank-0 tensor, the Program's own form, holds that element as well.
    const int32_t ndim = d.program_ndim == 0 && t != nullptr && t->ndim == 0 ? 0 : d.ndim;
    // An output of null data is allocated by the entry where the caller set an allocator.
    const bool lazy = d.output != 0 && cinn_like::runtime::OutputAllocatorSet();
    if (!TensorPasses(t, d.dtype_code, d.dtype_bits, ndim, d.device_type, d.max_elements, lazy)) {
      return TensorError(func, t, i, d.name, d.dtype_code, d.dtype_bits, ndim, d.device_type,
                         d.max_elements, dims, d.program_ndim);
    }
    for (int32_t k = 0; k < ndim; ++k) {
      if (dims[k] < 0) continue;
      int rc = cinn_like_check_dim(func, d.name, k, t->shape[k], dims[k]);
      if (rc != 0) return rc;
    }
    dims += d.ndim;
    data[i] = cinn_like_tensor_data(t);
  }
  return 0;
}

void* cinn_like_tensor_data(const DLTensor* t) {
  if (t->data == nullptr) return nullptr;  // an empty tensor's (no offset into nothing)
  return static_cast<char*>(t->data) + t->byte_offset;
}

int64_t cinn_like_tensor_dim(const DLTensor* t, int32_t dim) { return t->shape[dim]; }

int cinn_like_check_dim(const char* func, const char* tensor, int32_t dim, int64_t got,
                        int64_t expected) {
  if (got == expected) return 0;
  std::ostringstream os;
  os << func << ": tensor " << tensor << " has size " << got << " at dim " << dim << ", expected "
     << expected;
  return Fail(os.str());
}

int cinn_like_check_symbolic_dim(const char* func, const char* tensor, int32_t dim, int64_t got,
                                 int64_t expected, const char* what) {
  if (got == expected) return 0;
  std::ostringstream os;
  os << func << ": tensor " << tensor << " has size " << got << " at dim " << dim << ", expected "
     << expected << " = " << what;
  return Fail(os.str());
}

int cinn_like_check_size_fits(const char* func, const char* what, int32_t fits, int64_t value,
                              int64_t max) {
  if (fits) return 0;
  std::ostringstream os;
  os << func << ": " << what << " ";
  if (value < 0 || value > max) {
    os << "is " << value << " (or overflows 64 bits)";
  } else {
    os << "overflows 64 bits";
  }
  os << " at these sizes; the function addresses at most " << max << " elements";
  return Fail(os.str());
}

int cinn_like_check_size_range(const char* func, const char* tensor, int32_t dim, int64_t got,
                               const char* symbol, int64_t min, int64_t max, const char* why) {
  if (got >= min && got <= max) return 0;
  std::ostringstream os;
  os << func << ": tensor " << tensor << " has size " << got << " at dim " << dim << ", which sets "
     << symbol << "; " << symbol << " must be";
  if (min > 0) os << " >= " << min;
  if (min > 0 && max < INT32_MAX) os << " and";
  if (max < INT32_MAX) os << " <= " << max;
  if (why && *why) os << ": " << why;
  return Fail(os.str());
}

int cinn_like_check_index_range(const char* func, const char* tensor, int32_t dim, int64_t got) {
  if (got >= 0 && got <= INT32_MAX) return 0;
  std::ostringstream os;
  os << func << ": tensor " << tensor << " has size " << got << " at dim " << dim
     << ", outside the int32 index range this build supports";
  return Fail(os.str());
}

}  // extern "C"
