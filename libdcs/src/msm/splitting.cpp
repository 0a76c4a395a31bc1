// gamma's Taylor coefficients and the cubic and quintic C1 bases (Hardy, "Multilevel
// summation for the fast evaluation of forces for the simulation of biomolecules", 2006).
#include "splitting.hpp"

#include <cmath>

#include "dcs/error.hpp"

namespace dcs::msm {

Splitting::Splitting(int degree) : k(degree) {
  if (degree < 1 || degree > 6)
    throw UsageError("MSM splitting degree must be 1..6, got " + std::to_string(degree));
  // binom(-1/2, n) = binom(-1/2, n-1) * (-1/2 - (n-1)) / n
  c[0] = 1.0;
  for (int n = 1; n <= k; ++n)
    c[static_cast<std::size_t>(n)] =
        c[static_cast<std::size_t>(n - 1)] * (-0.5 - static_cast<double>(n - 1)) / n;
}

double Basis::phi(double t) const noexcept {
  t = std::fabs(t);
  if (order == 4) {
    if (t <= 1.0) return (1.0 - t) * (1.0 + t - 1.5 * t * t);
    if (t <= 2.0) return -0.5 * (t - 1.0) * (2.0 - t) * (2.0 - t);
    return 0.0;
  }
  if (t <= 1.0) return (1.0 - t * t) * (2.0 - t) * (6.0 + 3.0 * t - 5.0 * t * t) / 12.0;
  if (t <= 2.0) return -(t - 1.0) * (2.0 - t) * (3.0 - t) * (4.0 + 9.0 * t - 5.0 * t * t) / 24.0;
  if (t <= 3.0) return (t - 1.0) * (t - 2.0) * (3.0 - t) * (3.0 - t) * (4.0 - t) / 24.0;
  return 0.0;
}

long Basis::weights(double u, double* w) const noexcept {
  const long base = static_cast<long>(std::floor(u)) - half() + 1;
  for (int j = 0; j < order; ++j) w[j] = phi(u - static_cast<double>(base + j));
  return base;
}

}  // namespace dcs::msm
