// Devices: which backend a --device request selects, and the backend factory (a flat list:
// CPU reference, CPU fast, CUDA).
#pragma once

#include <memory>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/pipeline/run_config.hpp"

namespace dcs {

struct DeviceChoice {
  BackendKind kind = BackendKind::CpuFast;
  std::vector<int> ordinals{0};  ///< CUDA devices, one worker each
};

/// Resolves a request against the devices present: auto and cuda take every visible GPU (auto
/// falls back to the CPU, and a CPU kernel name selects the CPU). Throws UsageError for cuda
/// when no GPU is usable (saying why) and for ordinals beyond the visible devices.
DeviceChoice resolve_device(const DeviceRequest& request, const BackendOptions& options);

/// Creates a backend. With kind CpuFast and options.kernel == "reference" the float64
/// reference backend is returned.
std::unique_ptr<PotentialBackend> make_backend(BackendKind kind, const BackendOptions& options);

}  // namespace dcs
