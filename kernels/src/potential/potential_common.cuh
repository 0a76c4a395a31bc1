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

/// 1/sqrt(x) for normal positive x without MUFU, as y0 * P(x * y0^2): the bit-level first guess
/// y0 (relative error within 3.5%, so e = x*y0^2 lies in [0.9324, 1.0692]) corrected by the
/// cubic P that is minimax for the relative error of e^(-1/2) on that interval (Remez, 7.5e-7;
/// 1.1e-6 measured in float over [1e-12, 1.3e14] on the CPU; MUFU.RSQ is ~1.2e-7). Seven
/// FMA/ALU instructions (SHF, IADD, FMUL, FMUL, 3 FFMA) instead of one MUFU: worth it only
/// where MUFU is the bottleneck and issue slots are left over. NaN in, NaN out.
/// rsqrt_fma_pipe_parts() leaves the last product to the caller, who folds the charge into it:
/// q / sqrt(x) = (q * y0) * P(e).
struct RsqrtParts {
  float seed;        ///< y0
  float correction;  ///< P(x * y0^2)
};
__device__ __forceinline__ RsqrtParts rsqrt_fma_pipe_parts(float x) {
  // (One IMAD.HI, i * -2^31 + K, would save an issue slot, but its two constants need registers
  // the 16-plane loop does not have: ptxas rematerialises them with MOVs, a net loss.)
  const float y0 = __int_as_float(0x5F375A86 - (__float_as_int(x) >> 1));
  const float e = (x * y0) * y0;
  const float p = fmaf(fmaf(fmaf(-0.313054074f, e, 1.31544123f), e, -2.19172067f), e, 2.18933276f);
  return {y0, p};
}
__device__ __forceinline__ float rsqrt_fma_pipe(float x) {
  const RsqrtParts parts = rsqrt_fma_pipe_parts(x);
  return parts.seed * parts.correction;
}

}  // namespace dcs::cuda::detail
