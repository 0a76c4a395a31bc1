#include "launch.hpp"

#include <string>

#include "dcs/error.hpp"
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

TileGrid slab_tile_grid(const char* launcher, const char* who, int nx, int ny, int nz, int z_begin,
                        int z_count, dim3 tile) {
  if (z_count < 1 || z_begin < 0 || z_begin + z_count > nz)
    throw InternalError(std::string(launcher) + ": planes [" + std::to_string(z_begin) + ", " +
                        std::to_string(z_begin + z_count) + ") outside the grid");
  const auto tx = static_cast<int>(tile.x), ty = static_cast<int>(tile.y);
  const auto tz = static_cast<int>(tile.z);
  TileGrid t;
  t.tile_z_first = z_begin / tz;
  const int tile_z_last = (z_begin + z_count - 1) / tz;
  t.grid = dim3((nx + tx - 1) / tx, (ny + ty - 1) / ty, tile_z_last - t.tile_z_first + 1);
  if (t.grid.y > 65535u || t.grid.z > 65535u)
    throw UsageError(std::string(who) + ": a grid of " + std::to_string(ny) +
                     " rows or a slab of " + std::to_string(z_count) +
                     " planes is more than one launch covers");
  return t;
}

}  // namespace dcs::cuda::detail
