// Public, plain-C++ face of the CUDA backend (no CUDA types). In a build without CUDA the same
// functions exist: cuda_available() returns false and make_cuda_backend() throws.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/variants.hpp"

namespace dcs::cuda {

/// True when dcs was built with CUDA and at least one usable device is visible.
bool cuda_available() noexcept;

/// Why cuda_available() is false ("built without CUDA", "no CUDA device: <driver message>"),
/// empty when it is true.
std::string cuda_unavailable_reason();

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
  int clock_khz = 0;             ///< SM clock
  std::size_t memory_bytes = 0;  ///< total global memory
  std::size_t free_bytes = 0;    ///< free global memory when queried
  std::size_t l2_bytes = 0;
};

/// Visible devices (empty without CUDA or without devices).
std::vector<DeviceInfo> cuda_devices();

/// The CUDA backend on device options.device; throws CudaError when unusable and UsageError
/// for an unknown --kernel/--reduction name.
std::unique_ptr<PotentialBackend> make_cuda_backend(const BackendOptions& options);

/// The registry of potential kernels (the first default), for --kernel and `dcs kernels`.
std::vector<VariantInfo> cuda_kernel_variants();
/// The registry of reduction variants (the default marked), for --reduction and `dcs kernels`.
std::vector<VariantInfo> cuda_reduction_variants();

}  // namespace dcs::cuda
