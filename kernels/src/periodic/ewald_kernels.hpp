// The periodic (Ewald) method's device steps, as plain C++ launch wrappers (the .cu files of
// kernels/src/periodic hold the kernels): the images of the atoms near the region of work
// binned in space (ghost_atoms.cu), smooth PME's charge mesh and its convolution with cuFFT
// (pme_mesh.cu), and the sums at map points and at arbitrary points (ewald_sums.cu).
// Private to dcs::cuda.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stream.hpp"

namespace dcs::cuda::detail {

/// An image of an atom in its bin: position (Å, double so that a tile's float offsets are exact
/// to float rounding whatever the box), charge, and `own`: the atom's index for its home image
/// (fractional coordinates in [0, 1)), kGhost for every other image. A point at an atom leaves
/// out the home image of that atom only (the CPU real-space sum's rule).
struct alignas(32) EwaldAtom {
  double x, y, z;
  float q;
  std::uint32_t own;
};
inline constexpr std::uint32_t kGhost = 0xffffffffu;

/// The cell: rows a, b, c (Å) and the reciprocal rows a*, b*, c* (a·a* = 1, no 2π).
struct CellRows {
  double v[3][3] = {};
  double star[3][3] = {};
};

/// The binned images: bins of side `side` from `lower`, n[0] x n[1] x n[2], x fastest.
struct EwaldBins {
  const EwaldAtom* d_atoms = nullptr;
  const std::uint32_t* d_start = nullptr;  ///< bins + 1 offsets
  double lower[3] = {0, 0, 0};
  double side = 1.0;
  int n[3] = {1, 1, 1};
};

/// The convolved PME mesh (φ_rec at the mesh points, k3 fastest) and how points read it.
struct PmeRead {
  const double* d_mesh = nullptr;
  int k[3] = {0, 0, 0};
  int order = 6;
  CellRows cell;
};

/// The real-space pair term q erfc(beta r) / r for r below the cutoff, r clamped at min_r2.
struct RealTerm {
  float beta = 0.0f, cutoff2 = 0.0f, min_r2 = 0.0f;
  double cutoff = 0.0;  ///< for the bins' pruning (double)
};

/// One slab of a map: points origin + i step[0] + j step[1] + k step[2] (the grid's step
/// vectors: triclinic-ready), values factor (real + reciprocal + background) into d_out.
struct EwaldSlabLaunch {
  EwaldBins bins;
  PmeRead pme;
  RealTerm term;
  double origin[3] = {0, 0, 0};
  double step[3][3] = {};
  int nx = 0, ny = 0, nz = 0;
  int z_begin = 0, z_count = 0;
  double background = 0.0;  ///< −π Q / (β² V), e/Å
  double factor = 0.0;      ///< the Coulomb factor of the physics
  float* d_out = nullptr;   ///< the slab, x fastest
};

/// Points anywhere (wrapped into the cell first), each with the atom it skips (kGhost: none):
/// a skipped atom's home image is left out, its distances are not clamped (as the CPU's
/// at-atoms sum) and self · q_atom is added (the Ewald self term, so ½ Σ q φ is the energy).
struct EwaldPointsLaunch {
  EwaldBins bins;
  PmeRead pme;
  RealTerm term;
  const double* d_points = nullptr;  ///< x, y, z per point
  const std::uint32_t* d_skip = nullptr;
  const double* d_charges = nullptr;  ///< e, in input order (the self term's q)
  std::size_t n = 0;
  double background = 0.0, self = 0.0, factor = 0.0;
  float* d_out = nullptr;
};

/// Map tiles: 8 x 8 x 8 points per block of 8 x 8 x 2 threads on a fixed global lattice of
/// tiles, so that a point's value never depends on the slab that computes it.
inline constexpr int kEwaldTileX = 8, kEwaldTileY = 8, kEwaldTileZ = 8;

void launch_ewald_slab(const EwaldSlabLaunch& launch, StreamView stream);
void launch_ewald_points(const EwaldPointsLaunch& launch, StreamView stream);

}  // namespace dcs::cuda::detail
