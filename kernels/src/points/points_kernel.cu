// The points kernel: the potential at arbitrary points (surface vertices, atoms, point lists),
// one launch per compute_points() call, tuned like the grid's production kernel for the
// special-function ceiling (one MUFU per atom-point pair, 16 per SM per clock on Hopper).
//
// Groups. Each warp owns a group of kPointsGroup = 128 consecutive points of the list (4 per
// lane: lane + 32 m). Its centre c is the midpoint of the group's bounding box (double, finite
// listed points only; min and max are exact, so c does not depend on the reduction's order),
// and it works with float offsets p - c rounded once from double. Morton-sorted points make a
// group compact: its radius R (the largest |p - c|) is a few Å. A value depends only on its
// group's points (PointsHint::block = 128), and values far from the origin keep their digits.
// Per warp rather than per block of 1024 points: R is 2-3x smaller, hence smaller float errors
// and fewer near atoms, and warps never wait for each other (no block barrier anywhere).
//
// Atoms. prepare_points() uploads each coordinate as float + float remainder (PointsAtom). Each
// warp stages rounds of 128 atoms (4 per lane) into its own shared memory as seen from its
// centre, a = (hi - c_hi) + (lo - c_lo) in float (exact when the atom is near, by Sterbenz; ~1
// ulp of |a| otherwise: no double arithmetic or F2F per atom), stored as (-2a, |a|^2) and q.
//
// Fast path: r^2 = (|a|^2 + |p|^2) + (-2a).p, one FADD and 3 FFMA, then the unclamped term of
// dcs::add_unclamped_coulomb_term with the model's pair object. The expansion cancels for near
// pairs, so an atom that comes within rn = max(R, min_distance) of any of the group's points
// (|a| < R + rn, tested when staging: one FSETP per atom, one ballot per 32) takes the exact
// path: dx = p - a, r^2 = dx^2 + dy^2 + dz^2, dcs::add_coulomb_term with the clamp at
// min_distance^2 and the skip (the term of atom skip[i] left out by a zero charge), always MUFU.
// So does every atom that is some listed point's skip, wherever it lies (a bit per lane's skip
// in the 32 atoms, one REDUX.OR). Atoms go 4 at a time: a step of 4 is exact if one of them is.
// Sums: float per chunk of kProductionChunkAtoms atoms in registers, added in chunk order.
//
// Error of the fast path. Its pairs have r >= rn >= R and |p| <= R, so |a| <= |p| + r <= 2r
// and |a|^2 + |p|^2 <= 5 r^2. r^2 is formed from |a|^2, |p|^2 (each rounded once) and three FMAs
// whose partial sums stay below 2 (|a|^2 + |p|^2): at most ~6 roundings of 2^-24 x 10 r^2, a
// bound of 3.6e-6 relative in r^2 (1.8e-6 in 1/r) in the worst corner (|a| = 2r, all roundings
// one way), ~1e-6 and below in practice. The float offsets add ~(|p| + |a|) 2^-24 to r on both
// paths: 1.8e-7 relative at r = R, 1e-6 at r = R / 5 (exact path).
//
// SASS (sm_90, ptxas -v: 64 registers, 0 spills, 20.4 KiB shared per block of 256 threads,
// 4 blocks per SM). A fast sub-round of 32 atoms x 4 points (128 pairs per lane) is one
// straight block: Coulomb all-MUFU 811 instructions (512 FFMA, 128 FADD, 128 MUFU.RSQ, 40
// LDS.128, 3 more) = 6.34 per pair; staging 102 per 64 atoms (0.40 per pair) and ~10 per
// sub-round (0.08): 6.8 issue slots per MUFU against the 8 that a scheduler has per MUFU at the
// MUFU rate (4 instructions per SM per clock vs 16 MUFU lanes): MUFU-bound, 85 % of the issue
// slots used, so 100 % of the MUFU rsqrt ceiling at best and ~90-95 % expected. kBalanced gives
// one pair in 16 to the FMA-pipe rsqrt (dcs::FmaPipeRsqrt): 868 per sub-round, 120 MUFU, i.e.
// 7.26 slots for 7.5 MUFU slots per pair: up to 107 % in theory if issue keeps up. eps = 4r the
// same with MUFU.RCP. Screened: 1324 per sub-round with MUFU.RSQ + MUFU.EX2 per pair (10.8 slots
// for 16): MUFU-bound, 100 % of the rsqrt + ex2 ceiling at best; kBalanced 4 of 16 pairs on the
// FMA pipe (1549, 1.75 MUFU per pair: 12.6 slots for 14), up to 114 %. The benchmark
// (dcs_potential_bench --points) measures both policies against the same run's ceiling.
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>

#include "cuda_check.hpp"
#include "dcs/backend.hpp"  // kNoAtom
#include "dcs/error.hpp"
#include "dcs/physics.hpp"
#include "launch.hpp"
#include "points/points_kernel.hpp"

namespace dcs::cuda::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
#ifndef DCS_POINTS_BLOCKS_PER_SM
#define DCS_POINTS_BLOCKS_PER_SM 4
#endif
constexpr int kBlocksPerSm = DCS_POINTS_BLOCKS_PER_SM;
/// rn = max(kNearFraction R, min_distance): the exact path's reach beyond the group's radius R
/// (header comment; a tuning knob, DCS_POINTS_NEAR_FRACTION, for scripts/gpu/points_variants.sh).
#ifndef DCS_POINTS_NEAR_FRACTION
#define DCS_POINTS_NEAR_FRACTION 1.0
#endif
constexpr double kNearFraction = DCS_POINTS_NEAR_FRACTION;
constexpr int kPoints = kPointsPerThread;
constexpr int kRound = 128;  ///< atoms per staging round: 4 per lane
constexpr std::uint32_t kSubRounds = kRound / 32;
#ifndef DCS_POINTS_UNROLL
#define DCS_POINTS_UNROLL 4
#endif
/// Atoms per step (one exact-or-fast decision per step); its run of MUFU instructions is
/// kUnroll x kPoints long (a tuning knob, DCS_POINTS_UNROLL, for points_variants.sh).
constexpr int kUnroll = DCS_POINTS_UNROLL;
constexpr int kStepPairs = kUnroll * kPoints;
constexpr unsigned kFullMask = 0xffffffffu;
static_assert(kRound % kUnroll == 0, "a round is whole steps");

/// One warp's shared memory: a round of staged atoms, which of them go exact, the centre.
struct WarpStage {
  float4 atom[kRound];         ///< (-2 ax, -2 ay, -2 az, |a|^2), a = atom - centre in Å
  float q[kRound];             ///< charge times the factor; 0 for padding
  unsigned exact[kSubRounds];  ///< per 32 atoms: bit u set when atom u takes the exact path
  float centre[3];             ///< float(c)
  float centre_lo[3];          ///< float(c - float(c))
};

/// Whether pair `index` (u * kPoints + m) of a step takes the FMA-pipe rsqrt: Software of
/// kStepPairs, spread evenly.
template <int Software>
__device__ __forceinline__ constexpr bool takes_software_rsqrt(int index) {
  return (index + 1) * Software / kStepPairs > index * Software / kStepPairs;
}

/// 1u << shift with PTX's shl semantics: 0 for shift >= 32 (C++ leaves that undefined).
__device__ __forceinline__ unsigned bit_or_zero(unsigned shift) {
  unsigned result;
  asm("shl.b32 %0, %1, %2;" : "=r"(result) : "r"(1u), "r"(shift));
  return result;
}

template <PairKind Kind>
__device__ __forceinline__ auto device_pair_model(float screen_c) {
  if constexpr (Kind == PairKind::kScreened) return ScreenedPair<float>{screen_c};
  else if constexpr (Kind == PairKind::kInverseSquare) return InverseSquarePair{};
  else return CoulombPair{};
}

/// A thread's points as float offsets from the group's centre, with |p|^2.
struct ThreadPoints {
  float x[kPoints], y[kPoints], z[kPoints], p2[kPoints];
};

/// The fast path for kUnroll atoms: r^2 by the expansion, no clamp (r >= rn >= min_distance
/// here), no skip (skip atoms are always exact).
template <int Software, class Model>
__device__ __forceinline__ void fast_step(float (&energy)[kPoints], const ThreadPoints& p,
                                          const float4* atoms, const float* charges, Model model) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const float4 a = atoms[u];
    const float q = charges[u];
#pragma unroll
    for (int m = 0; m < kPoints; ++m) {
      const float r2 = fmaf(p.z[m], a.z, fmaf(p.y[m], a.y, fmaf(p.x[m], a.x, a.w + p.p2[m])));
      if (takes_software_rsqrt<Software>(u * kPoints + m))
        energy[m] = add_unclamped_coulomb_term(energy[m], q, r2, FmaPipeRsqrt{}, model);
      else energy[m] = add_unclamped_coulomb_term(energy[m], q, r2, HardwareRsqrt{}, model);
    }
  }
}

/// The exact path for kUnroll atoms (the first of which is atom `index`): dx = p - a from the
/// staged -2a (a = -(-2a)/2 exactly, so dx is rounded once), the clamp at min_r2 and the skip.
/// Always MUFU: its pairs are the near ones, where the FMA-pipe cubic's 1.1e-6 would show most.
template <class Model>
__device__ __forceinline__ void exact_step(float (&energy)[kPoints], const ThreadPoints& p,
                                           const std::uint32_t (&skip)[kPoints],
                                           const float4* atoms, const float* charges,
                                           std::uint32_t index, float min_r2, Model model) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const float4 a = atoms[u];
    const float q = charges[u];
#pragma unroll
    for (int m = 0; m < kPoints; ++m) {
      const float dx = fmaf(0.5f, a.x, p.x[m]);
      const float dy = fmaf(0.5f, a.y, p.y[m]);
      const float dz = fmaf(0.5f, a.z, p.z[m]);
      const float r2 = fmaf(dx, dx, fmaf(dy, dy, dz * dz));
      const float charge = skip[m] == index + static_cast<std::uint32_t>(u) ? 0.0f : q;
      energy[m] = add_coulomb_term(energy[m], charge, r2, min_r2, HardwareRsqrt{}, model);
    }
  }
}

/// The warp stages atoms [base, base + kRound) of the chunk that ends at chunk_end, as seen
/// from its centre, kRound / 32 per lane (padding past chunk_end: q = 0, r^2 >= 1), and marks
/// per 32 atoms those within the near radius of the group (|a|^2 < near_a2) and those that are
/// some point's skip: they take the exact path.
__device__ __forceinline__ void stage_round(WarpStage& stage, const PointsAtom* atoms,
                                            std::uint32_t base, std::uint32_t chunk_end,
                                            float near_a2, bool group_skips,
                                            const std::uint32_t (&skip)[kPoints]) {
  const unsigned lane = threadIdx.x % 32u;
  const float cx = stage.centre[0], cy = stage.centre[1], cz = stage.centre[2];
  const float cx_lo = stage.centre_lo[0], cy_lo = stage.centre_lo[1], cz_lo = stage.centre_lo[2];
  // Two sub-rounds' loads in flight at a time: four spill the 80 registers.
#pragma unroll 2
  for (std::uint32_t sub = 0; sub < kSubRounds; ++sub) {
    const std::uint32_t first = base + 32u * sub;
    const std::uint32_t k = first + lane;
    float4 staged = make_float4(0.0f, 0.0f, 0.0f, 1.0f);
    float q = 0.0f;
    bool near = false;
    if (k < chunk_end) {
      const auto* halves = reinterpret_cast<const float4*>(atoms + k);
      const float4 hi = __ldg(halves);  // x, y, z, q
      const float4 lo = __ldg(halves + 1);
      // (hi - c) is exact when the atom is near (Sterbenz) and rounded relative to the offset
      // otherwise; the remainders' difference is tiny: one more rounding of the offset's size.
      const float ax = (hi.x - cx) + (lo.x - cx_lo);
      const float ay = (hi.y - cy) + (lo.y - cy_lo);
      const float az = (hi.z - cz) + (lo.z - cz_lo);
      q = hi.w;
      const float a2 = fmaf(ax, ax, fmaf(ay, ay, az * az));
      staged = make_float4(-2.0f * ax, -2.0f * ay, -2.0f * az, a2);
      near = !(a2 >= near_a2);  // NaN atoms too (they make every value NaN either way)
    }
    stage.atom[32u * sub + lane] = staged;
    stage.q[32u * sub + lane] = q;
    unsigned exact = __ballot_sync(kFullMask, near);
    if (group_skips) {
      // Atoms of these 32 that are some point's skip: bit skip - first (none when the
      // difference, unsigned, is 32 or more: kNoAtom never lands here).
      unsigned bits = 0;
#pragma unroll
      for (int m = 0; m < kPoints; ++m) bits |= bit_or_zero(skip[m] - first);
      exact |= __reduce_or_sync(kFullMask, bits);
    }
    if (lane == 0) stage.exact[sub] = exact;
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

  // --- The group: centre, float offsets, radius, skips ------------------------------------
  double px[kPoints], py[kPoints], pz[kPoints];
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  std::uint32_t skip[kPoints];
  bool any_skip = false;
#pragma unroll
  for (int m = 0; m < kPoints; ++m) {
    const long long i = first + lane + 32 * m;
    px[m] = py[m] = pz[m] = 0.0;
    skip[m] = kNoAtom;
    if (i < n) {
      px[m] = launch.d_points[3 * i];
      py[m] = launch.d_points[3 * i + 1];
      pz[m] = launch.d_points[3 * i + 2];
      if (launch.d_skip != nullptr) skip[m] = launch.d_skip[i];
      if (isfinite(px[m]) && isfinite(py[m]) && isfinite(pz[m])) {
        lo[0] = fmin(lo[0], px[m]);
        lo[1] = fmin(lo[1], py[m]);
        lo[2] = fmin(lo[2], pz[m]);
        hi[0] = fmax(hi[0], px[m]);
        hi[1] = fmax(hi[1], py[m]);
        hi[2] = fmax(hi[2], pz[m]);
      }
    }
    any_skip = any_skip || skip[m] != kNoAtom;
  }
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
  ThreadPoints p;
  double radius2 = 0.0;
#pragma unroll
  for (int m = 0; m < kPoints; ++m) {
    // Lanes past the list's end sit at the centre: they neither widen the radius nor compute
    // anything but zeros' worth of work (their values are not stored).
    const bool listed = first + lane + 32 * m < n;
    p.x[m] = listed ? __double2float_rn(px[m] - centre[0]) : 0.0f;
    p.y[m] = listed ? __double2float_rn(py[m] - centre[1]) : 0.0f;
    p.z[m] = listed ? __double2float_rn(pz[m] - centre[2]) : 0.0f;
    p.p2[m] = fmaf(p.x[m], p.x[m], fmaf(p.y[m], p.y[m], p.z[m] * p.z[m]));
    const double d2 = static_cast<double>(p.x[m]) * p.x[m] + static_cast<double>(p.y[m]) * p.y[m] +
                      static_cast<double>(p.z[m]) * p.z[m];
    if (!isnan(d2)) radius2 = fmax(radius2, d2);  // NaN points (NaN values) do not count
  }
#pragma unroll
  for (int offset = 16; offset >= 1; offset /= 2)
    radius2 = fmax(radius2, __shfl_xor_sync(kFullMask, radius2, offset));
  // Atoms with |a| < R + rn come within rn of some point: exact path (header comment). The
  // margin, 2^-20 relative (~8 float ulp), covers the roundings of the staged |a|^2.
  const double radius = sqrt(radius2);
  const double near_radius = radius + fmax(kNearFraction * radius, launch.min_distance);
  const float near_a2 = __double2float_ru(near_radius * near_radius * (1.0 + 0x1p-20));
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

  const auto model = device_pair_model<Kind>(launch.screen_c);
  const auto atom_count = static_cast<std::uint32_t>(launch.atom_count);
  const auto chunk_atoms = static_cast<std::uint32_t>(launch.chunk_atoms);
  float total[kPoints] = {};
  for (std::uint32_t chunk = 0; chunk < atom_count; chunk += chunk_atoms) {
    const std::uint32_t chunk_end = min(atom_count, chunk + chunk_atoms);
    float energy[kPoints] = {};
    for (std::uint32_t base = chunk; base < chunk_end; base += kRound) {
      __syncwarp();  // every lane is done with the previous round
      stage_round(stage, launch.d_atoms, base, chunk_end, near_a2, group_skips, skip);
      __syncwarp();
      // Whole sub-rounds of 32 (at most 31 padding atoms per chunk); each is all fast (the
      // usual case) or decided per step of kUnroll atoms.
      const std::uint32_t sub_rounds = min(kSubRounds, (chunk_end - base + 31u) / 32u);
#pragma unroll 1
      for (std::uint32_t sub = 0; sub < sub_rounds; ++sub) {
        const unsigned exact = stage.exact[sub];
        const float4* atoms = stage.atom + 32 * sub;
        const float* charges = stage.q + 32 * sub;
        if (exact == 0) {
#pragma unroll
          for (int a = 0; a < 32; a += kUnroll)
            fast_step<Software>(energy, p, atoms + a, charges + a, model);
        } else {
          const std::uint32_t index = base + 32 * sub;
#pragma unroll 1
          for (int a = 0; a < 32; a += kUnroll) {
            if ((exact >> a) & ((1u << kUnroll) - 1u))
              exact_step(energy, p, skip, atoms + a, charges + a,
                         index + static_cast<std::uint32_t>(a), min_r2, model);
            else fast_step<Software>(energy, p, atoms + a, charges + a, model);
          }
        }
      }
    }
    // One float sum per chunk, added in chunk order (the first overwrites).
#pragma unroll
    for (int m = 0; m < kPoints; ++m) total[m] = chunk == 0 ? energy[m] : total[m] + energy[m];
  }

#pragma unroll
  for (int m = 0; m < kPoints; ++m) {
    const long long i = first + lane + 32 * m;
    if (i < n) launch.d_out[i] = total[m];
  }
}

/// FMA-pipe rsqrt pairs per step of 16 for the balanced policy (header comment of this file).
template <PairKind Kind>
constexpr int balanced_software_pairs() {
  return Kind == PairKind::kScreened ? 4 : 1;
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
