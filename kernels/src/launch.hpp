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

/// The blocks of a tile kernel's slab: tiles of `tile` points on the map's fixed lattice of
/// tiles, every x and y tile of the plane, and in z the tiles that hold the slab's planes, the
/// first of them tile_z_first (so a point's tile is the same whatever the slab).
struct TileGrid {
  dim3 grid;
  int tile_z_first = 0;
};

/// The TileGrid of planes [z_begin, z_begin + z_count) of an nx x ny x nz map. Refuses planes
/// outside the map (InternalError naming `launcher`) and a plane or slab one launch cannot cover
/// (UsageError naming `who`, the backend).
TileGrid slab_tile_grid(const char* launcher, const char* who, int nx, int ny, int nz, int z_begin,
                        int z_count, dim3 tile);

/// Blocks needed to cover `count` items with `per_block` items per block.
constexpr unsigned blocks_for(long long count, long long per_block) {
  return static_cast<unsigned>((count + per_block - 1) / per_block);
}

}  // namespace dcs::cuda::detail
