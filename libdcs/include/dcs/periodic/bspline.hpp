// Cardinal B-splines of smooth PME (Essmann et al. 1995, J. Chem. Phys. 103, 8577): M_p is
// the p-fold convolution of the unit box, non-zero on (0, p). A charge at mesh coordinate u
// (fractional coordinate × K) is spread onto the p mesh points k = floor(u) - m, m = 0..p-1,
// with weights M_p(u - k) = M_p(t + m), t = u - floor(u); the potential is read back with the
// same weights. Public so that the CUDA PME (kernels/src/periodic) uses the very same weights:
// bspline_weights() is DCS_HD (host and device).
#pragma once

#include <array>
#include <cmath>
#include <numbers>
#include <vector>

#include "dcs/host_device.hpp"

namespace dcs::periodic::detail {

inline constexpr int kMaxOrder = 8;

/// w[m] = M_p(t + m) for m = 0..p-1 and t in [0, 1), by the recursion
/// M_n(x) = (x M_{n-1}(x) + (n - x) M_{n-1}(x - 1)) / (n - 1) from M_2 = [t, 1 - t].
DCS_HD inline void bspline_weights(double t, int order, double* w) noexcept {
  w[0] = t;
  w[1] = 1.0 - t;
  for (int n = 3; n <= order; ++n) {
    const double scale = 1.0 / double(n - 1);
    w[n - 1] = 0.0;
    for (int m = n - 1; m >= 0; --m) {
      const double x = t + m;
      const double left = m > 0 ? w[m - 1] : 0.0;
      w[m] = scale * (x * w[m] + (double(n) - x) * left);
    }
  }
}

/// |b(m)|² of Essmann's eq. 4.4 for m = 0..K-1 along one axis of K mesh points:
/// 1 / |Σ_{k=0}^{p-2} M_p(k + 1) e^{2πi m k / K}|². For odd p the sum vanishes at the Nyquist
/// frequency; there (and wherever it is below 1e-7) the denominator is the mean of its
/// neighbours', as GROMACS and OpenMM do.
inline std::vector<double> bspline_moduli(int mesh, int order) {
  std::array<double, kMaxOrder> at_integers{};
  bspline_weights(0.0, order, at_integers.data());  // M_p(m) for m = 0..p-1
  std::vector<double> denominator(std::size_t(mesh), 0.0);
  for (int m = 0; m < mesh; ++m) {
    double re = 0.0, im = 0.0;
    for (int k = 0; k + 1 < order; ++k) {
      const double angle = 2.0 * std::numbers::pi * double(m) * double(k) / double(mesh);
      re += at_integers[std::size_t(k + 1)] * std::cos(angle);
      im += at_integers[std::size_t(k + 1)] * std::sin(angle);
    }
    denominator[std::size_t(m)] = re * re + im * im;
  }
  std::vector<double> moduli(static_cast<std::size_t>(mesh));
  for (int m = 0; m < mesh; ++m) {
    double d = denominator[std::size_t(m)];
    if (d < 1e-7) {
      const double before = denominator[std::size_t((m + mesh - 1) % mesh)];
      const double after = denominator[std::size_t((m + 1) % mesh)];
      d = 0.5 * (before + after);
    }
    moduli[std::size_t(m)] = 1.0 / d;
  }
  return moduli;
}

}  // namespace dcs::periodic::detail
