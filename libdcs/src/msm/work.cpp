// The work of one map by msm against the exact method (dcs/msm_plan.hpp: msm_work), counted
// from the plan's sizes before anything is computed, so that a run whose msm is expected slower
// than direct summation can say so (issue 38: --msm-error 1e-5 on 2e5 atoms x 97^3 took 4.9x
// the exact time without a word).
//
// Each term is a count of the loop it stands for times a weight in exact pairs (one float32
// pair of the CPU exact kernel). Calibration (bench/results/msm_cost_2026-11-28_cpu.md):
// `dcs --threads 1` (bench/msm_cost_bench.py) on tiled 2lzt (2k-53k atoms) and dense random
// boxes (8k-40k atoms in 30 A), 33^3-97^3, --msm-error 1e-3 to 1e-5: each phase's time
// (provenance: upload = prepare, compute = slabs, validate = the check) over its count, in the
// exact kernel's seconds per pair of the same case; weights fitted by least squares on the
// relative error. The whole estimate's msm/exact was 0.58-1.79x the measured one over two
// passes of 15 runs (a shared 2-core machine, load 2-7): kMsmSlowerMargin (2) covers the
// overestimates, so a warning means msm measured slower. Calibrated on the CPU; the GPU's
// ratios are not measured.
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <vector>

#include "dcs/msm_plan.hpp"
#include "fft_convolution.hpp"

namespace dcs {
namespace {

// Weights in exact pairs (the exact kernel's float32 pair is SIMD: 8-16 a cycle): the
// short-range pair (float64, sqrt and gamma's polynomial); a multiply-add of the interpolation,
// which also carries each point's share of its row and block (the candidates' gather, the
// lattice line); a multiply-add of the lattice work (strided, FFT butterflies); a float64 pair
// of the error check (the reference sum, not vectorised). Fitted by least squares on relative
// error over a first pass of the bench note's cases.
constexpr double kShortRangePair = 11.0;
constexpr double kInterpolationMultiplyAdd = 42.0;
constexpr double kLatticeMultiplyAdd = 3.4;
/// A tap of the direct lattice sum (vectorised, contiguous): 0.20-0.23 ns against 0.17 ns an
/// exact pair on this machine (one thread; the calibration runs' level sums were all FFTs).
constexpr double kDirectTap = 1.3;
constexpr double kCheckPair = 29.0;

/// Beyond this many finest points the box is absurd (msm_memory refuses it): the levels' sums
/// are then counted on the finest lattice alone, without its extents.
constexpr double kAbsurdPoints = 0x1p50;

/// Lattice vectors d with h |d| < 2a: the cutoff kernel's non-zero taps.
double cutoff_taps(double radius) {
  const long r = static_cast<long>(std::ceil(radius));
  double taps = 0.0;
  for (long dz = -r; dz <= r; ++dz)
    for (long dy = -r; dy <= r; ++dy) {
      const double left = radius * radius - static_cast<double>(dy * dy + dz * dz);
      if (left > 0.0) taps += 2.0 * std::ceil(std::sqrt(left)) - 1.0;
    }
  return taps;
}

/// One lattice sum in exact pairs, as lattice.cpp's lattice_sum_auto chooses it: the FFT where
/// it may take its memory and its work is below the direct sum's over every point (an upper
/// bound of the charged ones), else the direct sum.
double lattice_sum_work(const MsmExtent& level, const std::array<long, 3>& radius, double taps) {
  const double direct = level.volume() * taps;
  const msm::FftPlan fft = msm::fft_plan(level.n, radius);
  return fft.bytes <= msm::kFftBytesLimit && fft.work < direct ? kLatticeMultiplyAdd * fft.work
                                                               : kDirectTap * direct;
}

/// Grid coordinates of one axis within `reach` of [lo, hi].
double axis_points_near(const GridSpec& grid, int axis, double lo, double hi, double reach) {
  const double h = grid.spacing[axis], o = grid.origin[axis];
  const double first = std::max(0.0, std::ceil((lo - reach - o) / h));
  const double last =
      std::min(static_cast<double>(grid.counts[axis] - 1), std::floor((hi + reach - o) / h));
  return std::max(0.0, last - first + 1.0);
}

}  // namespace

MsmWork msm_work(const MsmParameters& parameters, const MsmBox& box, const GridSpec& grid,
                 std::size_t atoms, std::size_t check_points) {
  MsmWork w;
  const double points = static_cast<double>(grid.points());
  const double charged = static_cast<double>(std::max<std::size_t>(box.charged, 1));
  const double a = parameters.cutoff, p = parameters.order;
  w.exact = static_cast<double>(atoms) * points;

  // Short range: a block of points along x (msm_backend.cpp) sums the atoms within a of its
  // segment; the atoms' density is the bins' (uniform), points beyond a of them sum none.
  const MsmBins bins = msm_bins(a, box.atoms_lower, box.atoms_upper);
  const double bins_volume = static_cast<double>(bins.n[0]) * static_cast<double>(bins.n[1]) *
                             static_cast<double>(bins.n[2]) * std::pow(bins.side, 3);
  const double density = charged / bins_volume;
  const double block = std::max(1.0, std::min(64.0, std::floor(a / grid.spacing[0])));
  const double segment = (block - 1.0) * grid.spacing[0];
  const double reached = std::numbers::pi * a * a * (segment + 4.0 / 3.0 * a);
  double near = 1.0;
  for (int d = 0; d < 3; ++d)
    near *= axis_points_near(grid, d, box.atoms_lower[d], box.atoms_upper[d], a);
  w.short_range = kShortRangePair * near * std::min(charged, density * reached);

  // Levels (prepare()): anterpolation (order^3 an atom), each level below the top sums the
  // cutoff kernel (radius 2a/h lattice units), the top one all pairs; restriction and
  // prolongation cost about 2 (2 reach + 1) a fine point.
  double finest = 1.0;
  for (int d = 0; d < 3; ++d)
    finest *= std::floor((box.upper[d] - box.lower[d]) / parameters.spacing) + p;
  const double ratio = 2.0 * a / parameters.spacing;
  const double taps = cutoff_taps(ratio);
  const double width = 2.0 * (p - 1.0) + 1.0;  // the two-scale weights' 2 (2s - 1) + 1
  double finest_x = 0.0;
  if (finest > kAbsurdPoints) {
    w.levels = kDirectTap * finest * taps;
  } else {
    const std::vector<MsmExtent> levels = msm_level_extents(parameters, box.lower, box.upper);
    const long r = static_cast<long>(std::ceil(ratio));
    for (std::size_t l = 0; l + 1 < levels.size(); ++l)
      w.levels += lattice_sum_work(levels[l], {r, r, r}, taps) +
                  kLatticeMultiplyAdd * 2.0 * width * levels[l].volume();
    w.levels += kLatticeMultiplyAdd * charged * p * p * p;  // anterpolation
    const MsmExtent& top = levels.back();
    const std::array<long, 3> all{top.n[0] - 1, top.n[1] - 1, top.n[2] - 1};
    const double top_taps =
        static_cast<double>((2 * all[0] + 1) * (2 * all[1] + 1) * (2 * all[2] + 1));
    w.top = lattice_sum_work(top, all, top_taps);
    finest_x = static_cast<double>(levels[0].n[0]);
  }
  // Interpolation: per row the lattice contracted over y and z (order^2 lines of the finest
  // lattice's x extent), per point order weights.
  const double rows = static_cast<double>(grid.counts[1]) * static_cast<double>(grid.counts[2]);
  w.interpolation = kInterpolationMultiplyAdd * (rows * p * p * finest_x + points * p);
  w.check = kCheckPair * static_cast<double>(check_points) * static_cast<double>(atoms);
  return w;
}

}  // namespace dcs
