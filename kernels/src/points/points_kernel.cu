// The points kernel: the potential at arbitrary points (surface vertices, atoms, point lists),
// one launch per compute_points() call, built for the special-function ceiling (one MUFU per
// atom-point pair, 16 per SM per clock on Hopper).
//
// Why tensor cores. For points in no particular arrangement, r^2 costs four FP32 instructions
// per pair (|a|^2 + |p|^2 + (-2a).p); with the MUFU and the accumulating FFMA that is six issue
// slots of the eight a scheduler has per MUFU, and the earlier FP32 kernel reached 68 % of the
// ceiling with the issue slots and the MIO queue full (bench/results/points_*). Here the warp's
// tensor cores form every r^2 of a 16-point x 8-atom tile with two mma.sync.m16n8k8 TF32
// instructions, so a pair costs about 1 MUFU + 1 FFMA + 2/16 HMMA + 1/8 LDS of issue.
//
// Groups. Each warp owns kPointsGroup = 16 kPointsTiles consecutive points of the list. Its
// centre c is the midpoint of the group's bounding box (double, finite listed points only; min
// and max are exact, so c does not depend on the reduction's order), and it works with float
// offsets p - c rounded once from double. Morton-sorted points make a group compact: its radius
// R (the largest |p - c|) is a few Å. A value depends only on its group's points and the atoms.
//
// r^2 in TF32. TF32 keeps 11 significant bits, so every float is split into pieces the tensor
// core multiplies exactly: p = ph + pl, A = -2a = Ah + Al (pieces rounded to TF32), and |a|^2,
// |p|^2 into three pieces each (exact sums). Point row and atom column of the two k = 8 MMAs
// (the rows share their first half, so a lane keeps 6 registers per tile, not 8):
//   A1 = [phx phy phz 1 plx ply plz 1]      B1 = [Ahx Ahy Ahz a2h Ahx Ahy Ahz a2m]
//   A2 = [phx phy phz 1 p2h p2m p2l 1]      B2 = [Alx Aly Alz a2l 1   1   1   0  ]
// so D = A1.B1 + A2.B2 = ph.Ah + pl.Ah + ph.Al + |a|^2 + |p|^2 = r^2 - pl.Al in FP32
// accumulation. The tensor core adds in FP32 (products exact; sums rounded by the unit).
//
// Error of the fast path. Its pairs have r >= rn >= R/2 and |p| <= R, so |a| <= |p| + r <= 3r.
// The dropped pl.Al and the truncation of Al (the tensor core reads TF32) are each at most
// ~2^-21 |p| |A| <= 3 2^-19 r^2; the accumulation rounds sums below ~16 r^2 (|a|^2 <= 9 r^2,
// |p||A| <= 12 r^2). Measured (bench): 3-8e-7 of max|V|; the FP32 kernel it replaced 1.5e-6.
//
// Atoms. prepare_points() uploads each coordinate as float + float remainder (PointsAtom). Each
// warp stages rounds of kRound atoms into its own shared memory as seen from its centre,
// a = (hi - c_hi) + (lo - c_lo) in float (exact when the atom is near, by Sterbenz), split into
// the B fragments in the order the MMA reads them (one LDS.128 per lane per 8 atoms), with the
// charges (one LDS.64) and the plain offsets for the exact path.
//
// Exact path: an atom that comes within rn = max(R/2, min_distance) of any of the group's
// points (|a| < R + rn, tested when staging: one ballot per 32) makes its tile of 8 atoms take the
// exact path: dx = p - a, r^2 = dx^2 + dy^2 + dz^2, dcs::add_coulomb_term with the clamp at
// min_distance^2 and the skip (the term of atom skip[i] left out by a zero charge). So does a
// tile with some listed point's skip atom. Sums: per lane, a float per chunk of chunk_atoms atoms
// (a quarter of each tile's atoms), added in chunk order, and the four lanes of a point added in
// a fixed tree at the end.
//
// Atoms arrive in Z order (pack_points_atoms), so a group's near atoms fill few tiles.
//
// Where it stands (H200, bench/results/points_2026-11-26_h200.md): 68 % of the MUFU rsqrt
// ceiling (Coulomb), 84 % of rsqrt + ex2 (Debye-Hückel), the same as the FP32 kernel it
// replaced, with half its error. Removing the MUFU work altogether (DCS_POINTS_EXPERIMENT=2)
// gains only 10 %, so the limit is not the special-function unit: ncu counts 3.6 G instructions
// where the fast tiles need ~1.9 G; the exact tiles (the whole tile for one near atom, one row
// at a time through shared memory) and the staging take the rest. ptxas -v: 95-126 registers,
// 0 spills, 42 KiB shared per block of 128 threads, 4 blocks per SM.
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>

#include "cuda_check.hpp"
#include "dcs/backend.hpp"  // kNoAtom
#include "dcs/error.hpp"
#include "dcs/physics.hpp"
#include "dcs/spatial_order.hpp"
#include "launch.hpp"
#include "points/points_kernel.hpp"

namespace dcs::cuda::detail {
namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
#ifndef DCS_POINTS_BLOCKS_PER_SM
#define DCS_POINTS_BLOCKS_PER_SM 4
#endif
constexpr int kBlocksPerSm = DCS_POINTS_BLOCKS_PER_SM;
/// rn = max(kNearFraction R, min_distance): the exact path's reach beyond the group's radius R
/// (header comment; a tuning knob, DCS_POINTS_NEAR_FRACTION, for scripts/gpu/points_variants.sh).
#ifndef DCS_POINTS_NEAR_FRACTION
#define DCS_POINTS_NEAR_FRACTION 0.5
#endif
constexpr double kNearFraction = DCS_POINTS_NEAR_FRACTION;
constexpr int kTiles = kPointsTiles;    ///< 16-point MMA tiles per warp
constexpr int kRound = 64;              ///< atoms per staging round: 2 per lane
constexpr int kAtomTiles = kRound / 8;  ///< 8-atom MMA tiles per round
constexpr int kSubRounds = kRound / 32;
constexpr int kTilePairs = 4 * kTiles;  ///< a lane's pairs per atom tile
/// Atom tiles per straight step of a round without near atoms (a tuning knob for
/// points_variants.sh: more lets ptxas overlap tiles, at the price of registers).
#ifndef DCS_POINTS_UNROLL
#define DCS_POINTS_UNROLL 2
#endif
constexpr int kUnroll = DCS_POINTS_UNROLL;
#ifndef DCS_POINTS_EXPERIMENT
#define DCS_POINTS_EXPERIMENT 0  // 1, 2, 3: timing experiments (fast_tile), wrong values
#endif
constexpr unsigned kFullMask = 0xffffffffu;

/// One warp's shared memory: its points, a round of staged atoms, which tiles go exact.
struct WarpStage {
  float4 raw[kRound][2];               ///< the round's atoms as uploaded, copied ahead (cp.async)
  float4 fragment[kAtomTiles][32];     ///< lane (g, t): {B1[t], B1[t+4], B2[t], B2[t+4]} of atom g
  float4 atom[kRound];                 ///< (-2 ax, -2 ay, -2 az, q), a = atom - centre in Å
  float q[kRound];                     ///< charge times the factor; 0 for padding
  float4 point[kPointsGroup];          ///< (x, y, z) offset from the centre, skip atom's bits
  unsigned exact[kTiles][kSubRounds];  ///< per point tile and 32 atoms: bit u set when atom u
                                       ///< is near the tile's points or one's skip
  float4 sphere[kTiles];               ///< per point tile: centre (offset) and near radius^2
  float group_near2;                   ///< |a|^2 below this: near some tile's sphere, maybe
  float total[2 * kTiles][32];         ///< per lane, row 2 m + r: the sum of finished chunks
  float centre[3];                     ///< float(c)
  float centre_lo[3];                  ///< float(c - float(c))
};

/// Finite x rounded to the nearest TF32 (10 fraction bits, low 13 bits zero; ties away from
/// zero), as a float: two integer instructions where cvt.rna.tf32.f32 takes six (it also
/// guards infinities and NaN, which only NaN atoms bring here, and they make NaN values anyway).
__device__ __forceinline__ float to_tf32(float x) {
  return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
}

/// d = a b + c for one 16 x 8 x 8 TF32 tile (PTX fragment layout: a0 (g, t), a1 (g + 8, t),
/// a2 (g, t + 4), a3 (g + 8, t + 4); b0 (t, g), b1 (t + 4, g); d (g + 8 (i / 2), 2 t + i % 2)).
[[maybe_unused]] __device__ __forceinline__ void mma_tf32(float (&d)[4],
                                                          const std::uint32_t (&a)[4], float b0,
                                                          float b1, const float (&c)[4]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%10,%11,%12,%13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(__float_as_uint(b0)),
        "r"(__float_as_uint(b1)), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

/// 1u << shift with PTX's shl semantics: 0 for shift >= 32 (C++ leaves that undefined).
__device__ __forceinline__ unsigned bit_or_zero(unsigned shift) {
  unsigned result;
  asm("shl.b32 %0, %1, %2;" : "=r"(result) : "r"(1u), "r"(shift));
  return result;
}

/// Whether pair `index` of a lane's kTilePairs per atom tile takes the FMA-pipe rsqrt:
/// Software of them, spread evenly.
template <int Software>
__device__ __forceinline__ constexpr bool takes_software_rsqrt(int index) {
  return (index + 1) * Software / kTilePairs > index * Software / kTilePairs;
}

template <PairKind Kind>
__device__ __forceinline__ auto device_pair_model(float screen_c) {
  if constexpr (Kind == PairKind::kScreened) return ScreenedPair<float>{screen_c};
  else if constexpr (Kind == PairKind::kInverseSquare) return InverseSquarePair{};
  else return CoulombPair{};
}

/// A lane's A fragments: for each 16-point tile, the rows of the two MMAs (header comment):
/// a1 = {A[g][t], A[g + 8][t], A1[g][t + 4], A1[g + 8][t + 4]}, a2 the same with A2's second
/// half (the first halves are equal).
struct PointFragments {
  std::uint32_t a1[kTiles][4];
  std::uint32_t a2[kTiles][4];
};

/// Elements t (both rows), t + 4 of A1 and t + 4 of A2 of the point at offset (x, y, z).
__device__ __forceinline__ void point_row(float x, float y, float z, unsigned t, float& shared,
                                          float& a1, float& a2) {
  const float hx = to_tf32(x), hy = to_tf32(y), hz = to_tf32(z);
  const float lx = to_tf32(x - hx), ly = to_tf32(y - hy), lz = to_tf32(z - hz);
  const float p2 = fmaf(x, x, fmaf(y, y, z * z));
  const float p2h = to_tf32(p2);
  const float p2r = p2 - p2h;  // exact
  const float p2m = to_tf32(p2r);
  const float p2l = to_tf32(p2r - p2m);  // exact: the last bits
  // A1 = [hx hy hz 1 lx ly lz 1], A2 = [hx hy hz 1 p2h p2m p2l 1]
  shared = t == 0 ? hx : t == 1 ? hy : t == 2 ? hz : 1.0f;
  a1 = t == 0 ? lx : t == 1 ? ly : t == 2 ? lz : 1.0f;
  a2 = t == 0 ? p2h : t == 1 ? p2m : t == 2 ? p2l : 1.0f;
}

/// Atom tile j against every point tile: r^2 from the tensor cores without clamp or skip (the
/// fast path: r >= rn >= min_distance there), except for the point tiles m with bit m of
/// `exact`, which some atom of the tile comes near or skips: for them dx = p - a from the
/// staged -2a (a = -(-2a)/2 exactly, so dx is rounded once), the clamp at min_r2 and the skip
/// (atoms index0 + 8 j + ...). The exact path is always MUFU: its pairs are the near ones,
/// where the FMA-pipe cubic's 1.1e-6 would show most.
template <int Software, class Model>
__device__ __forceinline__ void atom_tile(float (&energy)[kTiles][2], const PointFragments& p,
                                          const WarpStage& stage, int j, unsigned lane,
                                          unsigned exact, std::uint32_t index0, float min_r2,
                                          Model model) {
  const float4 b = stage.fragment[j][lane];
  const unsigned g = lane / 4u, t = lane % 4u;
  const int column = 8 * j + 2 * static_cast<int>(t);
  const float2 q = *reinterpret_cast<const float2*>(stage.q + column);
  constexpr float kZero[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
  for (int m = 0; m < kTiles; ++m) {
    if ((exact >> m) & 1u) {
      const std::uint32_t index = index0 + static_cast<std::uint32_t>(column);
#pragma unroll
      for (int row = 0; row < 2; ++row) {
        const float4 point = stage.point[16 * m + static_cast<int>(g) + 8 * row];
        const std::uint32_t skip = __float_as_uint(point.w);
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          const float4 a = stage.atom[column + u];
          const float dx = fmaf(0.5f, a.x, point.x);
          const float dy = fmaf(0.5f, a.y, point.y);
          const float dz = fmaf(0.5f, a.z, point.z);
          const float r2 = fmaf(dx, dx, fmaf(dy, dy, dz * dz));
          const float charge = skip == index + static_cast<std::uint32_t>(u) ? 0.0f : a.w;
          energy[m][row] =
              add_coulomb_term(energy[m][row], charge, r2, min_r2, HardwareRsqrt{}, model);
        }
      }
      continue;
    }
    float partial[4], r2[4];
#if DCS_POINTS_EXPERIMENT == 3  // timing only: no tensor cores
    for (int i = 0; i < 4; ++i) r2[i] = __uint_as_float(p.a1[m][i]) + b.x;
    (void)partial;
    (void)kZero;
#else
    mma_tf32(partial, p.a1[m], b.x, b.y, kZero);
#if DCS_POINTS_EXPERIMENT == 1  // timing only: one MMA per tile
    for (int i = 0; i < 4; ++i) r2[i] = partial[i] + b.z;
#else
    mma_tf32(r2, p.a2[m], b.z, b.w, partial);
#endif
#endif
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float charge = i % 2 == 0 ? q.x : q.y;
      float& e = energy[m][i / 2];
#if DCS_POINTS_EXPERIMENT == 2  // timing only: no MUFU
      e = fmaf(charge, r2[i], e);
      continue;
#endif
      if (takes_software_rsqrt<Software>(4 * m + i))
        e = add_unclamped_coulomb_term(e, charge, r2[i], FmaPipeRsqrt{}, model);
      else e = add_unclamped_coulomb_term(e, charge, r2[i], HardwareRsqrt{}, model);
    }
  }
}

/// Starts copying atoms [base, min(base + kRound, chunk_end)) into stage.raw (cp.async, 16
/// bytes at a time, L2 only), so that the global loads' latency passes while the warp computes
/// the previous round; stage_round() waits for them.
__device__ __forceinline__ void prefetch_round(WarpStage& stage, const PointsAtom* atoms,
                                               std::uint32_t base, std::uint32_t chunk_end) {
  const unsigned lane = threadIdx.x % 32u;
#pragma unroll
  for (int sub = 0; sub < kSubRounds; ++sub) {
    const std::uint32_t k = base + 32u * static_cast<std::uint32_t>(sub) + lane;
    if (k < chunk_end) {
      const auto* source = reinterpret_cast<const float4*>(atoms + k);
      float4* target = stage.raw[32 * sub + static_cast<int>(lane)];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const auto address = static_cast<std::uint32_t>(__cvta_generic_to_shared(target + half));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(address), "l"(source + half)
                     : "memory");
      }
    }
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

/// The warp stages atoms [base, base + kRound) of the chunk that ends at chunk_end (copied into
/// stage.raw by prefetch_round), as seen from its centre, 2 per lane (padding past chunk_end:
/// q = 0, r^2 >= 1), and marks per point tile and 32 atoms those within the tile's near
/// sphere and those that are the skip of one of its points: they take the exact path with it.
__device__ __forceinline__ void stage_round(WarpStage& stage, std::uint32_t base,
                                            std::uint32_t chunk_end, bool group_skips,
                                            const std::uint32_t (&skip)[2]) {
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  const unsigned lane = threadIdx.x % 32u;
  const float cx = stage.centre[0], cy = stage.centre[1], cz = stage.centre[2];
  const float cx_lo = stage.centre_lo[0], cy_lo = stage.centre_lo[1], cz_lo = stage.centre_lo[2];
#pragma unroll
  for (int sub = 0; sub < kSubRounds; ++sub) {
    const std::uint32_t first = base + 32u * static_cast<std::uint32_t>(sub);
    const std::uint32_t k = first + lane;
    float ax = 0.0f, ay = 0.0f, az = 0.0f;  // far from every sphere for padding: see below
    float ax2 = 0.0f, ay2 = 0.0f, az2 = 0.0f, a2 = 1.0f, q = 0.0f;  // -2a, |a|^2
    const bool listed = k < chunk_end;
    const int slot = 32 * sub + static_cast<int>(lane);
    if (listed) {
      const float4 hi = stage.raw[slot][0];  // x, y, z, q: this lane's own copy
      const float4 lo = stage.raw[slot][1];
      // (hi - c) is exact when the atom is near (Sterbenz) and rounded relative to the offset
      // otherwise; the remainders' difference is tiny: one more rounding of the offset's size.
      ax = (hi.x - cx) + (lo.x - cx_lo);
      ay = (hi.y - cy) + (lo.y - cy_lo);
      az = (hi.z - cz) + (lo.z - cz_lo);
      q = hi.w;
      a2 = fmaf(ax, ax, fmaf(ay, ay, az * az));
      ax2 = -2.0f * ax;
      ay2 = -2.0f * ay;
      az2 = -2.0f * az;
    }
    stage.atom[slot] = make_float4(ax2, ay2, az2, q);
    stage.q[slot] = q;
    // B1 = [Ahx Ahy Ahz a2h Ahx Ahy Ahz a2m], B2 = [Alx Aly Alz a2l 1 1 1 0]; the lane that
    // reads atom g's pieces t and t + 4 is 4 g + t.
    // The low pieces go as they are: the tensor core reads their top 19 bits (truncation,
    // 2^-11 of a piece that is itself below 2^-11 of the value).
    const float hx = to_tf32(ax2), hy = to_tf32(ay2), hz = to_tf32(az2);
    const float lx = ax2 - hx, ly = ay2 - hy, lz = az2 - hz;  // exact
    const float a2h = to_tf32(a2);
    const float a2r = a2 - a2h;  // exact
    const float a2m = to_tf32(a2r);
    const float a2l = a2r - a2m;  // exact, and at most 3 significant bits: TF32 holds it
    float4* fragment = &stage.fragment[slot / 8][4 * (slot % 8)];
    fragment[0] = make_float4(hx, hx, lx, 1.0f);
    fragment[1] = make_float4(hy, hy, ly, 1.0f);
    fragment[2] = make_float4(hz, hz, lz, 1.0f);
    fragment[3] = make_float4(a2h, a2m, a2l, 0.0f);
    // Near: within a point tile's sphere (NaN atoms too: they make every value NaN either way).
    // A lane's points are in tiles lane / 16 and 2 + lane / 16; its skips mark the atom for
    // those (bit skip - first: none when the difference, unsigned, is 32 or more). Most rounds
    // have no atom within the sphere that holds every tile's and none of the group's skips:
    // one vote says so, and the per-tile votes are left out.
    const bool maybe_near = listed && !(a2 >= stage.group_near2);
    const bool skips_here =
        group_skips && (skip[0] - first < 32u || skip[1] - first < 32u);  // unsigned
    if (!__any_sync(kFullMask, maybe_near || skips_here)) {
      if (lane < static_cast<unsigned>(kTiles)) stage.exact[lane][sub] = 0u;
      continue;
    }
#pragma unroll
    for (int m = 0; m < kTiles; ++m) {
      const float4 sphere = stage.sphere[m];
      const float dx = ax - sphere.x, dy = ay - sphere.y, dz = az - sphere.z;
      const bool near = listed && !(fmaf(dx, dx, fmaf(dy, dy, dz * dz)) >= sphere.w);
      unsigned exact = __ballot_sync(kFullMask, near);
      if (group_skips) {
        const unsigned mine = m % 2 == static_cast<int>(lane / 16u) ? skip[m / 2] - first : 32u;
        exact |= __reduce_or_sync(kFullMask, bit_or_zero(mine));
      }
      if (lane == 0) stage.exact[m][sub] = exact;
    }
  }
}

template <PairKind Kind, int Software>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    points_kernel(const __grid_constant__ PointsLaunch launch) {
  __shared__ WarpStage stages[kWarps];
  const unsigned lane = threadIdx.x % 32u;
  WarpStage& stage = stages[threadIdx.x / 32u];
  const long long group = static_cast<long long>(blockIdx.x) * kWarps + threadIdx.x / 32u;
  const long long first = group * kPointsGroup;
  const auto n = static_cast<long long>(launch.n);
  if (first >= n) return;  // the whole warp

  // --- The group: centre, float offsets, radius, skips (points lane and lane + 32) --------
  constexpr int kLanePoints = kPointsGroup / 32;
  double px[kLanePoints], py[kLanePoints], pz[kLanePoints];
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  std::uint32_t skip[2] = {kNoAtom, kNoAtom};
  bool any_skip = false;
#pragma unroll
  for (int m = 0; m < kLanePoints; ++m) {
    const long long i = first + lane + 32 * m;
    px[m] = py[m] = pz[m] = 0.0;
    std::uint32_t s = kNoAtom;
    if (i < n) {
      px[m] = launch.d_points[3 * i];
      py[m] = launch.d_points[3 * i + 1];
      pz[m] = launch.d_points[3 * i + 2];
      if (launch.d_skip != nullptr) s = launch.d_skip[i];
      if (isfinite(px[m]) && isfinite(py[m]) && isfinite(pz[m])) {
        lo[0] = fmin(lo[0], px[m]);
        lo[1] = fmin(lo[1], py[m]);
        lo[2] = fmin(lo[2], pz[m]);
        hi[0] = fmax(hi[0], px[m]);
        hi[1] = fmax(hi[1], py[m]);
        hi[2] = fmax(hi[2], pz[m]);
      }
    }
    if (m < 2) skip[m] = s;
    any_skip = any_skip || s != kNoAtom;
  }
  static_assert(kLanePoints <= 2, "a lane's skips are two registers");
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2) {
#pragma unroll
    for (int axis = 0; axis < 3; ++axis) {
      lo[axis] = fmin(lo[axis], __shfl_xor_sync(kFullMask, lo[axis], offset));
      hi[axis] = fmax(hi[axis], __shfl_xor_sync(kFullMask, hi[axis], offset));
    }
  }
  double centre[3];
#pragma unroll
  for (int axis = 0; axis < 3; ++axis)
    centre[axis] = lo[axis] <= hi[axis] ? 0.5 * (lo[axis] + hi[axis]) : 0.0;  // none finite: 0
  double radius2 = 0.0;
#pragma unroll
  for (int m = 0; m < kLanePoints; ++m) {
    // Lanes past the list's end sit at the centre: they neither widen the radius nor compute
    // anything but zeros' worth of work (their values are not stored).
    const bool listed = first + lane + 32 * m < n;
    const float x = listed ? __double2float_rn(px[m] - centre[0]) : 0.0f;
    const float y = listed ? __double2float_rn(py[m] - centre[1]) : 0.0f;
    const float z = listed ? __double2float_rn(pz[m] - centre[2]) : 0.0f;
    stage.point[lane + 32 * m] = make_float4(x, y, z, __uint_as_float(m < 2 ? skip[m] : kNoAtom));
    const double d2 =
        static_cast<double>(x) * x + static_cast<double>(y) * y + static_cast<double>(z) * z;
    if (!isnan(d2)) radius2 = fmax(radius2, d2);  // NaN points (NaN values) do not count
  }
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2)
    radius2 = fmax(radius2, __shfl_xor_sync(kFullMask, radius2, offset));
  // Atoms within rn of some point take the exact path (header comment): those within
  // R_m + rn of the centre c_m of point tile m's bounding box, R_m its radius. The margin,
  // 2^-18 relative, covers the roundings of the staged offsets and of |a - c_m|^2.
  const double near_reach = fmax(kNearFraction * sqrt(radius2), launch.min_distance);
  double group_reach = 0.0;
  __syncwarp();
#pragma unroll
  for (int m = 0; m < kLanePoints; ++m) {  // lane's point m is in tile 2 m + lane / 16
    const float4 own = stage.point[lane + 32 * m];
    float lo3[3] = {own.x, own.y, own.z}, hi3[3] = {own.x, own.y, own.z};
#pragma unroll
    for (int offset = 8; offset >= 1; offset /= 2) {  // within the 16 lanes of the tile
#pragma unroll
      for (int axis = 0; axis < 3; ++axis) {
        lo3[axis] = fminf(lo3[axis], __shfl_xor_sync(kFullMask, lo3[axis], offset));
        hi3[axis] = fmaxf(hi3[axis], __shfl_xor_sync(kFullMask, hi3[axis], offset));
      }
    }
    float c[3];
#pragma unroll
    for (int axis = 0; axis < 3; ++axis)
      c[axis] = lo3[axis] <= hi3[axis] ? 0.5f * (lo3[axis] + hi3[axis]) : 0.0f;  // all NaN: 0
    const double dx = static_cast<double>(own.x) - c[0], dy = static_cast<double>(own.y) - c[1],
                 dz = static_cast<double>(own.z) - c[2];
    double tile_r2 = dx * dx + dy * dy + dz * dz;
    if (isnan(tile_r2)) tile_r2 = 0.0;
#pragma unroll
    for (int offset = 8; offset >= 1; offset /= 2)
      tile_r2 = fmax(tile_r2, __shfl_xor_sync(kFullMask, tile_r2, offset));
    const double near = sqrt(tile_r2) + near_reach;
    if (lane % 16u == 0)
      stage.sphere[2 * m + static_cast<int>(lane / 16u)] =
          make_float4(c[0], c[1], c[2], __double2float_ru(near * near * (1.0 + 0x1p-18)));
    // The sphere around the group's centre that holds this one: radius |c_m| + near.
    const double outer = sqrt(static_cast<double>(c[0]) * c[0] + static_cast<double>(c[1]) * c[1] +
                              static_cast<double>(c[2]) * c[2]) +
                         near;
    group_reach = fmax(group_reach, outer);
  }
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2)
    group_reach = fmax(group_reach, __shfl_xor_sync(kFullMask, group_reach, offset));
  if (lane == 0) stage.group_near2 = __double2float_ru(group_reach * group_reach * (1.0 + 0x1p-18));
  const float min_r2 = static_cast<float>(launch.min_distance * launch.min_distance);
  const bool group_skips = __any_sync(kFullMask, any_skip);
  if (lane == 0) {
#pragma unroll
    for (int axis = 0; axis < 3; ++axis) {
      stage.centre[axis] = __double2float_rn(centre[axis]);
      stage.centre_lo[axis] =
          __double2float_rn(centre[axis] - static_cast<double>(stage.centre[axis]));
    }
  }
  __syncwarp();
  // This lane's A fragments: rows g and g + 8 of every tile, elements t and t + 4.
  PointFragments fragments;
  {
    const unsigned g = lane / 4u, t = lane % 4u;
#pragma unroll
    for (int m = 0; m < kTiles; ++m) {
#pragma unroll
      for (int row = 0; row < 2; ++row) {
        const float4 p = stage.point[16 * m + static_cast<int>(g) + 8 * row];
        float shared, a1, a2;
        point_row(p.x, p.y, p.z, t, shared, a1, a2);
        fragments.a1[m][row] = fragments.a2[m][row] = __float_as_uint(shared);
        fragments.a1[m][row + 2] = __float_as_uint(a1);
        fragments.a2[m][row + 2] = __float_as_uint(a2);
      }
    }
  }

  const auto model = device_pair_model<Kind>(launch.screen_c);
  const auto atom_count = static_cast<std::uint32_t>(launch.atom_count);
  const auto chunk_atoms = static_cast<std::uint32_t>(launch.chunk_atoms);
  prefetch_round(stage, launch.d_atoms, 0, min(atom_count, chunk_atoms));
  for (std::uint32_t chunk = 0; chunk < atom_count; chunk += chunk_atoms) {
    const std::uint32_t chunk_end = min(atom_count, chunk + chunk_atoms);
    float energy[kTiles][2] = {};
    for (std::uint32_t base = chunk; base < chunk_end; base += kRound) {
      __syncwarp();  // every lane is done with the previous round
      stage_round(stage, base, chunk_end, group_skips, skip);
      // The next round (of this chunk or the next; none after the last) copies in while the
      // warp computes this one: stage.raw is free once staged.
      const std::uint32_t next = base + kRound < chunk_end ? base + kRound : chunk_end;
      if (next < atom_count)
        prefetch_round(stage, launch.d_atoms, next,
                       next < chunk_end ? chunk_end : min(atom_count, next + chunk_atoms));
      __syncwarp();
      // Whole tiles of 8 (at most 7 padding atoms per chunk); a round without a near or skip
      // atom (the usual case) runs straight, others decide per tile.
      const int tiles = static_cast<int>(
          min(static_cast<std::uint32_t>(kAtomTiles), (chunk_end - base + 7u) / 8u));
      static_assert(kSubRounds == 2, "a round's exact bits are one 64-bit word per tile");
      std::uint64_t exact[kTiles];
      std::uint64_t any = 0;
#pragma unroll
      for (int m = 0; m < kTiles; ++m) {
        exact[m] = stage.exact[m][0] | static_cast<std::uint64_t>(stage.exact[m][1]) << 32;
        any |= exact[m];
      }
      if (tiles == kAtomTiles && any == 0u) {
#pragma unroll kUnroll
        for (int j = 0; j < kAtomTiles; ++j)
          atom_tile<Software>(energy, fragments, stage, j, lane, 0u, base, min_r2, model);
      } else {
#pragma unroll 1
        for (int j = 0; j < tiles; ++j) {
          unsigned tile_exact = 0;
#pragma unroll
          for (int m = 0; m < kTiles; ++m)
            tile_exact |= ((exact[m] >> (8 * j)) & 0xffu) != 0u ? 1u << m : 0u;
          atom_tile<Software>(energy, fragments, stage, j, lane, tile_exact, base, min_r2, model);
        }
      }
    }
    // One float sum per chunk, added in chunk order (the first overwrites); each lane touches
    // only its own shared slots.
#pragma unroll
    for (int k = 0; k < 2 * kTiles; ++k) {
      const float sum = energy[k / 2][k % 2];
      stage.total[k][lane] = chunk == 0 ? sum : stage.total[k][lane] + sum;
    }
  }

  // The four lanes of a row hold its sums over atoms 2t, 2t + 1 of every tile: a fixed tree
  // ((t0 + t1) + (t2 + t3)) in every lane (addition commutes exactly), stored by lane t = 0.
#pragma unroll
  for (int m = 0; m < kTiles; ++m) {
#pragma unroll
    for (int row = 0; row < 2; ++row) {
      float v = stage.total[2 * m + row][lane];
      v += __shfl_xor_sync(kFullMask, v, 1);
      v += __shfl_xor_sync(kFullMask, v, 2);
      const long long i = first + 16 * m + lane / 4u + 8 * row;
      if (lane % 4u == 0 && i < n) launch.d_out[i] = v;
    }
  }
}

/// FMA-pipe rsqrt pairs of a lane's kTilePairs per atom tile for the balanced policy: the
/// tensor cores leave most issue slots free, so a quarter of the rsqrts (Coulomb, eps = k r;
/// the screened term's EX2 stays on MUFU either way) go to the FMA pipe.
template <PairKind Kind>
constexpr int balanced_software_pairs() {
  return kTilePairs / 4;
}

template <PairKind Kind>
void launch_model(const PointsLaunch& launch, const LaunchConfig& config, StreamView stream) {
  if (launch.rsqrt == PointsRsqrt::kMufu)
    points_kernel<Kind, 0><<<config.grid, config.block, config.smem, stream.get()>>>(launch);
  else
    points_kernel<Kind, balanced_software_pairs<Kind>()>
        <<<config.grid, config.block, config.smem, stream.get()>>>(launch);
}

}  // namespace

std::vector<PointsAtom> pack_points_atoms(const System& system, double factor,
                                          std::vector<std::uint32_t>& rank) {
  std::vector<Vec3> positions;
  positions.reserve(system.atoms.size());
  for (const Atom& atom : system.atoms) positions.push_back(atom.position);
  const std::vector<std::size_t> order = spatial_order(positions);
  std::vector<PointsAtom> atoms;
  atoms.reserve(order.size());
  rank.assign(order.size(), 0);
  for (std::size_t place = 0; place < order.size(); ++place) {
    const Atom& atom = system.atoms[order[place]];
    atoms.push_back(make_points_atom(atom.position[0], atom.position[1], atom.position[2],
                                     atom.charge * factor));
    rank[order[place]] = static_cast<std::uint32_t>(place);
  }
  return atoms;
}

void launch_points(const PointsLaunch& launch, StreamView stream) {
  if (launch.n == 0) return;
  // Atom indices, chunk ends and the next round's index stay below 2^32 - 1 (kNoAtom).
  constexpr auto kMaxAtoms = static_cast<std::size_t>(INT_MAX);
  if (launch.atom_count < 1 || launch.atom_count > kMaxAtoms || launch.chunk_atoms < 1 ||
      launch.chunk_atoms > kMaxAtoms)
    throw CudaError("points kernel: " + std::to_string(launch.atom_count) + " atoms in chunks of " +
                    std::to_string(launch.chunk_atoms) + " are outside the 31-bit atom index");
  const long long groups = static_cast<long long>((launch.n + kPointsGroup - 1) /
                                                  static_cast<std::size_t>(kPointsGroup));
  const long long blocks = (groups + kWarps - 1) / kWarps;
  if (blocks > INT_MAX)
    throw CudaError("points kernel: " + std::to_string(launch.n) + " points in one launch");
  const LaunchConfig config{dim3(static_cast<unsigned>(blocks)), dim3(kThreads), 0};
  log_launch("points", config);
  switch (launch.pair) {
    case PairKind::kScreened: launch_model<PairKind::kScreened>(launch, config, stream); break;
    case PairKind::kInverseSquare:
      launch_model<PairKind::kInverseSquare>(launch, config, stream);
      break;
    case PairKind::kCoulomb: launch_model<PairKind::kCoulomb>(launch, config, stream); break;
  }
  DCS_CUDA_CHECK_LAUNCH("points", stream.get());
}

}  // namespace dcs::cuda::detail
