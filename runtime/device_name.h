/// \file How the runtime's error messages name a DLPack device type.
#pragma once

#include <cstdint>
#include <string>

namespace cinn_like::runtime {

/// "cpu", "cuda", or "device type <n>" for any other DLDeviceType.
std::string DeviceName(int32_t device_type);

}  // namespace cinn_like::runtime
