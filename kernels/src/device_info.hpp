// Device queries behind cuda_available(), cuda_devices() and the backend's device_name().
#pragma once

#include <string>

#include "dcs/cuda/cuda_backend.hpp"

namespace dcs::cuda::detail {

/// Properties of device `ordinal`; throws CudaError when it cannot be queried.
DeviceInfo query_device(int ordinal);

/// "NVIDIA H200 (cuda:0, sm_90, 132 SMs)".
std::string describe_device(const DeviceInfo& device);

/// Throws UsageError naming the visible devices when `ordinal` is not one of them.
void check_device_ordinal(int ordinal);

}  // namespace dcs::cuda::detail
