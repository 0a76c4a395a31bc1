// The direct points kernel: the potential at arbitrary points on the FP32 and special-function
// pipes, built for the MUFU ceiling (one MUFU per atom-point pair, 16 per SM per clock).
//
// Why not the tensor cores (points_kernel.cu). Forming r^2 there needs atoms re-staged as TF32
// fragments, per-tile votes and a two-MMA chain per tile; with every rsqrt removed, that work
// alone took 96 % of the MUFU ceiling's time (bench/results/points_2026-11-26_h200.md). Here a
// pair costs six issue slots of the eight a scheduler has per MUFU, and nothing else grows with
// the pairs:
//   r^2 = ((|p|^2 + pz Az) + py Ay) + px Ax) + |a|^2     (A = -2a; 3 FFMA + 1 FADD)
//   e  += q rsqrt(r^2)                                    (MUFU + FFMA)
// with the atom's (A, |a|^2) and charge read by the whole warp from shared memory (1.25 LDS per
// 8 pairs: each lane holds kLanePoints = 8 points).
//
// Groups. A warp owns kPointsBlock = 256 consecutive points of the list (lane l: points l +
// 32 k) and sees them from one centre c, the midpoint of their bounding box (double, finite
// points only: min and max are exact, so c does not depend on any order). Points and atoms are
// float offsets from c, rounded once (atoms: (hi - c_hi) + (lo - c_lo), PointsAtom). Points in
// Z order make a group compact: its radius R (largest |p - c|) is a few Å. A value depends on
// its group's points and the atoms only.
//
// Error of the expanded r^2. A pair of the fast path has r >= rn >= R/2 and |p| <= R, so |a| <=
// R + r <= 3r: every term of the sum is below ~9 r^2 and each rounding is a few 2^-24 of that,
// ~1e-6 of r^2 at worst, 5e-7 of the term. Pairs closer than that take the exact path.
//
// Exact path. rn = max(kNearFraction R, min_distance). An atom with |a - c| < R + rn may come
// within rn of a point: it is staged neutral for the fast loop (A = 0, |a|^2 = 1, q = 0, which
// adds exactly nothing) and summed after the round's fast loop as dx = p - a, r^2 = dx.dx with
// the clamp at min_distance^2 (dcs::add_coulomb_term), its charge zero for a point that skips it
// (--at-atoms). So is the skip of any point of the group. The test costs the staging lane one
// compare on |a|^2, which it forms anyway; the exact work grows with the near atoms only.
//
// Work units and sums. A unit is (group, atom range): the chunks of kProductionChunkAtoms atoms
// are split into R = min(chunks, kMaxRanges) ranges of consecutive chunks, a number that depends
// on the atom count alone. Each lane sums a chunk's atoms in float in atom order (near atoms of
// a 32-atom round after its other atoms), a range's chunks in chunk order, and the finishing
// kernel the ranges in range order; so a value has the same bits whatever unit, launch, GPU or
// rank computed it. Splitting the atoms gives a launch of 10^6 points ~16 000 warps instead of
// ~4 000, so the last wave's imbalance is a small part of the time.
#include <cuda_runtime.h>

#include <algorithm>
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

constexpr int kLanePoints = kPointsBlock / 32;  ///< a lane's points: 8 independent sums
static_assert(kLanePoints == 8, "the group is 32 lanes x 8 points");
constexpr int kWarps = 4;  ///< independent warps per block (no block barrier)
constexpr int kThreads = 32 * kWarps;
#ifndef DCS_POINTS_FP32_BLOCKS
#define DCS_POINTS_FP32_BLOCKS 6
#endif
#ifndef DCS_POINTS_FP32_SOFTWARE
#define DCS_POINTS_FP32_SOFTWARE 1  // of a lane's 8 pairs per atom, on the FMA pipe (balanced)
#endif
#ifndef DCS_POINTS_FP32_UNROLL
#define DCS_POINTS_FP32_UNROLL 8  // groups of 4 atoms per unrolled step of a 32-atom round
#endif
#ifndef DCS_POINTS_FP32_EXPERIMENT
#define DCS_POINTS_FP32_EXPERIMENT 0  // 1: no MUFU, 2: r^2 without the dot product (timing only)
#endif
constexpr int kAtomUnroll = DCS_POINTS_FP32_UNROLL;
constexpr double kNearFraction = 0.5;
constexpr unsigned kFullMask = 0xffffffffu;

/// A warp's shared memory: the round's 32 atoms as the fast loop reads them, the near ones as
/// the exact path reads them, and the skips of the group's points.
struct WarpStage {
  float4 fast[32];                   ///< (-2a, |a|^2), a = atom - c; neutral (0, 0, 0, 1)
  float q[32];                       ///< charge x factor; 0 for near atoms and padding
  float4 near[32];                   ///< (a, q) of the atoms the exact path takes
  std::uint32_t skip[kPointsBlock];  ///< lane l's point k at l + 32 k (only with skips)
  float total[kLanePoints][32];      ///< per lane and point: the sum of the range's chunks
};

template <PairKind Kind>
__device__ __forceinline__ auto pair_model(float screen_c) {
  if constexpr (Kind == PairKind::kScreened) return ScreenedPair<float>{screen_c};
  else if constexpr (Kind == PairKind::kInverseSquare) return InverseSquarePair{};
  else return CoulombPair{};
}

/// 1u << shift, 0 for shift >= 32 (PTX shl; C++ leaves it undefined).
__device__ __forceinline__ unsigned bit_or_zero(unsigned shift) {
  unsigned result;
  asm("shl.b32 %0, %1, %2;" : "=r"(result) : "r"(1u), "r"(shift));
  return result;
}

struct RangePlan {
  long long units = 0;         ///< groups x ranges
  int ranges = 1;              ///< R: atom ranges per group
  std::uint32_t chunks = 0;    ///< chunks of chunk_atoms atoms
  float* d_partial = nullptr;  ///< ranges > 1: R x n range sums
};

/// Atom range r's chunks: [r C / R, (r + 1) C / R).
__device__ __forceinline__ std::uint32_t range_chunk(const RangePlan& plan, int r) {
  return static_cast<std::uint32_t>(static_cast<unsigned long long>(plan.chunks) *
                                    static_cast<unsigned>(r) / static_cast<unsigned>(plan.ranges));
}

template <PairKind Kind, int Software>
__global__ void __launch_bounds__(kThreads, DCS_POINTS_FP32_BLOCKS)
    points_fp32_kernel(const __grid_constant__ PointsLaunch launch,
                       const __grid_constant__ RangePlan plan) {
  __shared__ WarpStage stages[kWarps];
  const unsigned lane = threadIdx.x % 32u;
  const int warp = static_cast<int>(threadIdx.x / 32u);
  WarpStage& stage = stages[warp];
  const long long unit = static_cast<long long>(blockIdx.x) * kWarps + warp;
  if (unit >= plan.units) return;  // warps are independent: no barrier waits for this one
  const long long group = unit / plan.ranges;
  const int range = static_cast<int>(unit % plan.ranges);
  const long long first = group * kPointsBlock;
  const auto n = static_cast<long long>(launch.n);

  // --- The group's centre (bounding-box midpoint, double) and the lane's float offsets ---
  float px[kLanePoints], py[kLanePoints], pz[kLanePoints], p2[kLanePoints];
  bool any_skip = false;
  double radius2 = 0.0;
  float c_hi[3], c_lo[3];
  {
    double x[kLanePoints], y[kLanePoints], z[kLanePoints];
    double box[6] = {HUGE_VAL, HUGE_VAL, HUGE_VAL, -HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
#pragma unroll
    for (int k = 0; k < kLanePoints; ++k) {
      const long long i = first + lane + 32 * k;
      x[k] = y[k] = z[k] = 0.0;
      std::uint32_t skip = kNoAtom;
      if (i < n) {
        x[k] = launch.d_points[3 * i];
        y[k] = launch.d_points[3 * i + 1];
        z[k] = launch.d_points[3 * i + 2];
        if (launch.d_skip != nullptr) skip = launch.d_skip[i];
        if (isfinite(x[k]) && isfinite(y[k]) && isfinite(z[k])) {
          box[0] = fmin(box[0], x[k]);
          box[1] = fmin(box[1], y[k]);
          box[2] = fmin(box[2], z[k]);
          box[3] = fmax(box[3], x[k]);
          box[4] = fmax(box[4], y[k]);
          box[5] = fmax(box[5], z[k]);
        }
      }
      stage.skip[lane + 32 * k] = skip;
      any_skip = any_skip || skip != kNoAtom;
    }
#pragma unroll
    for (int offset = 16; offset >= 1; offset /= 2) {
#pragma unroll
      for (int axis = 0; axis < 3; ++axis) {
        box[axis] = fmin(box[axis], __shfl_xor_sync(kFullMask, box[axis], offset));
        box[axis + 3] = fmax(box[axis + 3], __shfl_xor_sync(kFullMask, box[axis + 3], offset));
      }
    }
    double centre[3];
#pragma unroll
    for (int axis = 0; axis < 3; ++axis)
      centre[axis] = box[axis] <= box[axis + 3] ? 0.5 * (box[axis] + box[axis + 3]) : 0.0;
#pragma unroll
    for (int k = 0; k < kLanePoints; ++k) {
      // Points past the list's end sit at the centre (their values are not stored).
      const bool listed = first + lane + 32 * k < n;
      px[k] = listed ? __double2float_rn(x[k] - centre[0]) : 0.0f;
      py[k] = listed ? __double2float_rn(y[k] - centre[1]) : 0.0f;
      pz[k] = listed ? __double2float_rn(z[k] - centre[2]) : 0.0f;
      p2[k] = fmaf(px[k], px[k], fmaf(py[k], py[k], pz[k] * pz[k]));
      const double d2 = static_cast<double>(px[k]) * px[k] + static_cast<double>(py[k]) * py[k] +
                        static_cast<double>(pz[k]) * pz[k];
      if (!isnan(d2)) radius2 = fmax(radius2, d2);  // NaN points (NaN values) do not count
    }
#pragma unroll
    for (int offset = 16; offset >= 1; offset /= 2)
      radius2 = fmax(radius2, __shfl_xor_sync(kFullMask, radius2, offset));
      // The centre as float + float remainder, as the atoms are stored (every lane has it).
#pragma unroll
    for (int axis = 0; axis < 3; ++axis) {
      c_hi[axis] = __double2float_rn(centre[axis]);
      c_lo[axis] = __double2float_rn(centre[axis] - static_cast<double>(c_hi[axis]));
    }
  }
  const bool group_skips = __any_sync(kFullMask, any_skip);
  // Atoms within R + rn of the centre take the exact path; the margin, 2^-18 relative, covers
  // the roundings of the offsets and of |a|^2.
  const double radius = sqrt(radius2);
  const double reach = radius + fmax(kNearFraction * radius, launch.min_distance);
  const float near2 = __double2float_ru(reach * reach * (1.0 + 0x1p-18));
  const float min_r2 = static_cast<float>(launch.min_distance * launch.min_distance);
  const auto model = pair_model<Kind>(launch.screen_c);

  const auto atom_count = static_cast<std::uint32_t>(launch.atom_count);
  const auto chunk_atoms = static_cast<std::uint32_t>(launch.chunk_atoms);
  const std::uint32_t chunk_begin = range_chunk(plan, range);
  const std::uint32_t chunk_end = range_chunk(plan, range + 1);
  for (std::uint32_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
    const std::uint32_t begin = chunk * chunk_atoms;
    const std::uint32_t end = min(atom_count, begin + chunk_atoms);
    float energy[kLanePoints];
#pragma unroll
    for (int k = 0; k < kLanePoints; ++k) energy[k] = 0.0f;
#pragma unroll 1
    for (std::uint32_t base = begin; base < end; base += 32u) {
      // --- Stage: lane l takes atom base + l (padding past the chunk: neutral) ---
      const std::uint32_t index = base + lane;
      float ax = 0.0f, ay = 0.0f, az = 0.0f, a2 = 1.0f, q = 0.0f;
      bool near = false;
      if (index < end) {
        const auto* source = reinterpret_cast<const float4*>(launch.d_atoms + index);
        const float4 hi = __ldg(source);
        const float4 lo = __ldg(source + 1);
        ax = (hi.x - c_hi[0]) + (lo.x - c_lo[0]);
        ay = (hi.y - c_hi[1]) + (lo.y - c_lo[1]);
        az = (hi.z - c_hi[2]) + (lo.z - c_lo[2]);
        q = hi.w;
        a2 = fmaf(ax, ax, fmaf(ay, ay, az * az));
        near = !(a2 >= near2);  // NaN atoms too: they make NaN values on the exact path
      }
      unsigned exact = __ballot_sync(kFullMask, near);
      if (group_skips) {
        unsigned bits = 0u;
#pragma unroll
        for (int k = 0; k < kLanePoints; ++k) bits |= bit_or_zero(stage.skip[lane + 32 * k] - base);
        exact |= __reduce_or_sync(kFullMask, bits);
      }
      const bool mine = (exact >> lane) & 1u;
      stage.fast[lane] = mine ? make_float4(0.0f, 0.0f, 0.0f, 1.0f)
                              : make_float4(-2.0f * ax, -2.0f * ay, -2.0f * az, a2);
      stage.q[lane] = mine ? 0.0f : q;
      if (mine) stage.near[lane] = make_float4(ax, ay, az, q);
      __syncwarp();

      // --- The fast loop: every atom of the round against the lane's 8 points ---
#pragma unroll kAtomUnroll
      for (int j4 = 0; j4 < 8; ++j4) {
        const float4 charges = reinterpret_cast<const float4*>(stage.q)[j4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const float4 a = stage.fast[4 * j4 + u];
          const float charge = u == 0   ? charges.x
                               : u == 1 ? charges.y
                               : u == 2 ? charges.z
                                        : charges.w;
#pragma unroll
          for (int k = 0; k < kLanePoints; ++k) {
#if DCS_POINTS_FP32_EXPERIMENT == 2
            const float r2 = p2[k] + a.w;
#else
            const float r2 = fmaf(px[k], a.x, fmaf(py[k], a.y, fmaf(pz[k], a.z, p2[k]))) + a.w;
#endif
#if DCS_POINTS_FP32_EXPERIMENT == 1
            energy[k] = fmaf(charge, r2, energy[k]);
            continue;
#endif
            if (k < Software)
              energy[k] = add_unclamped_coulomb_term(energy[k], charge, r2, FmaPipeRsqrt{}, model);
            else
              energy[k] = add_unclamped_coulomb_term(energy[k], charge, r2, HardwareRsqrt{}, model);
          }
        }
      }
      // --- The exact path: the round's near and skipped atoms, in atom order ---
      while (exact != 0u) {
        const int j = __ffs(static_cast<int>(exact)) - 1;
        exact &= exact - 1u;
        const float4 a = stage.near[j];
        const std::uint32_t atom = base + static_cast<std::uint32_t>(j);
#pragma unroll
        for (int k = 0; k < kLanePoints; ++k) {
          const float dx = px[k] - a.x, dy = py[k] - a.y, dz = pz[k] - a.z;
          const float r2 = fmaf(dx, dx, fmaf(dy, dy, dz * dz));
          const float charge = group_skips && stage.skip[lane + 32 * k] == atom ? 0.0f : a.w;
          energy[k] = add_coulomb_term(energy[k], charge, r2, min_r2, HardwareRsqrt{}, model);
        }
      }
      __syncwarp();  // the round is read before the next one is staged
    }
    // One float sum per chunk, added in chunk order (the first is the sum); each lane touches
    // only its own slots.
#pragma unroll
    for (int k = 0; k < kLanePoints; ++k)
      stage.total[k][lane] = chunk == chunk_begin ? energy[k] : stage.total[k][lane] + energy[k];
  }
  float* out = plan.ranges > 1 ? plan.d_partial + static_cast<long long>(range) * n : launch.d_out;
#pragma unroll
  for (int k = 0; k < kLanePoints; ++k) {
    const long long i = first + lane + 32 * k;
    if (i < n) out[i] = stage.total[k][lane];
  }
}

/// out[i] = the range sums of point i added in range order (the first is the sum).
__global__ void sum_ranges_kernel(const float* partial, long long n, int ranges, float* out) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = partial[i];
  for (int r = 1; r < ranges; ++r) v += partial[static_cast<long long>(r) * n + i];
  out[i] = v;
}

template <PairKind Kind>
void launch_model(const PointsLaunch& launch, const RangePlan& plan, const LaunchConfig& config,
                  StreamView stream) {
  if (launch.rsqrt == PointsRsqrt::kMufu || Kind == PairKind::kScreened)
    points_fp32_kernel<Kind, 0>
        <<<config.grid, config.block, config.smem, stream.get()>>>(launch, plan);
  else
    points_fp32_kernel<Kind, DCS_POINTS_FP32_SOFTWARE>
        <<<config.grid, config.block, config.smem, stream.get()>>>(launch, plan);
}

/// Atom ranges per group: R = min(chunks, kMaxRanges), fixed by the atom count alone.
constexpr std::size_t kMaxRanges = 8;
/// Points per launch at most (a multiple of the group): bounds the range sums' scratch.
constexpr std::size_t kMaxLaunchPoints = std::size_t{1} << 22;

std::size_t chunk_count(const PointsLaunch& launch) {
  return (launch.atom_count + launch.chunk_atoms - 1) / launch.chunk_atoms;
}

}  // namespace

std::size_t points_fp32_scratch_floats(const PointsLaunch& launch) {
  const std::size_t ranges = std::min(chunk_count(launch), kMaxRanges);
  return ranges > 1 ? ranges * std::min(launch.n, kMaxLaunchPoints) : 0;
}

void launch_points_fp32(const PointsLaunch& whole, StreamView stream) {
  if (whole.n == 0) return;
  constexpr auto kMaxAtoms = static_cast<std::size_t>(INT_MAX);
  if (whole.atom_count < 1 || whole.atom_count > kMaxAtoms || whole.chunk_atoms < 1 ||
      whole.chunk_atoms > kMaxAtoms)
    throw CudaError("points kernel: " + std::to_string(whole.atom_count) + " atoms in chunks of " +
                    std::to_string(whole.chunk_atoms) + " are outside the 31-bit atom index");
  const std::size_t chunks = chunk_count(whole);
  RangePlan plan;
  plan.ranges = static_cast<int>(std::min(chunks, kMaxRanges));
  plan.chunks = static_cast<std::uint32_t>(chunks);
  plan.d_partial = whole.d_partial;
  if (plan.ranges > 1 &&
      (whole.d_partial == nullptr || whole.partial_floats < points_fp32_scratch_floats(whole)))
    throw CudaError("points kernel: no room for the range sums of " + std::to_string(whole.n) +
                    " points");
  static_assert(kMaxLaunchPoints % kPointsBlock == 0, "launches start at a group");
  for (std::size_t offset = 0; offset < whole.n; offset += kMaxLaunchPoints) {
    PointsLaunch launch = whole;
    launch.n = std::min(kMaxLaunchPoints, whole.n - offset);
    launch.d_points = whole.d_points + 3 * offset;
    launch.d_skip = whole.d_skip != nullptr ? whole.d_skip + offset : nullptr;
    launch.d_out = whole.d_out + offset;
    const long long groups = static_cast<long long>((launch.n + kPointsBlock - 1) /
                                                    static_cast<std::size_t>(kPointsBlock));
    plan.units = groups * plan.ranges;
    const LaunchConfig config{dim3(blocks_for(plan.units, kWarps)), dim3(kThreads), 0};
    log_launch("points_fp32", config);
    switch (launch.pair) {
      case PairKind::kScreened:
        launch_model<PairKind::kScreened>(launch, plan, config, stream);
        break;
      case PairKind::kInverseSquare:
        launch_model<PairKind::kInverseSquare>(launch, plan, config, stream);
        break;
      case PairKind::kCoulomb:
        launch_model<PairKind::kCoulomb>(launch, plan, config, stream);
        break;
    }
    DCS_CUDA_CHECK_LAUNCH("points_fp32", stream.get());
    if (plan.ranges > 1) {
      const auto count = static_cast<long long>(launch.n);
      sum_ranges_kernel<<<blocks_for(count, 256), 256, 0, stream.get()>>>(
          plan.d_partial, count, plan.ranges, launch.d_out);
      DCS_CUDA_CHECK_LAUNCH("points_fp32 sums", stream.get());
    }
  }
}

}  // namespace dcs::cuda::detail
