// Helpers shared by the potential kernels: the precise point-atom displacement, and the textbook
// kernels' copy of a chunk into constant memory. The Coulomb term itself, with its rsqrt
// policies (MUFU and the FMA-pipe seed + cubic), is dcs::add_coulomb_term() in dcs/physics.hpp,
// shared with the CPU backends.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "cuda_check.hpp"
#include "dcs/atoms.hpp"
#include "dcs/error.hpp"
#include "dcs/physics.hpp"  // add_coulomb_term, the rsqrt policies
#include "potential/potential_kernels.hpp"

namespace dcs::cuda::detail {

/// Displacement (Å) from an atom to grid point `point_index` along one axis, for an atom split
/// as (atom_index, residual) by pack_grid_atoms: point_index - atom_index is an exact integer,
/// its product with the spacing is exact inside the FMA, so the result is rounded once,
/// relative to its own size (see dcs/atoms.hpp).
__device__ __forceinline__ float axis_offset(float point_index, float atom_index, float spacing,
                                             float residual) {
  return fmaf(point_index - atom_index, spacing, -residual);
}

/// Copies the launch's chunk of atoms into `symbol`, a textbook kernel file's constant-memory
/// array of Capacity atoms (asynchronous on `stream`); a chunk outside 1..Capacity is refused
/// with a CudaError that names the kernel.
template <std::size_t Capacity>
void copy_chunk_to_constant(const GridAtom (&symbol)[Capacity], const PotentialLaunch& launch,
                            const char* kernel, StreamView stream) {
  if (launch.atom_count < 1 || static_cast<std::size_t>(launch.atom_count) > Capacity)
    throw CudaError(std::string(kernel) + ": a chunk holds 1.." + std::to_string(Capacity) +
                    " atoms, got " + std::to_string(launch.atom_count));
  DCS_CUDA_CHECK(cudaMemcpyToSymbolAsync(
      symbol, launch.d_atoms, sizeof(GridAtom) * static_cast<std::size_t>(launch.atom_count), 0,
      cudaMemcpyDeviceToDevice, stream.get()));
}

}  // namespace dcs::cuda::detail
