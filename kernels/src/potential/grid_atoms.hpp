// Atoms as the CUDA potential kernels read them: each coordinate split into the index of the
// nearest grid plane and a small residual, so that a kernel forms point-atom displacements
// without rounding away the digits that matter near an atom.
//
// Why not dcs::PackedAtom (origin-relative float x, y, z): a float coordinate of magnitude L
// carries an absolute error up to L * 2^-24 (3.8e-6 Å at 64-128 Å). Near an atom the term
// q / r changes by q * dr / r^2, so at the 0.1 Å clamp radius that error alone reaches
// 3e-5 of max|V| on a 256^3 grid at 0.5 Å (measured on the CPU, 16 000 random atoms), three
// times the 1e-5 the backend promises. With the split form the displacement along x is
//     dx = fmaf(i - ix, hx, -rx),
// where i - ix is an exact small integer, the product is exact inside the FMA and rx is at
// most hx/2, so the only rounding is relative to |dx| itself (and 6e-8 relative from hx).
#pragma once

#include <cstddef>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/types.hpp"

namespace dcs::cuda::detail {

/// Two float4s (32 bytes): .x .y .z of the first are integer-valued floats, .w the charge.
struct alignas(16) GridAtom {
  float ix, iy, iz;  ///< index of the grid plane nearest the atom, per axis (|i| <= 2^22)
  float q;           ///< charge (e) times the Coulomb factor of the run
  float rx, ry, rz;  ///< Å: atom - (origin + i*h) per axis; |r| <= h/2 unless i was clamped
  float unused;      ///< zero (keeps the 16-byte alignment of the second half)
};
static_assert(sizeof(GridAtom) == 32, "GridAtom must be two float4s");

/// Splits every atom of `system` for `grid`; charges are multiplied by `factor`.
/// Atoms further than 2^22 planes outside the grid keep the clamped index and a large
/// residual: they are far from every point, where the relative error stays small.
std::vector<GridAtom> pack_grid_atoms(const System& system, const GridSpec& grid, double factor);

}  // namespace dcs::cuda::detail
