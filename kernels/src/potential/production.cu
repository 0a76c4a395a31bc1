// The production potential kernel: one launch per atom chunk over a whole slab, tuned for
// Hopper, where the ceiling is the special-function unit (one MUFU.RSQ per atom-point pair,
// 16 per SM per clock). What it does and why:
//  - A block's 256 threads take 256 consecutive points of a plane (x fastest, rows wrap), so a
//    warp's stores are 128 contiguous bytes and a plane wastes at most one partial block,
//    whatever nx is; each thread takes 16 consecutive planes (coarsening along z; 8 in the
//    production-8 variant), so the atom's loads and dx^2+dy^2 are shared by 16 pairs. Planes +j
//    and -j around the group's centre share A + (j hz)^2, so a MUFU pair costs FADD/2, FFMA r2,
//    MUFU, FFMA accumulate (accumulate_fast); atoms whose z lies in the group and whose xy comes
//    near a thread's column (where that expansion cancels) or within min_distance take the exact
//    path with the clamp, chosen by one warp vote per 2 atoms. 64 registers, 4 blocks per SM.
//  - Atoms are staged by the block in shared-memory tiles (broadcast LDS), not constant
//    memory: constant-cache misses stalled the same loop by 40-80% in measurements (GPU-NOTES).
//    The tile stores dz at the middle plane of the block's group, computed once per block.
//  - Some of a thread's points (3 of 16 in the default) take their rsqrt from the FMA pipe
//    (bit seed + cubic: dcs::FmaPipeRsqrt of dcs/physics.hpp, 7 instructions): MUFU does the
//    other 13 while the issue slots it leaves idle do those 3. SASS per 2 atoms x 16 planes
//    (default): 26 MUFU.RSQ, ~158 instructions in the fast path + ~20 of loads and A; MUFU-bound
//    would be 208 cycles.
//  - Programmatic dependent launch: a chunk's blocks may start as the previous chunk's last
//    wave drains and wait only before reading and writing the slab (measured: a chunk in a
//    stream of launches takes 3% less time than the same launch alone).
// Measured on an H200 (bench/results/gpu_hybrid_rsqrt_2026-11-23.md): 106.9% of the MUFU rsqrt
// ceiling at 256^3 x 16 000 atoms, 103.9% at 129^3; all-MUFU 94.5%.
// Accuracy: displacements come from the split atoms (dcs/atoms.hpp); float accumulation runs
// over one chunk in registers and is added to the slab once per chunk.
#include <algorithm>
#include <climits>
#include <string>

#include "cuda_check.hpp"
#include "dcs/error.hpp"
#include "launch.hpp"
#include "potential/potential_common.cuh"
#include "potential/potential_kernels.hpp"

namespace dcs::cuda::detail {
namespace {

constexpr int kMaxHalfPlanes = 8;

/// The kernel's parameters: the chunk and slab, plus per-launch constants of the fast path
/// (read from the constant bank as instruction operands, so they take no registers).
struct ProductionLaunch {
  PotentialLaunch base;
  float offset_sq[kMaxHalfPlanes];  ///< (j hz)^2 for j = 1/2, 3/2, ...: Å^2
  float near_r2;                    ///< Å^2, exact path within this xy distance (z band only)
  float band;                       ///< Å, half-height of the z band around a group's centre
};

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
/// spread evenly (for 4 of 16: points 3, 7, 11 and 15).
template <int Planes, int Software>
__device__ __forceinline__ constexpr bool takes_software_rsqrt(int m) {
  return (m + 1) * Software / Planes > m * Software / Planes;
}

constexpr int kUnroll = 4;  // tile padding: a multiple of every policy's atoms per vote
static_assert(kUnroll % 2 == 0, "policies vote per 1, 2 or 4 atoms");

/// Offset of plane m from the centre of a group of Planes planes, in planes (a half-integer for
/// even Planes: -7.5 ... 7.5 for 16), and the index of its |offset| in offset_sq[].
template <int Planes>
__device__ __forceinline__ constexpr float plane_offset(int m) {
  return static_cast<float>(m) - 0.5f * static_cast<float>(Planes - 1);
}
template <int Planes>
__device__ __forceinline__ constexpr int offset_index(int m) {
  return m < Planes / 2 ? Planes / 2 - 1 - m : m - Planes / 2;
}

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

/// A tile of atoms in shared memory, as seen from one block's group of planes (centre c):
///  xy   = (ix, -rx, iy, -ry): the split x and y of dcs/atoms.hpp;
///  zq   = (d0^2, 2 hz d0, near threshold, q) with d0 the atom's z-displacement from c;
///  d0   = d0 itself, for the exact path.
struct TileView {
  const float4* xy;
  const float4* zq;
  const float* d0;
};

/// The pairs of kUnroll atoms (whose A = dx^2 + dy^2 + d0^2 are given) with the thread's first
/// Computed of Planes points, the fast way. With j = plane_offset(m) and B = 2 hz d0,
///   r^2 = dx^2 + dy^2 + (d0 + j hz)^2 = (A + (j hz)^2) + j B,
/// so planes +j and -j share the FADD A + (j hz)^2 and each costs one FFMA for r^2: 1.5 issue
/// slots per pair instead of 2. The expansion loses accuracy only where d0 + j hz cancels, i.e.
/// for atoms whose z lies within the group and whose xy lies close to the thread's column; the
/// warp sends those to the exact path (near threshold, stage_tile). Here r^2 >= min_r2 holds,
/// so the clamp of the Coulomb term is a no-op and is left out (dcs::add_unclamped_coulomb_term,
/// the same arithmetic as the exact path's dcs::add_coulomb_term). MUFU pairs cost FADD/2 +
/// FFMA + MUFU + FFMA; software pairs FADD/2 + FFMA + 7 + FMUL (q y0) + FFMA.
template <int Planes, int Computed, int SoftwarePoints, int Unroll, class Model>
__device__ __forceinline__ void accumulate_fast(float (&energy)[Planes], const float (&a2)[Unroll],
                                                const float4* sm_zq, const float* offset_sq,
                                                Model model) {
#pragma unroll
  for (int u = 0; u < Unroll; ++u) {
    const float4 zq = sm_zq[u];
    const float twice_hz_d0 = zq.y, q = zq.w;
    float shifted[Planes / 2];
#pragma unroll
    for (int k = 0; k < Planes / 2; ++k) shifted[k] = a2[u] + offset_sq[k];
#pragma unroll
    for (int m = 0; m < Computed; ++m) {
      const float r2 = fmaf(plane_offset<Planes>(m), twice_hz_d0, shifted[offset_index<Planes>(m)]);
      if (takes_software_rsqrt<Planes, SoftwarePoints>(m))
        energy[m] = add_unclamped_coulomb_term(energy[m], q, r2, FmaPipeRsqrt{}, model);
      else energy[m] = add_unclamped_coulomb_term(energy[m], q, r2, HardwareRsqrt{}, model);
    }
  }
}

/// The exact path for a group of kUnroll atoms of which one comes near some thread's column:
/// dz = d0 + j hz and r^2 = dx^2 + dy^2 + dz^2 per pair, then dcs::add_coulomb_term (clamp at
/// min_r2, NaN kept). Rare; values depend only on the point, not on the slab (see stage_tile).
template <int Planes, int Computed, int SoftwarePoints, int Unroll, class Model>
__device__ __forceinline__ void accumulate_exact(float (&energy)[Planes], const TileView& tile,
                                                 int a, float px, float py, float hx, float hy,
                                                 float hz, float min_r2, Model model) {
#pragma unroll
  for (int u = 0; u < Unroll; ++u) {
    const float4 xy = tile.xy[a + u];
    const float dx = fmaf(px - xy.x, hx, xy.y);
    const float dy = fmaf(py - xy.z, hy, xy.w);
    const float dxy2 = fmaf(dx, dx, dy * dy);
    const float d0 = tile.d0[a + u], q = tile.zq[a + u].w;
#pragma unroll
    for (int m = 0; m < Computed; ++m) {
      const float dz = fmaf(plane_offset<Planes>(m), hz, d0);
      const float r2 = fmaf(dz, dz, dxy2);
      if (takes_software_rsqrt<Planes, SoftwarePoints>(m))
        energy[m] = add_coulomb_term(energy[m], q, r2, min_r2, FmaPipeRsqrt{}, model);
      else energy[m] = add_coulomb_term(energy[m], q, r2, min_r2, HardwareRsqrt{}, model);
    }
  }
}

/// Every pair of the staged tile's `count` atoms (a multiple of kUnroll) with the thread's
/// points. Every thread computes, one past the plane's end a dummy point, so whole warps vote.
template <int Planes, int Computed, int SoftwarePoints, int Unroll, class Model>
__device__ __forceinline__ void tile_pairs(float (&energy)[Planes], int count, float px, float py,
                                           float hx, float hy, float hz, float min_r2,
                                           const TileView& tile, const float* offset_sq,
                                           Model model) {
  for (int a = 0; a < count; a += Unroll) {
    float a2[Unroll];
    bool near = false;
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const float4 xy = tile.xy[a + u];
      const float dx = fmaf(px - xy.x, hx, xy.y);
      const float dy = fmaf(py - xy.z, hy, xy.w);
      const float4 zq = tile.zq[a + u];
      a2[u] = fmaf(dx, dx, fmaf(dy, dy, zq.x));
      near = near || a2[u] < zq.z;
    }
    // The warp votes once per kUnroll atoms and takes the exact path only when one of them
    // comes near one of its threads' columns (rare), sparing the per-pair dz and clamp.
    if (__any_sync(0xffffffffu, near))
      accumulate_exact<Planes, Computed, SoftwarePoints, Unroll>(energy, tile, a, px, py, hx, hy,
                                                                 hz, min_r2, model);
    else
      accumulate_fast<Planes, Computed, SoftwarePoints, Unroll>(energy, a2, tile.zq + a, offset_sq,
                                                                model);
  }
}

/// Atoms of a partial tile rounded up to kUnroll (the rest are zero charges).
__device__ __forceinline__ int padded_count(int count) {
  return (count + kUnroll - 1) / kUnroll * kUnroll;
}

/// The block copies the tile of the chunk that starts at atom `begin` into shared memory, as
/// seen from the centre of its group of planes, padding a partial tile with zero charges.
/// The near threshold (compared with A = dx^2 + dy^2 + d0^2) sends an atom to the exact path
/// when dx^2 + dy^2 < near_r2 for atoms within the group's z band (|d0| < Planes hz, where the
/// expansion of accumulate_fast could cancel), otherwise when dx^2 + dy^2 < min_r2 (the clamp).
/// The group's centre is a global plane when slabs start at multiples of Planes, so the value
/// at a point does not depend on the slab it is computed in.
/// Barriers on both sides: the previous tile is consumed before it is overwritten, the new one
/// complete after.
template <class Policy>
__device__ __forceinline__ void stage_tile(const ProductionLaunch& launch, int point_blocks,
                                           int begin, float4* sm_xy, float4* sm_zq, float* sm_d0) {
  constexpr int kPlanes = Policy::kPointsPerThread;
  const int count = min(Policy::kTileAtoms, launch.base.atom_count - begin);
  const int padded = padded_count(count);
  __syncthreads();
  const float centre_z =
      static_cast<float>(launch.base.z_begin +
                         locate_points<Policy::kThreads, kPlanes>(point_blocks).first_plane) +
      0.5f * static_cast<float>(kPlanes - 1);
  const float hz = launch.base.hz;
  for (int a = static_cast<int>(threadIdx.x); a < padded; a += Policy::kThreads) {
    if (a < count) {
      const GridAtom atom = launch.base.d_atoms[begin + a];
      const float d0 = axis_offset(centre_z, atom.iz, hz, atom.rz);
      const float d0_sq = d0 * d0;
      const float near_r2 = fabsf(d0) < launch.band ? launch.near_r2 : launch.base.min_r2;
      sm_xy[a] = make_float4(atom.ix, -atom.rx, atom.iy, -atom.ry);
      sm_zq[a] = make_float4(d0_sq, (2.0f * hz) * d0, d0_sq + near_r2, atom.q);
      sm_d0[a] = d0;
    } else {
      sm_xy[a] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      sm_zq[a] = make_float4(1.0f, 0.0f, 0.0f, 0.0f);  // r^2 >= 1, q = 0
      sm_d0[a] = 1.0f;
    }
  }
  __syncthreads();
}

/// The thread's Planes points of which the first Computed exist (Computed < Planes only in the
/// last group of a slab). Every point is computed with the same arithmetic whatever Computed is.
template <class Policy, PairKind Kind, int Computed>
__device__ __forceinline__ void production_body(const ProductionLaunch& launch, int point_blocks,
                                                float4* sm_xy, float4* sm_zq, float* sm_d0) {
  constexpr int kThreads = Policy::kThreads;
  constexpr int kTile = Policy::kTileAtoms;
  constexpr int kPlanes = Policy::kPointsPerThread;
  constexpr int kSoftware = Policy::kSoftwarePoints;
  const PotentialLaunch& base = launch.base;
  const int plane_points = base.nx * base.ny;
  const int point = locate_points<kThreads, kPlanes>(point_blocks).point;
  const bool active = point < plane_points;
  const int grid_y = active ? point / base.nx : 0;
  const int grid_x = active ? point - grid_y * base.nx : 0;
  const float px = static_cast<float>(grid_x);
  const float py = static_cast<float>(grid_y);
  const float hx = base.hx, hy = base.hy, hz = base.hz, min_r2 = base.min_r2;
  const TileView tile{sm_xy, sm_zq, sm_d0};
  const auto model = pair_model<Kind>(base.screen_c);

  float energy[kPlanes] = {};
  for (int tile_begin = 0; tile_begin < base.atom_count; tile_begin += kTile) {
    stage_tile<Policy>(launch, point_blocks, tile_begin, sm_xy, sm_zq, sm_d0);
    // Full tiles run a loop of constant trip count; the chunk's last, partial tile runs to its
    // padded count. Both are recomputed from the uniform tile_begin, so that no per-thread
    // register has to survive the pair loop for them.
    if (tile_begin + kTile <= base.atom_count)
      tile_pairs<kPlanes, Computed, kSoftware, Policy::kUnroll>(
          energy, kTile, px, py, hx, hy, hz, min_r2, tile, launch.offset_sq, model);
    else
      tile_pairs<kPlanes, Computed, kSoftware, Policy::kUnroll>(
          energy, padded_count(base.atom_count - tile_begin), px, py, hx, hy, hz, min_r2, tile,
          launch.offset_sq, model);
  }

  wait_for_previous_grid();
  const ThreadPoints out = locate_points<kThreads, kPlanes>(point_blocks);
  if (out.point >= plane_points) return;
  float* gm_out = base.d_slab + static_cast<long long>(out.first_plane) * plane_points + out.point;
#pragma unroll
  for (int m = 0; m < Computed; ++m) {
    float* gm_point = gm_out + static_cast<long long>(m) * plane_points;
    *gm_point = base.accumulate ? *gm_point + energy[m] : energy[m];
  }
}

/// The last plane group of a slab may hold fewer planes: dispatch to a body compiled for
/// exactly that many, so no thread computes a plane it cannot store.
template <class Policy, PairKind Kind, int Computed>
__device__ __forceinline__ void production_tail(const ProductionLaunch& launch, int planes,
                                                int point_blocks, float4* sm_xy, float4* sm_zq,
                                                float* sm_d0) {
  if constexpr (Computed >= 1) {
    if (planes == Computed)
      production_body<Policy, Kind, Computed>(launch, point_blocks, sm_xy, sm_zq, sm_d0);
    else
      production_tail<Policy, Kind, Computed - 1>(launch, planes, point_blocks, sm_xy, sm_zq,
                                                  sm_d0);
  }
}

template <class Policy, PairKind Kind>
__global__ void __launch_bounds__(Policy::kThreads, Policy::kMinBlocksPerSm)
    production_kernel(const __grid_constant__ ProductionLaunch launch, int point_blocks) {
  __shared__ float4 sm_xy[Policy::kTileAtoms];
  __shared__ float4 sm_zq[Policy::kTileAtoms];
  __shared__ float sm_d0[Policy::kTileAtoms];
  allow_dependent_launch();
  constexpr int kPlanes = Policy::kPointsPerThread;
  // 1-D grid: plane tiles fastest, then plane groups (no 65535 limit on either).
  const int first_plane =
      static_cast<int>(blockIdx.x / static_cast<unsigned>(point_blocks)) * kPlanes;
  const int planes = min(kPlanes, launch.base.z_count - first_plane);
  if (planes == kPlanes)
    production_body<Policy, Kind, kPlanes>(launch, point_blocks, sm_xy, sm_zq, sm_d0);
  else
    production_tail<Policy, Kind, kPlanes - 1>(launch, planes, point_blocks, sm_xy, sm_zq, sm_d0);
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
  if (static_cast<unsigned long long>(point_blocks) * groups >
      static_cast<unsigned long long>(INT_MAX))
    throw CudaError("production kernel: slab too large for one launch");
  const LaunchConfig config{dim3(point_blocks * groups), dim3(Policy::kThreads), 0};
  // (j hz)^2 for the plane offsets j = 1/2, 3/2, ... of a group, rounded once from double; the
  // exact-path radius and z band of stage_tile (r^2 keeps <= ~26 ulp of relative error in the
  // fast path: A, (j hz)^2 and |j B| are each <= 15 (Planes hz / 2)^2 there, and r^2 >= near_r2).
  constexpr int kPlanes = Policy::kPointsPerThread;
  static_assert(kPlanes % 2 == 0 && kPlanes / 2 <= kMaxHalfPlanes, "production: even group sizes");
  ProductionLaunch production{launch, {}, 0.0f, 0.0f};
  const double hz = launch.hz;
  for (int k = 0; k < kPlanes / 2; ++k) {
    const double offset = (k + 0.5) * hz;
    production.offset_sq[k] = static_cast<float>(offset * offset);
  }
  const double near_radius = 0.375 * kPlanes * hz;  // 6 hz for 16 planes
  production.near_r2 = std::max(launch.min_r2, static_cast<float>(near_radius * near_radius));
  production.band = static_cast<float>(kPlanes * hz);
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
  const int blocks = static_cast<int>(point_blocks);
  if constexpr (!Policy::kEveryModel) {
    if (launch.pair != PairKind::kCoulomb)
      throw UsageError("this production kernel computes the Coulomb term only");
    DCS_CUDA_CHECK(cudaLaunchKernelEx(&launch_config, production_kernel<Policy, PairKind::kCoulomb>,
                                      production, blocks));
  } else {
    switch (launch.pair) {
      case PairKind::kScreened:
        DCS_CUDA_CHECK(cudaLaunchKernelEx(
            &launch_config, production_kernel<Policy, PairKind::kScreened>, production, blocks));
        break;
      case PairKind::kInverseSquare:
        DCS_CUDA_CHECK(cudaLaunchKernelEx(&launch_config,
                                          production_kernel<Policy, PairKind::kInverseSquare>,
                                          production, blocks));
        break;
      case PairKind::kCoulomb:
        DCS_CUDA_CHECK(cudaLaunchKernelEx(
            &launch_config, production_kernel<Policy, PairKind::kCoulomb>, production, blocks));
        break;
    }
  }
  DCS_CUDA_CHECK_LAUNCH("production", stream.get());
}

template void launch_production<ProductionDefault>(const PotentialLaunch&, StreamView);
template void launch_production<ProductionMufu>(const PotentialLaunch&, StreamView);
template void launch_production<ProductionSoftware4>(const PotentialLaunch&, StreamView);
template void launch_production<ProductionSoftware2>(const PotentialLaunch&, StreamView);
template void launch_production<Production8>(const PotentialLaunch&, StreamView);

}  // namespace dcs::cuda::detail
