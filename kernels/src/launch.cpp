#include "launch.hpp"

#include "dcs/log.hpp"

namespace dcs::cuda::detail {

void log_launch(const char* kernel, const LaunchConfig& config) noexcept {
  try {
    log().debug("launch {}: grid ({}, {}, {}) block ({}, {}, {}) smem {} B", kernel, config.grid.x,
                config.grid.y, config.grid.z, config.block.x, config.block.y, config.block.z,
                config.smem);
  } catch (...) {
    // A failed debug line must not fail the launch.
  }
}

}  // namespace dcs::cuda::detail
