// Device helpers shared by every potential kernel: the precise point-atom displacement and a
// reciprocal square root that runs on the FMA pipe instead of the special-function unit.
#pragma once

#include <cuda_runtime.h>

#include "dcs/atoms.hpp"
#include "dcs/physics.hpp"  // coulomb_term, for the textbook kernels

namespace dcs::cuda::detail {

/// Displacement (Å) from an atom to grid point `point_index` along one axis, for an atom split
/// as (atom_index, residual) by pack_grid_atoms: point_index - atom_index is an exact integer,
/// its product with the spacing is exact inside the FMA, so the result is rounded once,
/// relative to its own size (see dcs/atoms.hpp).
__device__ __forceinline__ float axis_offset(float point_index, float atom_index, float spacing,
                                             float residual) {
  return fmaf(point_index - atom_index, spacing, -residual);
}

/// 1/sqrt(x) for normal positive x without MUFU: a bit-level first guess and two Newton steps,
/// the first with Moroz et al.'s adjusted constants (max relative error 7.5e-7, measured over
/// [1e-2, 1e6] on the CPU; MUFU.RSQ is ~1.2e-7). Ten FMA/ALU instructions instead of one MUFU:
/// worth it only where MUFU is the bottleneck and issue slots are left over.
__device__ __forceinline__ float rsqrt_fma_pipe(float x) {
  float y = __int_as_float(0x5F1FFFF9 - (__float_as_int(x) >> 1));
  y = y * 0.703952253f * fmaf(-x * y, y, 2.38924456f);
  const float half_x = 0.5f * x;
  return y * fmaf(-half_x * y, y, 1.5f);
}

}  // namespace dcs::cuda::detail
