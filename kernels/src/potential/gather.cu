// PMPP Figs. 18.6, 18.8 and 18.10 as one kernel template: the gather form of direct Coulomb
// summation, one z-plane per launch, the chunk's atoms in constant memory (every thread of a
// warp reads the same atom, so the constant cache broadcasts it).
//   gather    <16,16,1,false>  one point per thread: 4 constant loads and the dy/dz work are
//                              repeated by every thread of a row; bound by constant loads.
//   coarsened <16,16,8,false>  8 consecutive x-points per thread share dy^2+dz^2 and the atom's
//                              loads; a warp's stores are 8 floats apart (uncoalesced).
//   coalesced <16,16,8,true>   the same 8 points strided by blockDim.x: stores are contiguous;
//                              what remains is MUFU, and a plane of 256^2 points at 128 points
//                              per block row leaves most of a 132-SM GPU idle.
#include <string>

#include "cuda_check.hpp"
#include "dcs/error.hpp"
#include "launch.hpp"
#include "potential/potential_common.cuh"
#include "potential/potential_kernels.hpp"

namespace dcs::cuda::detail {
namespace {

__constant__ GridAtom c_atoms[kConstantChunkAtoms];

template <class Policy>
__global__ void __launch_bounds__(Policy::kBlockX* Policy::kBlockY)
    gather_plane_kernel(float* __restrict__ gm_plane, int nx, int ny, float plane_z, float hx,
                        float hy, float hz, float min_r2, int atom_count) {
  constexpr int kPoints = Policy::kPointsPerThread;
  constexpr int kStride = Policy::kPointStride;
  const int first_x =
      Policy::kCoalescedStore
          ? static_cast<int>(blockIdx.x) * Policy::kBlockPointsX + static_cast<int>(threadIdx.x)
          : (static_cast<int>(blockIdx.x) * Policy::kBlockX + static_cast<int>(threadIdx.x)) *
                kPoints;
  const int grid_y = static_cast<int>(blockIdx.y) * Policy::kBlockY + static_cast<int>(threadIdx.y);
  if (grid_y >= ny || first_x >= nx) return;  // tails: a thread's later points are guarded below

  const float x0 = static_cast<float>(first_x);
  const float y = static_cast<float>(grid_y);
  float energy[kPoints] = {};
  for (int atom = 0; atom < atom_count; ++atom) {
    const float dx0 = axis_offset(x0, c_atoms[atom].ix, hx, c_atoms[atom].rx);
    const float dy = axis_offset(y, c_atoms[atom].iy, hy, c_atoms[atom].ry);
    const float dz = axis_offset(plane_z, c_atoms[atom].iz, hz, c_atoms[atom].rz);
    const float dyz2 = fmaf(dy, dy, dz * dz);
    const float charge = c_atoms[atom].q;
#pragma unroll
    for (int m = 0; m < kPoints; ++m) {
      // The book's dx0 + m*stride*gridspacing, with the product exact inside the FMA.
      const float dx = fmaf(static_cast<float>(m * kStride), hx, dx0);
      energy[m] += coulomb_term(charge, fmaf(dx, dx, dyz2), min_r2);
    }
  }
  float* gm_row = gm_plane + static_cast<long long>(grid_y) * nx;
#pragma unroll
  for (int m = 0; m < kPoints; ++m) {
    const int grid_x = first_x + m * kStride;
    if (grid_x < nx) gm_row[grid_x] += energy[m];
  }
}

}  // namespace

template <class Policy>
void launch_gather(const PotentialLaunch& launch, StreamView stream) {
  copy_chunk_to_constant(c_atoms, launch, "gather", stream);
  const LaunchConfig config{
      dim3(blocks_for(launch.nx, Policy::kBlockPointsX), blocks_for(launch.ny, Policy::kBlockY)),
      dim3(Policy::kBlockX, Policy::kBlockY), 0};
  if (config.grid.y > 65535u)
    throw CudaError("gather: " + std::to_string(launch.ny) + " rows exceed the launch limit");
  log_launch("gather family (per plane)", config);
  const long long plane_points = static_cast<long long>(launch.nx) * launch.ny;
  for (int plane = 0; plane < launch.z_count; ++plane) {
    gather_plane_kernel<Policy><<<config.grid, config.block, config.smem, stream.get()>>>(
        launch.d_slab + plane * plane_points, launch.nx, launch.ny,
        static_cast<float>(launch.z_begin + plane), launch.hx, launch.hy, launch.hz, launch.min_r2,
        launch.atom_count);
    DCS_CUDA_CHECK_LAUNCH("gather", stream.get());
  }
}

template void launch_gather<GatherPlain>(const PotentialLaunch&, StreamView);
template void launch_gather<GatherCoarsened>(const PotentialLaunch&, StreamView);
template void launch_gather<GatherCoalesced>(const PotentialLaunch&, StreamView);

}  // namespace dcs::cuda::detail
