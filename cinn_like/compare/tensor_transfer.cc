/// \file DeviceTensor and ReadTensor: element encoding per dtype, strides, the CUDA copies.
#include "cinn_like/compare/tensor_transfer.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "hlir/op.h"
#include "ir/float16.h"
#include "runtime/cinn_like_runtime.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "runtime/cuda/cuda_runtime.h"
#endif

namespace cinn_like {
namespace {

/// Writes `v` (already representable in `t`, as HostTensor elements are) in `t`'s encoding.
void Store(char* p, const ir::Type& t, double v) {
  auto put = [p](auto x) { std::memcpy(p, &x, sizeof(x)); };
  if (t.is_float16()) return put(ir::FloatToHalfBits(ir::DoubleToFloatRoundToOdd(v)));
  if (t.is_bfloat16()) return put(ir::FloatToBFloat16Bits(ir::DoubleToFloatRoundToOdd(v)));
  if (t == ir::Float(32)) return put(static_cast<float>(v));
  if (t == ir::Float(64)) return put(v);
  if (t.is_bool()) return put(static_cast<uint8_t>(v != 0));
  uint64_t bits = static_cast<uint64_t>(static_cast<int64_t>(v));
  std::memcpy(p, &bits, t.bytes());  // little endian: the low bytes wrap
}

/// The element at `p` in `t`'s encoding, as a double.
double Load(const char* p, const ir::Type& t) {
  auto take = [p](auto x) {
    std::memcpy(&x, p, sizeof(x));
    return x;
  };
  if (t.is_float16()) return ir::HalfBitsToFloat(take(uint16_t{}));
  if (t.is_bfloat16()) return ir::BFloat16BitsToFloat(take(uint16_t{}));
  if (t == ir::Float(32)) return take(float{});
  if (t == ir::Float(64)) return take(double{});
  if (t.is_bool() || t.is_uint()) {
    uint64_t bits = 0;
    std::memcpy(&bits, p, t.bytes());
    return static_cast<double>(bits);
  }
  switch (t.bits()) {
    case 8:
      return take(int8_t{});
    case 16:
      return take(int16_t{});
    case 32:
      return take(int32_t{});
    default:
      return static_cast<double>(take(int64_t{}));
  }
}

#ifndef CINN_LIKE_WITH_CUDA
absl::Status NoCuda() {
  return absl::UnavailableError("CUDA tensors need the CUDA runtime, which this build lacks");
}
#endif

/// Copies `bytes` bytes of device memory at `src` to `dst` once the device is idle.
absl::Status CopyToHost(void* dst, const void* src, size_t bytes) {
#ifdef CINN_LIKE_WITH_CUDA
  if (cinn_like_cuda_synchronize() != 0 || cinn_like_cuda_memcpy_to_host(dst, src, bytes) != 0) {
    return absl::InternalError(
        absl::StrCat("copying a CUDA tensor to the host failed: ", cinn_like_get_last_error()));
  }
  return absl::OkStatus();
#else
  (void)dst, (void)src, (void)bytes;
  return NoCuda();
#endif
}

}  // namespace

DLDataType DLTypeOf(hlir::DType t) {
  ir::Type ty = hlir::ToIrType(t);
  if (ty.is_bool()) return {6, 8, 1};  // kDLBool, which DLPack 0.6 does not name
  if (ty.is_bfloat16()) return {kDLBfloat, 16, 1};
  if (ty.is_float()) return {kDLFloat, static_cast<uint8_t>(ty.bits()), 1};
  return {static_cast<uint8_t>(ty.is_int() ? kDLInt : kDLUInt), static_cast<uint8_t>(ty.bits()), 1};
}

DLDevice DeviceOf(const ir::Target& target) { return {target.is_nvgpu() ? kDLCUDA : kDLCPU, 0}; }

absl::StatusOr<std::unique_ptr<DeviceTensor>> DeviceTensor::Create(const hlir::HostTensor& host,
                                                                   DLDevice device) {
  if (device.device_type != kDLCPU && device.device_type != kDLCUDA) {
    return absl::UnimplementedError(
        absl::StrCat("tensors on device type ", device.device_type, " are not supported"));
  }
  auto out = std::unique_ptr<DeviceTensor>(new DeviceTensor());
  const ir::Type t = hlir::ToIrType(host.dtype);
  const size_t bytes = host.size() * t.bytes();
  out->host_bytes_.assign(bytes + 1, 0);  // + 1: never a null pointer
  for (int64_t i = 0; i < host.size(); ++i) {
    Store(out->host_bytes_.data() + i * t.bytes(), t, host.data[i]);
  }
  out->shape_ = host.shape;
  out->dl_.data = out->host_bytes_.data();
  out->dl_.device = device;
  out->dl_.ndim = static_cast<int32_t>(out->shape_.size());
  out->dl_.dtype = DLTypeOf(host.dtype);
  out->dl_.shape = out->shape_.data();
  if (device.device_type == kDLCPU) return out;
#ifdef CINN_LIKE_WITH_CUDA
  if (cinn_like_cuda_malloc(&out->device_data_, bytes) != 0 ||
      cinn_like_cuda_memcpy_to_device(out->device_data_, out->host_bytes_.data(), bytes) != 0) {
    return absl::InternalError(
        absl::StrCat("placing a ", host.Describe(),
                     " tensor on the CUDA device failed: ", cinn_like_get_last_error()));
  }
  out->dl_.data = out->device_data_;
  return out;
#else
  return NoCuda();
#endif
}

DeviceTensor::~DeviceTensor() {
#ifdef CINN_LIKE_WITH_CUDA
  if (device_data_ != nullptr) cinn_like_cuda_free(device_data_);
#endif
}

absl::StatusOr<hlir::HostTensor> ReadTensor(const DLTensor& t, hlir::DType dtype) {
  const DLDataType want = DLTypeOf(dtype);
  if (t.dtype.code != want.code || t.dtype.bits != want.bits || t.dtype.lanes != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("a tensor has DLPack dtype (code ", t.dtype.code, ", bits ", t.dtype.bits,
                     ", lanes ", t.dtype.lanes, "), expected ", hlir::DTypeName(dtype)));
  }
  if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDA) {
    return absl::UnimplementedError(
        absl::StrCat("a tensor is on device type ", t.device.device_type,
                     ", which the self-check cannot read (only cpu and cuda)"));
  }
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  hlir::HostTensor out(dtype, shape);
  if (out.size() == 0) return out;
  // Element offsets through the strides; lo..hi is the span they cover (a dim of size 1 may
  // have any stride, even a negative one).
  const std::vector<int64_t> dense = hlir::RowMajorStrides(shape);
  std::vector<int64_t> strides(t.ndim);
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < t.ndim; ++d) {
    strides[d] = t.strides ? t.strides[d] : dense[d];
    const int64_t reach = (shape[d] - 1) * strides[d];
    lo += std::min<int64_t>(0, reach);
    hi += std::max<int64_t>(0, reach);
  }
  const ir::Type ty = hlir::ToIrType(dtype);
  const char* first = static_cast<const char*>(t.data) + t.byte_offset + lo * ty.bytes();
  std::vector<char> staging;
  if (t.device.device_type == kDLCUDA) {
    staging.resize((hi - lo + 1) * ty.bytes());
    absl::Status copied = CopyToHost(staging.data(), first, staging.size());
    if (!copied.ok()) return copied;
    first = staging.data();
  }
  int64_t k = 0;
  hlir::ForEachIndex(shape, [&](const std::vector<int64_t>& index) {
    int64_t offset = -lo;
    for (int d = 0; d < t.ndim; ++d) offset += index[d] * strides[d];
    out.data[k++] = Load(first + offset * ty.bytes(), ty);
  });
  return out;
}

}  // namespace cinn_like
