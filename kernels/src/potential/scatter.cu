// PMPP Fig. 18.5, the scatter form of direct Coulomb summation: one thread per atom walks every
// point of one z-plane and adds its contribution with atomicAdd. It teaches why gather wins:
// every thread of a warp updates the same grid point at the same time, so the atomics
// serialise, and the plane is launched once per z and per chunk. Expected bottleneck: atomics.

#include "cuda_check.hpp"
#include "launch.hpp"
#include "potential/potential_common.cuh"
#include "potential/potential_kernels.hpp"

namespace dcs::cuda::detail {
namespace {

__constant__ GridAtom c_atoms[kConstantChunkAtoms];

__global__ void scatter_plane_kernel(float* __restrict__ gm_plane, int nx, int ny, float plane_z,
                                     float hx, float hy, float hz, float min_r2, int atom_count) {
  const int atom_index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (atom_index >= atom_count) return;
  const GridAtom atom = c_atoms[atom_index];
  const float dz = axis_offset(plane_z, atom.iz, hz, atom.rz);
  const float dz2 = dz * dz;
  for (int grid_y = 0; grid_y < ny; ++grid_y) {
    const float dy = axis_offset(static_cast<float>(grid_y), atom.iy, hy, atom.ry);
    const float dyz2 = fmaf(dy, dy, dz2);
    float* gm_row = gm_plane + static_cast<long long>(grid_y) * nx;
    for (int grid_x = 0; grid_x < nx; ++grid_x) {
      const float dx = axis_offset(static_cast<float>(grid_x), atom.ix, hx, atom.rx);
      atomicAdd(gm_row + grid_x, coulomb_term(atom.q, fmaf(dx, dx, dyz2), min_r2));
    }
  }
}

}  // namespace

void launch_scatter(const PotentialLaunch& launch, StreamView stream) {
  copy_chunk_to_constant(c_atoms, launch, "scatter", stream);
  const LaunchConfig config{dim3(blocks_for(launch.atom_count, 128)), dim3(128), 0};
  log_launch("scatter (per plane)", config);
  const long long plane_points = static_cast<long long>(launch.nx) * launch.ny;
  for (int plane = 0; plane < launch.z_count; ++plane) {
    scatter_plane_kernel<<<config.grid, config.block, config.smem, stream.get()>>>(
        launch.d_slab + plane * plane_points, launch.nx, launch.ny,
        static_cast<float>(launch.z_begin + plane), launch.hx, launch.hy, launch.hz, launch.min_r2,
        launch.atom_count);
    DCS_CUDA_CHECK_LAUNCH("scatter", stream.get());
  }
}

}  // namespace dcs::cuda::detail
