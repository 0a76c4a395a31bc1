// Launch shapes and the debug log line every launch wrapper writes (private to dcs::cuda).
// Kernels are reached only through host wrappers that take plain types, a LaunchConfig they
// compute themselves and a StreamView; the backend never writes <<<>>>.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace dcs::cuda::detail {

struct LaunchConfig {
  dim3 grid;
  dim3 block;
  std::size_t smem = 0;  ///< dynamic shared memory in bytes
};

/// Logs a launch shape at debug level (launch.cpp: spdlog stays out of .cu files).
void log_launch(const char* kernel, const LaunchConfig& config) noexcept;

/// Blocks needed to cover `count` items with `per_block` items per block.
constexpr unsigned blocks_for(long long count, long long per_block) {
  return static_cast<unsigned>((count + per_block - 1) / per_block);
}

}  // namespace dcs::cuda::detail
