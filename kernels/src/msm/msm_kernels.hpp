// The MSM slab kernel's launch wrapper (plain C++; msm_kernels.cu holds the kernel).
#pragma once

#include <cstddef>
#include <cstdint>

#include "stream.hpp"

namespace dcs::cuda::detail {

/// Tiles of map points: 8 x 8 x 8 points per block of 8 x 8 x 2 threads, each thread 4 points
/// strided in z. Tiles sit on a fixed global lattice (z tiles start at multiples of 8 planes),
/// so a point's value never depends on the slab that computes it.
inline constexpr int kMsmTileX = 8, kMsmTileY = 8, kMsmTileZ = 8;
inline constexpr int kMsmThreadsZ = 2;
inline constexpr int kMsmPointsPerThread = kMsmTileZ / kMsmThreadsZ;
inline constexpr int kMsmThreads = kMsmTileX * kMsmTileY * kMsmThreadsZ;  // 128
/// Atoms staged in shared memory per pass (float4 each, relative to the tile's first point).
inline constexpr int kMsmChunkAtoms = 256;

/// An atom in its bin, as uploaded: Å and e (doubles, so a tile's float offsets are exact to
/// float rounding of the offset, whatever the box size).
struct alignas(32) MsmAtom {
  double x, y, z, q;
};

struct MsmSlabLaunch {
  // Bins and atoms.
  const MsmAtom* d_atoms = nullptr;
  const std::uint32_t* d_bin_start = nullptr;  ///< bins + 1 offsets
  double bin_lower[3] = {0, 0, 0};
  double bin_side = 0.0;
  int bins[3] = {0, 0, 0};
  // The short-range pair term: q [rsqrt(max(r2, min_r2)) - sum_n poly[n] (r2/a2 - 1)^n].
  int split = 2;       ///< the polynomial's degree k (1..6)
  float poly[7] = {};  ///< gamma's coefficients divided by a
  float a2 = 0.0f, inv_a2 = 0.0f, min_r2 = 0.0f;
  double cutoff = 0.0;  ///< a, for the bins' pruning (double)
  // The finest lattice and the per-axis interpolation weights.
  const double* d_lattice = nullptr;
  int lattice_n[3] = {0, 0, 0};
  int order = 4;
  const int* d_base[3] = {nullptr, nullptr, nullptr};        ///< first lattice index - lattice lo
  const double* d_weights[3] = {nullptr, nullptr, nullptr};  ///< `order` per grid coordinate
  // The map and the slab.
  double origin[3] = {0, 0, 0};
  double spacing[3] = {0, 0, 0};
  int nx = 0, ny = 0, nz = 0;
  int z_begin = 0, z_count = 0;
  double factor = 0.0;
  float* d_out = nullptr;  ///< the slab, x fastest
};

/// Every point of planes [z_begin, z_begin + z_count): factor * (short + long range).
void launch_msm_slab(const MsmSlabLaunch& launch, StreamView stream);

}  // namespace dcs::cuda::detail
