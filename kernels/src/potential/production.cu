// The production potential kernel: one launch per atom chunk over a whole slab, tuned for
// Hopper, where the ceiling is the special-function unit (one MUFU.RSQ per atom-point pair,
// 16 per SM per clock). What it does and why:
//  - A block's 256 threads take 256 consecutive points of a plane (x fastest, rows wrap), so a
//    warp's stores are 128 contiguous bytes and a plane wastes at most one partial block,
//    whatever nx is; each thread takes 16 consecutive planes (coarsening along z; 8 in the
//    production-8 variant), so the atom's loads and dx^2+dy^2 are shared by 16 pairs and a pair
//    costs FFMA dz, FFMA r2, MUFU, FFMA accumulate (the min-distance clamp, an FMNMX, runs only
//    for the rare groups of atoms that come within min_distance of a thread's z-column:
//    r^2 >= dx^2+dy^2 tells which). 64 registers, 4 blocks of 256 threads per SM.
//  - Atoms are staged by the block in shared-memory tiles (broadcast LDS), not constant
//    memory: constant-cache misses stalled the same loop by 40-80% in measurements (GPU-NOTES).
//    The tile stores dz at the middle plane of the block's group, computed once per block.
//  - Some of a thread's points (2 of 16 in the default) take their rsqrt from an FMA-pipe
//    Newton iteration (potential_common.cuh): MUFU does the other 14 while the issue slots it
//    leaves idle do those 2.
//  - Programmatic dependent launch: a chunk's blocks may start as the previous chunk's last
//    wave drains and wait only before reading and writing the slab (measured: a chunk in a
//    stream of launches takes 3% less time than the same launch alone).
// Measured on an H200 (bench/results/gpu_potential_2026-11-21.md): 99-102% of the MUFU rsqrt
// ceiling at 256^3, 97-100% at 129^3; all-MUFU 92-93%.
// Accuracy: displacements come from the split atoms (dcs/atoms.hpp); float accumulation runs
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

/// Whether point m of a thread's Planes points takes the FMA-pipe rsqrt: Software of them,
/// spread evenly (for 2 of 16: points 7 and 15).
template <int Planes, int Software>
__device__ __forceinline__ constexpr bool takes_software_rsqrt(int m) {
  return (m + 1) * Software / Planes > m * Software / Planes;
}

constexpr int kUnroll = 4;  // atoms per step of the inner loop (and tile padding)

/// Where a thread's points are: `point` in the plane (x fastest), the slab-relative first plane
/// of its block's group. Read from the special registers through volatile asm so that the store
/// after the atom loop recomputes it instead of keeping it live (and spilled) across the loop.
struct ThreadPoints {
  int point;
  int first_plane;
};

template <int Threads, int Planes>
__device__ __forceinline__ ThreadPoints locate_points(int point_blocks) {
  unsigned block, thread;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(block));
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(thread));
  const unsigned blocks = static_cast<unsigned>(point_blocks);
  return {static_cast<int>((block % blocks) * Threads + thread),
          static_cast<int>(block / blocks) * Planes};
}

/// The pairs of kUnroll atoms with the thread's Planes points: per pair FFMA dz, FFMA r2,
/// [FMNMX clamp], MUFU.RSQ (or the FMA-pipe rsqrt), FFMA accumulate.
/// (dz at the reference plane, charge) of the atoms are read from shared memory here rather
/// than held across the warp vote, to save registers (ptxas: 40 for production-8, 64 for the
/// 16-plane variants, the caps their __launch_bounds__ allow).
template <bool Clamp, int Planes, int SoftwarePoints>
__device__ __forceinline__ void accumulate_group(float (&energy)[Planes], const float (&dxy2)[kUnroll],
                                                 const float2* sm_zq, float hz, float min_r2) {
  constexpr int kRef = (Planes - 1) / 2;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const float2 zq = sm_zq[u];
#pragma unroll
    for (int m = 0; m < Planes; ++m) {
      const float dz = m == kRef ? zq.x : fmaf(static_cast<float>(m - kRef), hz, zq.x);
      float r2 = fmaf(dz, dz, dxy2[u]);
      // max(r2, min_r2) as one FMNMX: dcs::coulomb_term's ternary compiles to FSETP + FSEL (it
      // keeps a NaN r2), an issue slot per pair this loop cannot spare.
      if constexpr (Clamp) r2 = fmaxf(r2, min_r2);
      if (takes_software_rsqrt<Planes, SoftwarePoints>(m))
        energy[m] = fmaf(zq.y, rsqrt_fma_pipe(r2), energy[m]);
      else
        energy[m] = fmaf(zq.y, rsqrtf(r2), energy[m]);
    }
  }
}

/// Every pair of the staged tile's `count` atoms (a multiple of kUnroll) with the thread's
/// points. Every thread computes, one past the plane's end a dummy point, so whole warps vote.
template <int Planes, int SoftwarePoints>
__device__ __forceinline__ void tile_pairs(float (&energy)[Planes], int count, float px, float py,
                                           float hx, float hy, float hz, float min_r2,
                                           const float4* sm_xy, const float2* sm_zq) {
  for (int a = 0; a < count; a += kUnroll) {
    float dxy2[kUnroll];
    bool near = false;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const float4 xy = sm_xy[a + u];
      const float dx = fmaf(px - xy.x, hx, xy.y);
      const float dy = fmaf(py - xy.z, hy, xy.w);
      dxy2[u] = fmaf(dx, dx, dy * dy);
      near = near || dxy2[u] < min_r2;
    }
    // r2 = dz^2 + dxy2 >= dxy2, so the clamp max(r2, min_r2) can only change r2 where an atom
    // lies within min_distance of this thread's z-column. The warp votes once per kUnroll
    // atoms and takes the clamped path only then (rare), sparing one FMNMX per pair.
    if (__any_sync(0xffffffffu, near))
      accumulate_group<true, Planes, SoftwarePoints>(energy, dxy2, sm_zq + a, hz, min_r2);
    else
      accumulate_group<false, Planes, SoftwarePoints>(energy, dxy2, sm_zq + a, hz, min_r2);
  }
}

/// Atoms of a partial tile rounded up to kUnroll (the rest are zero charges).
__device__ __forceinline__ int padded_count(int count) { return (count + kUnroll - 1) / kUnroll * kUnroll; }

/// The block copies the tile of the chunk that starts at atom `begin` into shared memory, with
/// dz at the block's reference plane, padding a partial tile with zero charges to kUnroll.
/// Barriers on both sides: the previous tile is consumed before it is overwritten, the new one
/// complete after.
template <class Policy, int Planes>
__device__ __forceinline__ void stage_tile(const PotentialLaunch& launch, int point_blocks, int begin,
                                           float4* sm_xy, float2* sm_zq) {
  constexpr int kRef = (Planes - 1) / 2;
  const int count = min(Policy::kTileAtoms, launch.atom_count - begin);
  const int padded = padded_count(count);
  __syncthreads();
  const float ref_z = static_cast<float>(
      launch.z_begin + locate_points<Policy::kThreads, Policy::kPointsPerThread>(point_blocks).first_plane +
      kRef);
  for (int a = static_cast<int>(threadIdx.x); a < padded; a += Policy::kThreads) {
    if (a < count) {
      const GridAtom atom = launch.d_atoms[begin + a];
      sm_xy[a] = make_float4(atom.ix, -atom.rx, atom.iy, -atom.ry);
      sm_zq[a] = make_float2(axis_offset(ref_z, atom.iz, launch.hz, atom.rz), atom.q);
    } else {
      sm_xy[a] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      sm_zq[a] = make_float2(0.0f, 0.0f);
    }
  }
  __syncthreads();
}

template <class Policy, int Planes, int SoftwarePoints>
__device__ __forceinline__ void production_body(const PotentialLaunch& launch, int point_blocks,
                                                float4* sm_xy, float2* sm_zq) {
  constexpr int kThreads = Policy::kThreads;
  constexpr int kTile = Policy::kTileAtoms;
  const int plane_points = launch.nx * launch.ny;
  const int point = locate_points<kThreads, Policy::kPointsPerThread>(point_blocks).point;
  const bool active = point < plane_points;
  const int grid_y = active ? point / launch.nx : 0;
  const int grid_x = active ? point - grid_y * launch.nx : 0;
  const float px = static_cast<float>(grid_x);
  const float py = static_cast<float>(grid_y);
  const float hx = launch.hx, hy = launch.hy, hz = launch.hz, min_r2 = launch.min_r2;

  float energy[Planes] = {};
  for (int tile_begin = 0; tile_begin < launch.atom_count; tile_begin += kTile) {
    stage_tile<Policy, Planes>(launch, point_blocks, tile_begin, sm_xy, sm_zq);
    // Full tiles run a loop of constant trip count; the chunk's last, partial tile runs to its
    // padded count. Both are recomputed from the uniform tile_begin, so that no per-thread
    // register has to survive the pair loop for them.
    if (tile_begin + kTile <= launch.atom_count)
      tile_pairs<Planes, SoftwarePoints>(energy, kTile, px, py, hx, hy, hz, min_r2, sm_xy, sm_zq);
    else
      tile_pairs<Planes, SoftwarePoints>(energy, padded_count(launch.atom_count - tile_begin), px, py,
                                        hx, hy, hz, min_r2, sm_xy, sm_zq);
  }

  wait_for_previous_grid();
  const ThreadPoints out = locate_points<kThreads, Policy::kPointsPerThread>(point_blocks);
  if (out.point >= plane_points) return;
  float* gm_out = launch.d_slab + static_cast<long long>(out.first_plane) * plane_points + out.point;
#pragma unroll
  for (int m = 0; m < Planes; ++m) {
    float* gm_point = gm_out + static_cast<long long>(m) * plane_points;
    *gm_point = launch.accumulate ? *gm_point + energy[m] : energy[m];
  }
}

/// The last plane group of a slab may hold fewer planes: dispatch to a body compiled for
/// exactly that many (all rsqrts on MUFU there), so no thread computes a plane it cannot store.
template <class Policy, int Planes>
__device__ __forceinline__ void production_tail(const PotentialLaunch& launch, int planes,
                                                int point_blocks, float4* sm_xy, float2* sm_zq) {
  if constexpr (Planes >= 1) {
    if (planes == Planes)
      production_body<Policy, Planes, 0>(launch, point_blocks, sm_xy, sm_zq);
    else
      production_tail<Policy, Planes - 1>(launch, planes, point_blocks, sm_xy, sm_zq);
  }
}

template <class Policy>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocksPerSm)
    production_kernel(const __grid_constant__ PotentialLaunch launch, int point_blocks) {
  __shared__ float4 sm_xy[Policy::kTileAtoms];
  __shared__ float2 sm_zq[Policy::kTileAtoms];
  allow_dependent_launch();
  constexpr int kPlanes = Policy::kPointsPerThread;
  // 1-D grid: plane tiles fastest, then plane groups (no 65535 limit on either).
  const int first_plane = static_cast<int>(blockIdx.x / static_cast<unsigned>(point_blocks)) * kPlanes;
  const int planes = min(kPlanes, launch.z_count - first_plane);
  if (planes == kPlanes)
    production_body<Policy, kPlanes, Policy::kSoftwarePoints>(launch, point_blocks, sm_xy, sm_zq);
  else
    production_tail<Policy, kPlanes - 1>(launch, planes, point_blocks, sm_xy, sm_zq);
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

template void launch_production<ProductionDefault>(const PotentialLaunch&, StreamView);
template void launch_production<ProductionMufu>(const PotentialLaunch&, StreamView);
template void launch_production<Production8>(const PotentialLaunch&, StreamView);
template void launch_production<ProductionSoftware3>(const PotentialLaunch&, StreamView);

}  // namespace dcs::cuda::detail
