/// \file The last-error slot and the argument checks of the host calling convention, and the
/// device names of their messages.
#include "runtime/cinn_like_runtime.h"

#include <cstdint>
#include <sstream>
#include <string>

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

int cinn_like_check_num_args(const char* func, int32_t got, int32_t expected) {
  if (got == expected) return 0;
  std::ostringstream os;
  os << func << ": expected " << expected << " tensor arguments (inputs then outputs), got " << got;
  return Fail(os.str());
}

int cinn_like_check_tensor(const char* func, const DLTensor* t, int32_t index, const char* name,
                           int32_t dtype_code, int32_t dtype_bits, int32_t ndim,
                           int32_t device_type) {
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
    os << "has rank " << t->ndim << " (shape [";
    for (int i = 0; i < t->ndim; ++i) os << (i ? ", " : "") << t->shape[i];
    os << "]), expected rank " << ndim;
    return Fail(os.str());
  }
  if (t->device.device_type != device_type) {
    os << "is on " << cinn_like::runtime::DeviceName(t->device.device_type) << ", expected "
       << cinn_like::runtime::DeviceName(device_type);
    return Fail(os.str());
  }
  bool empty = false;
  for (int i = 0; i < t->ndim; ++i) empty |= t->shape[i] == 0;
  if (t->data == nullptr && !empty) return Fail(os.str() + "has null data");
  // An empty tensor has no element to lay out: any strides are dense (as PyTorch says).
  if (t->strides != nullptr && !empty) {
    int64_t expect = 1;
    for (int i = t->ndim - 1; i >= 0; --i) {
      if (t->shape[i] != 1 && t->strides[i] != expect) {
        os << "is not contiguous (stride " << t->strides[i] << " at dim " << i << ", expected "
           << expect << ")";
        return Fail(os.str());
      }
      expect *= t->shape[i];
    }
  }
  return 0;
}

void* cinn_like_tensor_data(const DLTensor* t) {
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

int cinn_like_check_index_range(const char* func, const char* tensor, int32_t dim, int64_t got) {
  if (got >= 0 && got <= INT32_MAX) return 0;
  std::ostringstream os;
  os << func << ": tensor " << tensor << " has size " << got << " at dim " << dim
     << ", outside the int32 index range this build supports";
  return Fail(os.str());
}

}  // extern "C"
