// The production potential kernel: one launch per atom chunk over a whole slab, tuned for
// Hopper, where the ceiling is the special-function unit (one MUFU.RSQ per atom-point pair,
// 16 per SM per clock). What it does and why:
//  - A block's 256 threads take 256 consecutive points of a plane (x fastest, rows wrap), so a
//    warp's stores are 128 contiguous bytes and a plane wastes at most one partial block,
//    whatever nx is; each thread takes 8 consecutive planes (coarsening along z), so the atom's
//    loads and dx^2+dy^2 are shared by 8 pairs and a pair costs FFMA dz, FFMA r2, FMNMX clamp,
//    MUFU, FFMA accumulate.
//  - Atoms are staged by the block in shared-memory tiles (broadcast LDS), not constant
//    memory: constant-cache misses stalled the same loop by 40-80% in measurements (GPU-NOTES).
//    The tile stores dz at the middle plane of the block's 8, computed once per block.
//  - With SoftwareEvery = 8, every 8th pair uses an FMA-pipe rsqrt (potential_common.cuh):
//    MUFU then does 7 of 8 rsqrts while the issue slots it left idle do the 8th.
//  - Programmatic dependent launch: a chunk's blocks start as the previous chunk's last wave
//    drains and wait only before reading and writing the slab, hiding the tail of each wave.
// Accuracy: displacements come from the split atoms (grid_atoms.hpp); float accumulation runs
// over one chunk in registers and is added to the slab once per chunk.
#include <climits>
#include <string>

#include "cuda_check.hpp"
#include "dcs/error.hpp"
#include "launch.hpp"
#include "potential/potential_common.cuh"
#include "potential/potential_kernels.hpp"

namespace dcs::cuda::detail {
namespace {

/// Lets the next kernel in the stream, if launched with programmatic stream serialization,
/// start on SMs this grid frees; it must still wait (below) before touching our results.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// Waits until the previous kernel in the stream has completed and its writes are visible
/// (a no-op when this grid was launched without programmatic serialization).
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}


/// Whether point m of a thread takes the FMA-pipe rsqrt (every Every-th point; never for 0).
template <int Every>
__device__ __forceinline__ constexpr bool takes_software_rsqrt(int m) {
  if constexpr (Every > 0)
    return m % Every == Every - 1;
  else
    return false;
}

template <class Policy, int Planes, int SoftwareEvery>
__device__ __forceinline__ void production_body(const PotentialLaunch& launch, int point,
                                                int first_plane, float4* sm_xy, float2* sm_zq) {
  constexpr int kThreads = Policy::kThreads;
  constexpr int kTile = Policy::kTileAtoms;
  constexpr int kRef = (Planes - 1) / 2;  // reference plane: |dz| stays small for near atoms
  const int plane_points = launch.nx * launch.ny;
  const bool active = point < plane_points;
  const int grid_y = active ? point / launch.nx : 0;
  const int grid_x = active ? point - grid_y * launch.nx : 0;
  const float px = static_cast<float>(grid_x);
  const float py = static_cast<float>(grid_y);
  const float ref_z = static_cast<float>(launch.z_begin + first_plane + kRef);
  const float hx = launch.hx, hy = launch.hy, hz = launch.hz, min_r2 = launch.min_r2;

  float energy[Planes] = {};
  for (int tile_begin = 0; tile_begin < launch.atom_count; tile_begin += kTile) {
    const int tile_count = min(kTile, launch.atom_count - tile_begin);
    const int padded = (tile_count + 3) & ~3;  // zero-charge padding to the unroll factor
    __syncthreads();  // every thread is done with the previous tile
    for (int a = static_cast<int>(threadIdx.x); a < padded; a += kThreads) {
      if (a < tile_count) {
        const GridAtom atom = launch.d_atoms[tile_begin + a];
        sm_xy[a] = make_float4(atom.ix, -atom.rx, atom.iy, -atom.ry);
        sm_zq[a] = make_float2(axis_offset(ref_z, atom.iz, hz, atom.rz), atom.q);
      } else {
        sm_xy[a] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        sm_zq[a] = make_float2(0.0f, 0.0f);
      }
    }
    __syncthreads();
    if (!active) continue;
    for (int a = 0; a < padded; a += 4) {
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const float4 xy = sm_xy[a + u];
        const float2 zq = sm_zq[a + u];
        const float dx = fmaf(px - xy.x, hx, xy.y);
        const float dy = fmaf(py - xy.z, hy, xy.w);
        const float dxy2 = fmaf(dx, dx, dy * dy);
#pragma unroll
        for (int m = 0; m < Planes; ++m) {
          const float dz = m == kRef ? zq.x : fmaf(static_cast<float>(m - kRef), hz, zq.x);
          // The clamp max(r2, min_r2) as one FMNMX: dcs::coulomb_term's ternary compiles to
          // FSETP + FSEL (it must keep a NaN r2), an issue slot per pair this loop cannot spare.
          const float r2 = fmaxf(fmaf(dz, dz, dxy2), min_r2);
          if (takes_software_rsqrt<SoftwareEvery>(m))
            energy[m] = fmaf(zq.y, rsqrt_fma_pipe(r2), energy[m]);
          else
            energy[m] = fmaf(zq.y, rsqrtf(r2), energy[m]);
        }
      }
    }
  }

  wait_for_previous_grid();
  if (!active) return;
  float* gm_out = launch.d_slab + static_cast<long long>(first_plane) * plane_points + point;
#pragma unroll
  for (int m = 0; m < Planes; ++m) {
    float* gm_point = gm_out + static_cast<long long>(m) * plane_points;
    *gm_point = launch.accumulate ? *gm_point + energy[m] : energy[m];
  }
}

/// The last plane group of a slab may hold fewer planes: dispatch to a body compiled for
/// exactly that many (all rsqrts on MUFU there), so no thread computes a plane it cannot store.
template <class Policy, int Planes>
__device__ __forceinline__ void production_tail(const PotentialLaunch& launch, int planes, int point,
                                                int first_plane, float4* sm_xy, float2* sm_zq) {
  if constexpr (Planes >= 1) {
    if (planes == Planes)
      production_body<Policy, Planes, 0>(launch, point, first_plane, sm_xy, sm_zq);
    else
      production_tail<Policy, Planes - 1>(launch, planes, point, first_plane, sm_xy, sm_zq);
  }
}

template <class Policy>
__global__ void __launch_bounds__(Policy::kThreads)
    production_kernel(const __grid_constant__ PotentialLaunch launch, int point_blocks) {
  __shared__ float4 sm_xy[Policy::kTileAtoms];
  __shared__ float2 sm_zq[Policy::kTileAtoms];
  allow_dependent_launch();
  constexpr int kPlanes = Policy::kPointsPerThread;
  // 1-D grid: plane tiles fastest, then plane groups (no 65535 limit on either).
  const int point_block = static_cast<int>(blockIdx.x % static_cast<unsigned>(point_blocks));
  const int group = static_cast<int>(blockIdx.x / static_cast<unsigned>(point_blocks));
  const int point = point_block * Policy::kThreads + static_cast<int>(threadIdx.x);
  const int first_plane = group * kPlanes;
  const int planes = min(kPlanes, launch.z_count - first_plane);
  if (planes == kPlanes)
    production_body<Policy, kPlanes, Policy::kSoftwareEvery>(launch, point, first_plane, sm_xy, sm_zq);
  else
    production_tail<Policy, kPlanes - 1>(launch, planes, point, first_plane, sm_xy, sm_zq);
}

}  // namespace

template <class Policy>
void launch_production(const PotentialLaunch& launch, StreamView stream) {
  const long long plane_points = static_cast<long long>(launch.nx) * launch.ny;
  if (launch.atom_count < 1 || launch.z_count < 1 || plane_points < 1)
    throw CudaError("production kernel: empty launch (atoms " + std::to_string(launch.atom_count) +
                    ", planes " + std::to_string(launch.z_count) + ")");
  if (plane_points > INT_MAX - Policy::kThreads)
    throw CudaError("production kernel: a plane of " + std::to_string(plane_points) +
                    " points exceeds the 32-bit point index");
  const unsigned point_blocks = blocks_for(plane_points, Policy::kThreads);
  const unsigned groups = blocks_for(launch.z_count, Policy::kPointsPerThread);
  if (static_cast<unsigned long long>(point_blocks) * groups > static_cast<unsigned long long>(INT_MAX))
    throw CudaError("production kernel: slab too large for one launch");
  const LaunchConfig config{dim3(point_blocks * groups), dim3(Policy::kThreads), 0};
  log_launch("production", config);

  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t launch_config{};
  launch_config.gridDim = config.grid;
  launch_config.blockDim = config.block;
  launch_config.dynamicSmemBytes = config.smem;
  launch_config.stream = stream.get();
  launch_config.attrs = &attribute;
  launch_config.numAttrs = 1;
  DCS_CUDA_CHECK(cudaLaunchKernelEx(&launch_config, production_kernel<Policy>, launch,
                                    static_cast<int>(point_blocks)));
  DCS_CUDA_CHECK_LAUNCH("production", stream.get());
}

template void launch_production<ProductionSoftware>(const PotentialLaunch&, StreamView);
template void launch_production<ProductionMufu>(const PotentialLaunch&, StreamView);
template void launch_production<ProductionSoftware16>(const PotentialLaunch&, StreamView);

}  // namespace dcs::cuda::detail
