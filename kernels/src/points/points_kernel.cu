// The points kernel: the potential at arbitrary points (surface vertices, atoms, point lists),
// one launch per compute_points() call. Why tensor cores: for points in no particular
// arrangement an expanded r^2 costs four FP32 instructions per pair, which with the MUFU and the
// accumulating FFMA fills the issue slots before the special-function unit (the FP32 kernels
// reached 62-68 % of the MUFU rsqrt ceiling). Here two mma.sync.m16n8k8 TF32 instructions form
// the r^2 of a 16-point x 8-atom tile from split (hi + lo) coordinates, so that a pair costs
// about 1 MUFU + 1 FFMA + 2/16 HMMA + 1/8 LDS of issue; atoms near a tile's points take an
// exact FP32 path. It runs at 71 % of the rsqrt ceiling (Coulomb), 86 % of rsqrt + ex2
// (Debye-Hückel), 3-8e-7 of max|V| (bench/results/points_2026-11-26_h200.md). The design
// (fragment layout, error bound, exact path, sums) and every variant measured, with the commit
// that holds its code, are in docs/points-kernel.md.
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

constexpr int kWarps = kPointsWarps;
constexpr int kThreads = 32 * kWarps;
constexpr int kBlocksPerSm = 4;  ///< 103-128 registers, 23.9 KiB shared, no spills (ptxas -v)
/// rn = max(kNearFraction R, min_distance): the exact path's reach beyond the block's radius R
/// (docs/points-kernel.md).
constexpr double kNearFraction = 0.5;
constexpr int kTiles = kPointsTiles;    ///< 16-point MMA tiles per warp
constexpr int kRound = kThreads;        ///< atoms per staging round: 1 per thread of the block
constexpr int kAtomTiles = kRound / 8;  ///< 8-atom MMA tiles per round
constexpr int kSubRounds = kRound / 32;
constexpr int kTilePairs = 4 * kTiles;  ///< a lane's pairs per atom tile
/// FMA-pipe rsqrt pairs of a lane's kTilePairs per atom tile for the balanced policy: the
/// tensor cores leave most issue slots free, so a quarter of the rsqrts (Coulomb, eps = k r;
/// the screened term's EX2 stays on MUFU either way) go to the FMA pipe.
constexpr int kBalancedSoftwarePairs = kTilePairs / 4;
constexpr unsigned kFullMask = 0xffffffffu;

/// One warp's part of the block's shared memory: its points, their tiles' near spheres, which
/// of the round's atoms come near them, its finished chunks' sums.
struct WarpPart {
  float4 point[kPointsGroup];          ///< (x, y, z) offset from the block's centre, skip's bits
  float4 sphere[kTiles];               ///< per point tile: centre (offset) and near radius^2
  float4 outer;                        ///< a sphere around every tile's sphere: centre, radius^2
  unsigned exact[kTiles][kSubRounds];  ///< per point tile and 32 atoms: bit u set when atom u
                                       ///< is near the tile's points or one's skip
  float total[2 * kTiles][32];         ///< per lane, row 2 m + r: the sum of finished chunks
};

/// The block's shared memory: a round of atoms as uploaded (copied ahead) and as staged, once for
/// the block's four warps, and each warp's part.
struct BlockStage {
  float4 raw[kRound][2];  ///< thread i's atom of the next round (cp.async)
  /// The staged round: fragment[j][lane], lane (g, t), is {B1[t], B1[t+4], B2[t], B2[t+4]} of
  /// atom 8 j + g; atom[i] is (-2 ax, -2 ay, -2 az, q), a = atom - centre in Å; q[i] the charge
  /// times the factor (0 for padding).
  float4 fragment[kAtomTiles][32];
  float4 atom[kRound];
  float q[kRound];
  WarpPart warp[kWarps];
  double box[kWarps][6];   ///< each warp's points' bounding box: lo, hi
  double radius2[kWarps];  ///< each warp's largest |p - c|^2 about the block's centre
  float centre[3];         ///< float(c)
  float centre_lo[3];      ///< float(c - float(c))
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

/// A lane's A fragments: for each 16-point tile, the rows of the two MMAs that form r^2 from
/// the points' pieces p = ph + pl (point_row) and the atoms' A = -2a = Ah + Al (stage_atom):
///   A1 = [phx phy phz 1 plx ply plz 1]      B1 = [Ahx Ahy Ahz a2h Ahx Ahy Ahz a2m]
///   A2 = [phx phy phz 1 p2h p2m p2l 1]      B2 = [Alx Aly Alz a2l 1   1   1   0  ]
/// D = A1.B1 + A2.B2 = r^2 - pl.Al (docs/points-kernel.md bounds the error). In registers:
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

/// r^2 of the atom tile whose B fragments are b against point tile m, the fast path's way: two
/// chained MMAs, D = A1.B1 + A2.B2 (PointFragments), no clamp or skip.
__device__ __forceinline__ void fast_r2(float (&r2)[4], const PointFragments& p, float4 b, int m) {
  constexpr float kZero[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  float partial[4];
  mma_tf32(partial, p.a1[m], b.x, b.y, kZero);
  mma_tf32(r2, p.a2[m], b.z, b.w, partial);
}

/// The fast path's terms of point tile m (r^2 from fast_r2) with the atom tile's two atoms of
/// this lane (charges q), added to energy in the order i = 0..3.
template <int Software, class Model>
__device__ __forceinline__ void fast_sum(float (&energy)[kTiles][2], const float (&r2)[4], float2 q,
                                         int m, Model model) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float charge = i % 2 == 0 ? q.x : q.y;
    float& e = energy[m][i / 2];
    if (takes_software_rsqrt<Software>(4 * m + i))
      e = add_unclamped_coulomb_term(e, charge, r2[i], FmaPipeRsqrt{}, model);
    else e = add_unclamped_coulomb_term(e, charge, r2[i], HardwareRsqrt{}, model);
  }
}

/// Atom tile j against every point tile: r^2 from the tensor cores without clamp or skip (the
/// fast path: r >= rn >= min_distance there), except for the point tiles m with bit m of
/// `exact`, which some atom of the tile comes near or skips: for them dx = p - a from the
/// staged -2a (a = -(-2a)/2 exactly, so dx is rounded once), the clamp at min_r2 and the skip
/// (atoms index0 + 8 j + ...). The exact path is always MUFU: its pairs are the near ones,
/// where the FMA-pipe cubic's 1.1e-6 would show most.
template <int Software, class Model>
__device__ __forceinline__ void atom_tile(float (&energy)[kTiles][2], const PointFragments& p,
                                          const BlockStage& stage, const WarpPart& part, int j,
                                          unsigned lane, unsigned exact, std::uint32_t index0,
                                          float min_r2, Model model) {
  const float4 b = stage.fragment[j][lane];
  const unsigned g = lane / 4u, t = lane % 4u;
  const int column = 8 * j + 2 * static_cast<int>(t);
  const float2 q = *reinterpret_cast<const float2*>(stage.q + column);
#pragma unroll
  for (int m = 0; m < kTiles; ++m) {
    if ((exact >> m) & 1u) {
      const std::uint32_t index = index0 + static_cast<std::uint32_t>(column);
#pragma unroll
      for (int row = 0; row < 2; ++row) {
        const float4 point = part.point[16 * m + static_cast<int>(g) + 8 * row];
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
    float r2[4];
    fast_r2(r2, p, b, m);
    fast_sum<Software>(energy, r2, q, m, model);
  }
}

/// Starts copying this thread's atom of the round [base, base + kRound) into stage.raw
/// (cp.async, two 16-byte pieces, L2 only; none past chunk_end), so that the global load's
/// latency passes while the block computes the previous round; stage_atom() waits for it.
__device__ __forceinline__ void prefetch_atom(BlockStage& stage, const PointsAtom* atoms,
                                              std::uint32_t base, std::uint32_t chunk_end) {
  const std::uint32_t k = base + threadIdx.x;
  if (k < chunk_end) {
    const auto* source = reinterpret_cast<const float4*>(atoms + k);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const auto address =
          static_cast<std::uint32_t>(__cvta_generic_to_shared(&stage.raw[threadIdx.x][half]));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(address), "l"(source + half)
                   : "memory");
    }
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

/// Thread i stages atom base + i of the chunk that ends at chunk_end (padding past it: q = 0,
/// r^2 >= 1) as seen from the block's centre: its B fragments in the order the MMA reads them,
/// the plain offsets and the charge.
__device__ __forceinline__ void stage_atom(BlockStage& stage, std::uint32_t base,
                                           std::uint32_t chunk_end) {
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  const int slot = static_cast<int>(threadIdx.x);
  float ax2 = 0.0f, ay2 = 0.0f, az2 = 0.0f, a2 = 1.0f, q = 0.0f;  // -2a, |a|^2
  if (base + threadIdx.x < chunk_end) {
    const float4 hi = stage.raw[slot][0];  // x, y, z, q: this thread's own copy
    const float4 lo = stage.raw[slot][1];
    // (hi - c) is exact when the atom is near (Sterbenz) and rounded relative to the offset
    // otherwise; the remainders' difference is tiny: one more rounding of the offset's size.
    const float ax = (hi.x - stage.centre[0]) + (lo.x - stage.centre_lo[0]);
    const float ay = (hi.y - stage.centre[1]) + (lo.y - stage.centre_lo[1]);
    const float az = (hi.z - stage.centre[2]) + (lo.z - stage.centre_lo[2]);
    q = hi.w;
    a2 = fmaf(ax, ax, fmaf(ay, ay, az * az));
    ax2 = -2.0f * ax;
    ay2 = -2.0f * ay;
    az2 = -2.0f * az;
  }
  stage.atom[slot] = make_float4(ax2, ay2, az2, q);
  stage.q[slot] = q;
  // B1 = [Ahx Ahy Ahz a2h Ahx Ahy Ahz a2m], B2 = [Alx Aly Alz a2l 1 1 1 0]; the lane that
  // reads atom g's pieces t and t + 4 is 4 g + t. The low pieces go as they are: the tensor
  // core reads their top 19 bits (truncation, 2^-11 of a piece below 2^-11 of the value).
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
}

/// The warp marks, per point tile and 32 of the round's staged atoms, those within the tile's
/// near sphere (NaN atoms too: they make every value NaN either way) and those that are the
/// skip of one of its points (a lane's points are in tiles lane / 16 and 2 + lane / 16; bit
/// skip - first, none when the difference, unsigned, is 32 or more). Most rounds have no atom
/// within the warp's outer sphere and none of its skips: one vote per 32 says so.
__device__ __forceinline__ void mark_near(const BlockStage& stage, WarpPart& part,
                                          std::uint32_t base, std::uint32_t chunk_end,
                                          bool group_skips, const std::uint32_t (&skip)[2]) {
  const unsigned lane = threadIdx.x % 32u;
  const float4 outer = part.outer;
#pragma unroll 1
  for (int sub = 0; sub < kSubRounds; ++sub) {
    const std::uint32_t first = base + 32u * static_cast<std::uint32_t>(sub);
    const bool listed = first + lane < chunk_end;
    const float4 staged = stage.atom[32 * sub + static_cast<int>(lane)];
    const float ax = -0.5f * staged.x, ay = -0.5f * staged.y, az = -0.5f * staged.z;  // exact
    const float ox = ax - outer.x, oy = ay - outer.y, oz = az - outer.z;
    const bool maybe_near = listed && !(fmaf(ox, ox, fmaf(oy, oy, oz * oz)) >= outer.w);
    const bool skips_here =
        group_skips && (skip[0] - first < 32u || skip[1] - first < 32u);  // unsigned
    if (!__any_sync(kFullMask, maybe_near || skips_here)) {
      if (lane < static_cast<unsigned>(kTiles)) part.exact[lane][sub] = 0u;
      continue;
    }
#pragma unroll
    for (int m = 0; m < kTiles; ++m) {
      const float4 sphere = part.sphere[m];
      const float dx = ax - sphere.x, dy = ay - sphere.y, dz = az - sphere.z;
      const bool near = listed && !(fmaf(dx, dx, fmaf(dy, dy, dz * dz)) >= sphere.w);
      unsigned exact = __ballot_sync(kFullMask, near);
      if (group_skips) {
        const unsigned mine = m % 2 == static_cast<int>(lane / 16u) ? skip[m / 2] - first : 32u;
        exact |= __reduce_or_sync(kFullMask, bit_or_zero(mine));
      }
      if (lane == 0) part.exact[m][sub] = exact;
    }
  }
}

constexpr int kLanePoints = kPointsGroup / 32;
static_assert(kLanePoints == 2, "a lane's points and skips are two");

/// A lane's points lane and lane + 32 of the warp's group as read: coordinates (0 past the
/// list's end) and skips (kNoAtom where none). It names the kernel's own arrays (one array per
/// coordinate keeps the code ptxas is given, and so its registers, as they were).
struct LanePoints {
  double (&x)[kLanePoints];
  double (&y)[kLanePoints];
  double (&z)[kLanePoints];
  std::uint32_t (&skip)[kLanePoints];
};

/// Reads the lane's points from `first` on into `points` and widens `box` (lo, hi) by the
/// finite ones; returns whether any of them has a skip.
__device__ __forceinline__ bool load_lane_points(const PointsLaunch& launch, long long first,
                                                 unsigned lane, const LanePoints& points,
                                                 double (&box)[6]) {
  const auto n = static_cast<long long>(launch.n);
  bool any_skip = false;
#pragma unroll
  for (int m = 0; m < kLanePoints; ++m) {
    const long long i = first + lane + 32 * m;
    points.x[m] = points.y[m] = points.z[m] = 0.0;
    points.skip[m] = kNoAtom;
    if (i < n) {
      points.x[m] = launch.d_points[3 * i];
      points.y[m] = launch.d_points[3 * i + 1];
      points.z[m] = launch.d_points[3 * i + 2];
      if (launch.d_skip != nullptr) points.skip[m] = launch.d_skip[i];
      if (isfinite(points.x[m]) && isfinite(points.y[m]) && isfinite(points.z[m])) {
        box[0] = fmin(box[0], points.x[m]);
        box[1] = fmin(box[1], points.y[m]);
        box[2] = fmin(box[2], points.z[m]);
        box[3] = fmax(box[3], points.x[m]);
        box[4] = fmax(box[4], points.y[m]);
        box[5] = fmax(box[5], points.z[m]);
      }
    }
    any_skip = any_skip || points.skip[m] != kNoAtom;
  }
  return any_skip;
}

/// The block's centre: the midpoint of the union of its warps' bounding boxes (each lane's
/// `box` reduced over the warp first). Min and max are exact: the same whatever the order.
/// Every thread of the block calls it (one block barrier).
__device__ __forceinline__ void block_centre(BlockStage& stage, int warp, unsigned lane,
                                             double (&box)[6], double (&centre)[3]) {
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2) {
#pragma unroll
    for (int axis = 0; axis < 3; ++axis) {
      box[axis] = fmin(box[axis], __shfl_xor_sync(kFullMask, box[axis], offset));
      box[axis + 3] = fmax(box[axis + 3], __shfl_xor_sync(kFullMask, box[axis + 3], offset));
    }
  }
  if (lane == 0) {
#pragma unroll
    for (int k = 0; k < 6; ++k) stage.box[warp][k] = box[k];
  }
  __syncthreads();
#pragma unroll
  for (int axis = 0; axis < 3; ++axis) {
    double lo = HUGE_VAL, hi = -HUGE_VAL;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      lo = fmin(lo, stage.box[w][axis]);
      hi = fmax(hi, stage.box[w][axis + 3]);
    }
    centre[axis] = lo <= hi ? 0.5 * (lo + hi) : 0.0;  // none finite: 0
  }
}

/// Stores the lane's points as float offsets from the block's centre (with their skips) and
/// the centre as float pieces; returns the block's radius^2 about it. Every thread of the block
/// calls it (one block barrier).
__device__ __forceinline__ double place_points(BlockStage& stage, WarpPart& part, int warp,
                                               unsigned lane, long long first, long long n,
                                               const LanePoints& points,
                                               const double (&centre)[3]) {
  double radius2 = 0.0;
#pragma unroll
  for (int m = 0; m < kLanePoints; ++m) {
    // Points past the list's end sit at the centre: they neither widen the radius nor compute
    // anything but zeros' worth of work (their values are not stored).
    const bool listed = first + lane + 32 * m < n;
    const float x = listed ? __double2float_rn(points.x[m] - centre[0]) : 0.0f;
    const float y = listed ? __double2float_rn(points.y[m] - centre[1]) : 0.0f;
    const float z = listed ? __double2float_rn(points.z[m] - centre[2]) : 0.0f;
    part.point[lane + 32 * m] = make_float4(x, y, z, __uint_as_float(points.skip[m]));
    const double d2 =
        static_cast<double>(x) * x + static_cast<double>(y) * y + static_cast<double>(z) * z;
    if (!isnan(d2)) radius2 = fmax(radius2, d2);  // NaN points (NaN values) do not count
  }
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2)
    radius2 = fmax(radius2, __shfl_xor_sync(kFullMask, radius2, offset));
  if (lane == 0) stage.radius2[warp] = radius2;
  if (threadIdx.x == 0) {
#pragma unroll
    for (int axis = 0; axis < 3; ++axis) {
      stage.centre[axis] = __double2float_rn(centre[axis]);
      stage.centre_lo[axis] =
          __double2float_rn(centre[axis] - static_cast<double>(stage.centre[axis]));
    }
  }
  __syncthreads();
  double block_radius2 = 0.0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) block_radius2 = fmax(block_radius2, stage.radius2[w]);
  return block_radius2;
}

/// Atoms within rn = max(kNearFraction R, min_distance) of some point take the exact path
/// (docs/points-kernel.md), R the block's radius: those within R_m + rn of the centre c_m of point
/// tile m's bounding box, R_m its radius. The margin, 2^-18 relative, covers the roundings of
/// the staged offsets and of |a - c_m|^2. Fills part.sphere and gives the lane's tiles' centres
/// and near reaches R_m + rn.
__device__ __forceinline__ void tile_spheres(WarpPart& part, unsigned lane, double near_reach,
                                             float (&tile_centre)[kLanePoints][3],
                                             double (&tile_near)[kLanePoints]) {
#pragma unroll
  for (int m = 0; m < kLanePoints; ++m) {  // lane's point m is in tile 2 m + lane / 16
    const float4 own = part.point[lane + 32 * m];
    float lo3[3] = {own.x, own.y, own.z}, hi3[3] = {own.x, own.y, own.z};
#pragma unroll
    for (int offset = 8; offset >= 1; offset /= 2) {  // within the 16 lanes of the tile
#pragma unroll
      for (int axis = 0; axis < 3; ++axis) {
        lo3[axis] = fminf(lo3[axis], __shfl_xor_sync(kFullMask, lo3[axis], offset));
        hi3[axis] = fmaxf(hi3[axis], __shfl_xor_sync(kFullMask, hi3[axis], offset));
      }
    }
#pragma unroll
    for (int axis = 0; axis < 3; ++axis)
      tile_centre[m][axis] = lo3[axis] <= hi3[axis] ? 0.5f * (lo3[axis] + hi3[axis]) : 0.0f;
    const double dx = static_cast<double>(own.x) - tile_centre[m][0];
    const double dy = static_cast<double>(own.y) - tile_centre[m][1];
    const double dz = static_cast<double>(own.z) - tile_centre[m][2];
    double tile_r2 = dx * dx + dy * dy + dz * dz;
    if (isnan(tile_r2)) tile_r2 = 0.0;
#pragma unroll
    for (int offset = 8; offset >= 1; offset /= 2)
      tile_r2 = fmax(tile_r2, __shfl_xor_sync(kFullMask, tile_r2, offset));
    tile_near[m] = sqrt(tile_r2) + near_reach;
    if (lane % 16u == 0)
      part.sphere[2 * m + static_cast<int>(lane / 16u)] =
          make_float4(tile_centre[m][0], tile_centre[m][1], tile_centre[m][2],
                      __double2float_ru(tile_near[m] * tile_near[m] * (1.0 + 0x1p-18)));
  }
}

/// The warp's outer sphere, which holds its tiles' near spheres: centred on tile 0's centre
/// (lane 0 has it), radius the largest |c_m - c_0| + near_m over the four tiles.
__device__ __forceinline__ void outer_sphere(WarpPart& part, unsigned lane,
                                             const float (&tile_centre)[kLanePoints][3],
                                             const double (&tile_near)[kLanePoints]) {
  float c0[3];
#pragma unroll
  for (int axis = 0; axis < 3; ++axis) c0[axis] = __shfl_sync(kFullMask, tile_centre[0][axis], 0);
  double reach = 0.0;
#pragma unroll
  for (int m = 0; m < kLanePoints; ++m) {
    const double dx = static_cast<double>(tile_centre[m][0]) - c0[0];
    const double dy = static_cast<double>(tile_centre[m][1]) - c0[1];
    const double dz = static_cast<double>(tile_centre[m][2]) - c0[2];
    reach = fmax(reach, sqrt(dx * dx + dy * dy + dz * dz) + tile_near[m]);
  }
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2)
    reach = fmax(reach, __shfl_xor_sync(kFullMask, reach, offset));
  if (lane == 0)
    part.outer =
        make_float4(c0[0], c0[1], c0[2], __double2float_ru(reach * reach * (1.0 + 0x1p-18)));
}

/// This lane's A fragments: rows g and g + 8 of every tile, elements t and t + 4.
__device__ __forceinline__ void point_fragments(PointFragments& fragments, const WarpPart& part,
                                                unsigned lane) {
  const unsigned g = lane / 4u, t = lane % 4u;
#pragma unroll
  for (int m = 0; m < kTiles; ++m) {
#pragma unroll
    for (int row = 0; row < 2; ++row) {
      const float4 p = part.point[16 * m + static_cast<int>(g) + 8 * row];
      float shared, a1, a2;
      point_row(p.x, p.y, p.z, t, shared, a1, a2);
      fragments.a1[m][row] = fragments.a2[m][row] = __float_as_uint(shared);
      fragments.a1[m][row + 2] = __float_as_uint(a1);
      fragments.a2[m][row + 2] = __float_as_uint(a2);
    }
  }
}

/// What a warp's rounds read besides the staged atoms: its points' fragments and skips, whether
/// any point of the warp skips, the clamp and the pair model.
template <class Model>
struct WarpWork {
  const PointFragments& fragments;
  const std::uint32_t (&skip)[kLanePoints];
  bool group_skips;
  float min_r2;
  Model model;
};

/// Every pair of one staged round with the warp's points, added to energy.
template <int Software, class Model>
__device__ __forceinline__ void compute_round(float (&energy)[kTiles][2], const BlockStage& stage,
                                              WarpPart& part, unsigned lane,
                                              const WarpWork<Model>& work, std::uint32_t base,
                                              std::uint32_t chunk_end) {
  mark_near(stage, part, base, chunk_end, work.group_skips, work.skip);
  __syncwarp();
  // Whole tiles of 8 (at most 7 padding atoms per chunk); a round without a near or skip
  // atom (the usual case) runs straight, others decide per tile.
  const int tiles =
      static_cast<int>(min(static_cast<std::uint32_t>(kAtomTiles), (chunk_end - base + 7u) / 8u));
  unsigned any = 0;
#pragma unroll
  for (int m = 0; m < kTiles; ++m) {
#pragma unroll
    for (int sub = 0; sub < kSubRounds; ++sub) any |= part.exact[m][sub];
  }
  if (tiles == kAtomTiles && any == 0u) {
#pragma unroll 2  // two atom tiles per step: ptxas overlaps them (more cost registers)
    for (int j = 0; j < kAtomTiles; ++j)
      atom_tile<Software>(energy, work.fragments, stage, part, j, lane, 0u, base, work.min_r2,
                          work.model);
  } else {
#pragma unroll 1
    for (int j = 0; j < tiles; ++j) {
      unsigned tile_exact = 0;
#pragma unroll
      for (int m = 0; m < kTiles; ++m)
        tile_exact |= ((part.exact[m][j / 4] >> (8 * (j % 4))) & 0xffu) != 0u ? 1u << m : 0u;
      atom_tile<Software>(energy, work.fragments, stage, part, j, lane, tile_exact, base,
                          work.min_r2, work.model);
    }
  }
}

/// The four lanes of a row hold its sums over atoms 2t, 2t + 1 of every tile: a fixed tree
/// ((t0 + t1) + (t2 + t3)) in every lane (addition commutes exactly), stored by lane t = 0.
__device__ __forceinline__ void store_values(const PointsLaunch& launch, const WarpPart& part,
                                             unsigned lane, long long first, long long n) {
#pragma unroll
  for (int m = 0; m < kTiles; ++m) {
#pragma unroll
    for (int row = 0; row < 2; ++row) {
      float v = part.total[2 * m + row][lane];
      v += __shfl_xor_sync(kFullMask, v, 1);
      v += __shfl_xor_sync(kFullMask, v, 2);
      const long long i = first + 16 * m + lane / 4u + 8 * row;
      if (lane % 4u == 0 && i < n) launch.d_out[i] = v;
    }
  }
}

/// One block: kWarps warps of kPointsGroup consecutive points each, with one centre (the
/// midpoint of the block's points' bounding box) so that the block stages each round of atoms
/// once for all its warps.
template <PairKind Kind, int Software>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    points_kernel(const __grid_constant__ PointsLaunch launch) {
  __shared__ BlockStage stage;
  const unsigned lane = threadIdx.x % 32u;
  const int warp = static_cast<int>(threadIdx.x / 32u);
  WarpPart& part = stage.warp[warp];
  const long long first = (static_cast<long long>(blockIdx.x) * kWarps + warp) * kPointsGroup;
  const auto n = static_cast<long long>(launch.n);
  const bool active = first < n;  // warps past the list's end only stage (block barriers)

  // The block's centre, the warp's float offsets and skips, its near spheres and A fragments.
  double px[kLanePoints], py[kLanePoints], pz[kLanePoints];
  double box[6] = {HUGE_VAL, HUGE_VAL, HUGE_VAL, -HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  std::uint32_t skip[kLanePoints];
  const LanePoints points{px, py, pz, skip};
  const bool any_skip = load_lane_points(launch, first, lane, points, box);
  double centre[3];
  block_centre(stage, warp, lane, box, centre);
  const double block_radius2 = place_points(stage, part, warp, lane, first, n, points, centre);
  const double near_reach = fmax(kNearFraction * sqrt(block_radius2), launch.min_distance);
  float tile_centre[kLanePoints][3];
  double tile_near[kLanePoints];
  tile_spheres(part, lane, near_reach, tile_centre, tile_near);
  outer_sphere(part, lane, tile_centre, tile_near);
  const float min_r2 = static_cast<float>(launch.min_distance * launch.min_distance);
  const bool group_skips = __any_sync(kFullMask, any_skip);
  __syncwarp();
  PointFragments fragments;
  point_fragments(fragments, part, lane);
  const auto model = pair_model<Kind>(launch.screen_c);
  const WarpWork<decltype(model)> work{fragments, skip, group_skips, min_r2, model};

  const auto atom_count = static_cast<std::uint32_t>(launch.atom_count);
  const auto chunk_atoms = static_cast<std::uint32_t>(launch.chunk_atoms);
  prefetch_atom(stage, launch.d_atoms, 0, min(atom_count, chunk_atoms));
  for (std::uint32_t chunk = 0; chunk < atom_count; chunk += chunk_atoms) {
    const std::uint32_t chunk_end = min(atom_count, chunk + chunk_atoms);
    float energy[kTiles][2] = {};
    for (std::uint32_t base = chunk; base < chunk_end; base += kRound) {
      __syncthreads();  // every warp is done with the previous round
      stage_atom(stage, base, chunk_end);
      // The next round (of this chunk or the next; none after the last) copies in while the
      // block computes this one: stage.raw is free once staged.
      const std::uint32_t next = base + kRound < chunk_end ? base + kRound : chunk_end;
      if (next < atom_count)
        prefetch_atom(stage, launch.d_atoms, next,
                      next < chunk_end ? chunk_end : min(atom_count, next + chunk_atoms));
      __syncthreads();
      if (!active) continue;
      compute_round<Software>(energy, stage, part, lane, work, base, chunk_end);
    }
    // One float sum per chunk, added in chunk order (the first overwrites); each lane touches
    // only its own shared slots.
#pragma unroll
    for (int k = 0; k < 2 * kTiles; ++k) {
      const float sum = energy[k / 2][k % 2];
      part.total[k][lane] = chunk == 0 ? sum : part.total[k][lane] + sum;
    }
  }
  if (!active) return;
  store_values(launch, part, lane, first, n);
}

/// The kernel of the launch's rsqrt policy.
template <PairKind Kind>
void launch_model(const PointsLaunch& launch, const LaunchConfig& config, StreamView stream) {
  if (launch.rsqrt == PointsRsqrt::kMufu)
    points_kernel<Kind, 0><<<config.grid, config.block, config.smem, stream.get()>>>(launch);
  else
    points_kernel<Kind, kBalancedSoftwarePairs>
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

std::string points_variant() {
  // The default configuration is the only one: the compile-time variants were measured and
  // retired (docs/points-kernel.md).
  return {};
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
  const long long blocks = (groups + kWarps - 1) / kWarps;  // groups of a block share a centre
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
