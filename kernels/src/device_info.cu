#include "device_info.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include "cuda_check.hpp"
#include "dcs/error.hpp"
#include "stream.hpp"

namespace dcs::cuda {
namespace {

/// Device count, or the runtime's reason for having none.
struct DeviceCount {
  int count = 0;
  std::string reason;
};

/// True when the NVIDIA kernel driver is loaded (its device nodes or /proc entry exist).
bool nvidia_driver_present() noexcept {
  return ::access("/dev/nvidiactl", F_OK) == 0 || ::access("/dev/nvidia0", F_OK) == 0 ||
         ::access("/proc/driver/nvidia/version", F_OK) == 0;
}

DeviceCount count_devices() noexcept {
  DeviceCount result;
  const cudaError_t status = cudaGetDeviceCount(&result.count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    result.count = 0;
    // Without a GPU the runtime finds no driver library and says cudaErrorInsufficientDriver
    // ("CUDA driver version is insufficient"), which reads like a broken install: on a machine
    // with no NVIDIA driver loaded that simply means no GPU.
    if (status == cudaErrorNoDevice ||
        (status == cudaErrorInsufficientDriver && !nvidia_driver_present()))
      result.reason = "no NVIDIA GPU found";
    else if (status == cudaErrorInsufficientDriver)
      result.reason =
          "the NVIDIA driver is older than this CUDA runtime "
          "(cudaErrorInsufficientDriver); update the driver";
    else
      result.reason = std::string("CUDA cannot list devices: ") + cudaGetErrorName(status) + ": " +
                      cudaGetErrorString(status);
  } else if (result.count == 0) {
    result.reason = "no NVIDIA GPU found";
  }
  return result;
}

}  // namespace

bool cuda_available() noexcept { return count_devices().count > 0; }

std::string cuda_unavailable_reason() { return count_devices().reason; }

std::vector<DeviceInfo> cuda_devices() {
  std::vector<DeviceInfo> devices;
  const DeviceCount count = count_devices();
  for (int ordinal = 0; ordinal < count.count; ++ordinal)
    devices.push_back(detail::query_device(ordinal));
  return devices;
}

namespace detail {

DeviceInfo query_device(int ordinal) {
  check_device_ordinal(ordinal);
  cudaDeviceProp properties{};
  DCS_CUDA_CHECK(cudaGetDeviceProperties(&properties, ordinal));
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = properties.name;
  info.compute_major = properties.major;
  info.compute_minor = properties.minor;
  info.multiprocessors = properties.multiProcessorCount;
  DCS_CUDA_CHECK(cudaDeviceGetAttribute(&info.clock_khz, cudaDevAttrClockRate, ordinal));
  info.memory_bytes = properties.totalGlobalMem;
  info.l2_bytes = static_cast<std::size_t>(properties.l2CacheSize);
  {
    ScopedDevice scoped(ordinal);
    std::size_t free_bytes = 0, total_bytes = 0;
    DCS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    info.free_bytes = free_bytes;
  }
  return info;
}

std::string describe_device(const DeviceInfo& device) {
  return device.name + " (cuda:" + std::to_string(device.ordinal) + ", sm_" +
         std::to_string(device.compute_major) + std::to_string(device.compute_minor) + ", " +
         std::to_string(device.multiprocessors) + " SMs)";
}

void check_device_ordinal(int ordinal) {
  const DeviceCount count = count_devices();
  if (count.count == 0)
    throw CudaError("cannot use cuda:" + std::to_string(ordinal) + ": " + count.reason);
  if (ordinal < 0 || ordinal >= count.count)
    throw UsageError("CUDA device " + std::to_string(ordinal) + " does not exist (" +
                     std::to_string(count.count) +
                     " visible: cuda:0..cuda:" + std::to_string(count.count - 1) + ")");
}

}  // namespace detail
}  // namespace dcs::cuda
