// The Ewald parameters from a requested accuracy (see ewald_parameters.hpp for the estimates).
#include "dcs/periodic/ewald_parameters.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "dcs/error.hpp"

namespace dcs::periodic {
namespace {

/// The largest mesh per axis: 4096 points along one cell vector is 0.02 Å in a 100 Å box,
/// far finer than any accuracy needs; a bigger request is a mistake (a tiny δ or cutoff).
constexpr int kMaxMeshPerAxis = 4096;

void check_settings(const PeriodicSettings& settings) {
  if (!(settings.accuracy > 0.0 && settings.accuracy <= 0.01))
    throw UsageError(
        fmt::format("the periodic accuracy {:g} is outside (0, 0.01]", settings.accuracy));
  if (!(settings.real_cutoff > 0.0 && std::isfinite(settings.real_cutoff)))
    throw UsageError(
        fmt::format("the real-space cutoff {:g} Å is not a positive number", settings.real_cutoff));
  if (settings.order < 4 || settings.order > 8)
    throw UsageError(fmt::format("the PME B-spline order {} is outside 4..8", settings.order));
  if (!(settings.min_distance >= 0.0 && std::isfinite(settings.min_distance)))
    throw UsageError(fmt::format("the minimum distance {:g} Å is negative", settings.min_distance));
}

}  // namespace

std::string EwaldParameters::describe() const {
  return fmt::format(
      "beta {:.4f} 1/A, real cutoff {:.2f} A, k cutoff {:.3f} 1/A, mesh {} x {} x "
      "{}, order {}",
      beta, real_cutoff, k_cutoff, mesh[0], mesh[1], mesh[2], order);
}

int fft_friendly_size(int n) {
  for (int candidate = std::max(n, 1);; ++candidate) {
    int rest = candidate;
    for (const int factor : {2, 3, 5})
      while (rest % factor == 0) rest /= factor;
    if (rest == 1) return candidate;
  }
}

EwaldParameters choose_ewald_parameters(const UnitCell& cell, const PeriodicSettings& settings) {
  check_settings(settings);
  if (!cell.is_periodic())
    throw UsageError(fmt::format("a periodic potential needs a periodic cell; this one is: {}",
                                 cell.describe()));
  const double delta = settings.accuracy;
  EwaldParameters parameters;
  parameters.real_cutoff = settings.real_cutoff;
  parameters.order = settings.order;
  parameters.beta = std::sqrt(-std::log(2.0 * delta)) / settings.real_cutoff;
  parameters.k_cutoff = 2.0 * parameters.beta * std::sqrt(-std::log(delta));
  const double per_width =
      2.0 / 3.0 * parameters.beta * std::pow(delta, -1.0 / double(settings.order));
  const Mat3& reciprocal = cell.reciprocal();
  for (int axis = 0; axis < 3; ++axis) {
    const Vec3& r = reciprocal[axis];
    const double width = 1.0 / std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    const double wanted = std::ceil(per_width * width);
    if (!(wanted <= kMaxMeshPerAxis))
      throw UsageError(fmt::format(
          "the PME mesh for accuracy {:g} and cutoff {:g} Å would have more than {} points "
          "along a cell vector of width {:.1f} Å; ask for a coarser accuracy or a longer cutoff",
          delta, settings.real_cutoff, kMaxMeshPerAxis, width));
    parameters.mesh[axis] = fft_friendly_size(std::max(int(wanted), 2 * settings.order));
  }
  return parameters;
}

}  // namespace dcs::periodic
