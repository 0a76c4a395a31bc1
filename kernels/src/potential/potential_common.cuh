// Device helpers shared by every potential kernel: the precise point-atom displacement. The
// Coulomb term itself, with its rsqrt policies (MUFU and the FMA-pipe seed + cubic), is
// dcs::add_coulomb_term() in dcs/physics.hpp, shared with the CPU backends.
#pragma once

#include <cuda_runtime.h>

#include "dcs/atoms.hpp"
#include "dcs/physics.hpp"  // add_coulomb_term, the rsqrt policies

namespace dcs::cuda::detail {

/// Displacement (Å) from an atom to grid point `point_index` along one axis, for an atom split
/// as (atom_index, residual) by pack_grid_atoms: point_index - atom_index is an exact integer,
/// its product with the spacing is exact inside the FMA, so the result is rounded once,
/// relative to its own size (see dcs/atoms.hpp).
__device__ __forceinline__ float axis_offset(float point_index, float atom_index, float spacing,
                                             float residual) {
  return fmaf(point_index - atom_index, spacing, -residual);
}

}  // namespace dcs::cuda::detail
