// Atoms as the float32 kernels (CPU and CUDA) consume them, and the chunking every backend
// shares.
//
// Each coordinate is split into the index of the nearest grid plane and a small residual, so a
// kernel forms point-atom displacements without rounding away the digits that matter near an
// atom. A plain float coordinate of magnitude L carries an absolute error up to L * 2^-24
// (3.8e-6 Å at 64-128 Å); near an atom q/r changes by q*dr/r^2, so at the 0.1 Å clamp radius
// that alone reached 3e-5 of max|V| on a 256^3 grid at 0.5 Å (16 000 random atoms; 1.5e-5 on
// apbs-data's achbp), over the 1e-5 specification. With the split form the displacement is
//     dx = (i - ix) * hx - rx     (on the GPU: fmaf(i - ix, hx, -rx)),
// where i - ix is an exact small integer and |rx| <= hx/2, so the rounding is relative to |dx|.
// Charges are pre-multiplied by the Coulomb factor, so kernels sum q'/r and store the result.
#pragma once

#include <cstddef>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/physics.hpp"
#include "dcs/types.hpp"

namespace dcs {

/// Two float4s (32 bytes; layout-compatible with CUDA's float4[2]): ix, iy, iz are
/// integer-valued floats, q the scaled charge, rx, ry, rz the residuals in Å.
struct alignas(16) GridAtom {
  float ix, iy, iz;  ///< index of the grid plane nearest the atom, per axis (|i| <= 2^22)
  float q;           ///< charge (e) times coulomb_factor(physics)
  float rx, ry, rz;  ///< Å: atom - (origin + i*h) per axis; |r| <= h/2 unless i was clamped
  float unused;      ///< zero (keeps the second half 16-byte aligned)
};
static_assert(sizeof(GridAtom) == 32, "GridAtom must be two float4s");

/// Atoms per chunk: what 64 KB of CUDA constant memory holds as float4s (4096) with room to
/// spare, as in PMPP's cenergy (MAX_ATOMS 4000). Every backend walks the atoms chunk by chunk
/// and adds each chunk's float32 sum to the map once, so rounding is bounded per chunk.
inline constexpr std::size_t kAtomsPerChunk = 4000;

struct AtomChunk {
  std::size_t begin = 0;  ///< index of the first atom
  std::size_t count = 0;  ///< 1..chunk size
};

/// Splits n atoms into consecutive chunks of at most `chunk_size` (the last may be shorter).
/// n = 0 gives no chunks.
std::vector<AtomChunk> atom_chunks(std::size_t n_atoms, std::size_t chunk_size = kAtomsPerChunk);

/// Splits every atom of `system` for `grid`; charges are multiplied by `factor`. Atoms further
/// than 2^22 planes outside the grid keep the clamped index and a large residual: they are far
/// from every point, where the relative error stays small.
std::vector<GridAtom> pack_grid_atoms(const System& system, const GridSpec& grid, double factor);

}  // namespace dcs
