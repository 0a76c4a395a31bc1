// The MSM plan (dcs/msm_plan.hpp): level extents, two-scale weights and the level kernels, the
// short-range bins and the map axes' weights, from the parameters and the bounds alone.
#include <algorithm>
#include <cmath>

#include "dcs/msm_plan.hpp"
#include "prepared.hpp"
#include "splitting.hpp"

namespace dcs {
namespace {

constexpr int kMaxLevels = 24;
/// The top level's size: all pairs on 16^3 points is 1.7e7 multiply-adds. Each level costs 1/8
/// of the one below, so a deep hierarchy is cheap, while a large top level costs its points
/// squared. The extents stop shrinking near 2 (2s - 1) + 2 per axis.
constexpr std::size_t kTopPoints = 16 * 16 * 16;

/// floor(x / 2) and ceil(x / 2) for integers of either sign.
long floor_half(long x) { return x >= 0 ? x / 2 : -((1 - x) / 2); }
long ceil_half(long x) { return -floor_half(-x); }

/// kernel(d^2) for d^2 = 0 .. sum radius^2 (in lattice units).
template <class Kernel>
MsmRadialKernel tabulate(std::array<long, 3> radius, const Kernel& kernel) {
  MsmRadialKernel K;
  K.radius = radius;
  const long max_d2 = radius[0] * radius[0] + radius[1] * radius[1] + radius[2] * radius[2];
  K.by_d2.resize(static_cast<std::size_t>(max_d2) + 1);
  for (long d2 = 0; d2 <= max_d2; ++d2)
    K.by_d2[static_cast<std::size_t>(d2)] = kernel(static_cast<double>(d2));
  return K;
}

}  // namespace

std::vector<MsmExtent> msm_level_extents(const MsmParameters& parameters, const Vec3& lower,
                                         const Vec3& upper) {
  const long s = msm::Basis(parameters.order).half();
  const long reach = 2 * s - 1;
  // Finest range: every stencil of a point in [lower, upper].
  MsmExtent finest;
  for (int d = 0; d < 3; ++d) {
    finest.lo[d] = 1 - s;
    const long hi = static_cast<long>(std::floor((upper[d] - lower[d]) / parameters.spacing)) + s;
    finest.n[d] = hi - finest.lo[d] + 1;
  }
  std::vector<MsmExtent> levels{finest};
  // Compared in double: the product of a large box's counts would wrap in size_t.
  auto points = [](const MsmExtent& e) {
    return static_cast<double>(e.n[0]) * static_cast<double>(e.n[1]) * static_cast<double>(e.n[2]);
  };
  while (points(levels.back()) > static_cast<double>(kTopPoints) &&
         static_cast<int>(levels.size()) < kMaxLevels) {
    const MsmExtent& fine = levels.back();
    MsmExtent coarse;
    for (int d = 0; d < 3; ++d) {
      coarse.lo[d] = floor_half(fine.lo[d] - reach);
      const long hi = ceil_half(fine.lo[d] + fine.n[d] - 1 + reach);
      coarse.n[d] = hi - coarse.lo[d] + 1;
    }
    levels.push_back(coarse);
  }
  return levels;
}

MsmLatticePlan msm_lattice_plan(const MsmParameters& parameters, const Vec3& lower,
                                const Vec3& upper) {
  const msm::Basis basis(parameters.order);
  const msm::Splitting splitting(parameters.split);
  MsmLatticePlan plan;
  plan.h = parameters.spacing;
  plan.a = parameters.cutoff;
  plan.order = parameters.order;
  plan.origin = lower;
  const long s = basis.half();
  plan.reach = static_cast<int>(2 * s - 1);
  for (int k = -plan.reach; k <= plan.reach; ++k) plan.two_scale.push_back(basis.two_scale(k));
  plan.levels = msm_level_extents(parameters, lower, upper);

  // Level 0's cutoff kernel g_a - g_2a at distance h|d| (level l: the same over 2^l).
  const double a = plan.a;
  const double ratio = plan.h / a;
  const long R = static_cast<long>(std::ceil(2.0 / ratio));
  plan.cutoff = tabulate({R, R, R}, [&](double d2) {
    const double s2 = d2 * ratio * ratio;
    return splitting.gamma(s2) / a - splitting.gamma(0.25 * s2) / (2.0 * a);
  });
  // Top level: all pairs with g_{2^L a} at distance 2^L h |d| (times 2^-L when summed).
  const MsmExtent& top = plan.levels.back();
  plan.top = tabulate({top.n[0] - 1, top.n[1] - 1, top.n[2] - 1},
                      [&](double d2) { return splitting.gamma(d2 * ratio * ratio) / a; });

  // Largest |dx| with a non-zero tap per (|dz|, |dy|), then the envelope over |dz'| >= |dz|
  // (rounding can leave tiny non-zero taps beyond 2a, so the rows need not shrink with |dz|).
  const auto w = static_cast<std::size_t>(R + 1);
  plan.cutoff_span.assign(w * w, -1);
  for (long dz = R; dz >= 0; --dz)
    for (long dy = 0; dy <= R; ++dy) {
      long span = dz < R ? plan.cutoff_span[static_cast<std::size_t>(dz + 1) * w +
                                            static_cast<std::size_t>(dy)]
                         : -1;
      for (long dx = 0; dx <= R; ++dx)
        if (plan.cutoff.by_d2[static_cast<std::size_t>(dx * dx + dy * dy + dz * dz)] != 0.0)
          span = std::max(span, dx);
      plan.cutoff_span[static_cast<std::size_t>(dz) * w + static_cast<std::size_t>(dy)] = span;
    }
  return plan;
}

MsmBins msm_bins(double cutoff, const Vec3& atoms_lower, const Vec3& atoms_upper) {
  MsmBins bins;
  bins.lower = atoms_lower;
  bins.side = 0.5 * cutoff;
  for (int d = 0; d < 3; ++d)
    bins.n[static_cast<std::size_t>(d)] =
        static_cast<long>(std::floor((atoms_upper[d] - atoms_lower[d]) / bins.side)) + 1;
  return bins;
}

MsmAxisWeights msm_axis_weights(const MsmLatticePlan& plan, const GridSpec& grid, int axis) {
  msm::AxisWeights a =
      msm::axis_weights(msm::Basis(plan.order), grid.origin[axis], grid.spacing[axis],
                        grid.counts[axis], plan.origin[axis], plan.h);
  return {std::move(a.base), std::move(a.w)};
}

std::array<double, 7> msm_gamma(const MsmParameters& parameters) {
  const msm::Splitting splitting(parameters.split);
  std::array<double, 7> c{};
  for (int n = 0; n <= splitting.k; ++n)
    c[static_cast<std::size_t>(n)] = splitting.c[static_cast<std::size_t>(n)];
  return c;
}

}  // namespace dcs
