// The MSM's one-dimensional building blocks: the softened kernel gamma of the Taylor-C_k
// splitting, the C1 interpolation basis Phi of order 4 or 6 and its two-scale weights J.
#pragma once

#include <array>
#include <cmath>

namespace dcs::msm {

/// gamma(rho) for rho^2 = s: 1/rho for s >= 1, else sum_{n<=k} c_n (s - 1)^n with
/// c_n = binom(-1/2, n): the degree-k Taylor polynomial of s^(-1/2) about s = 1 (C^k at 1).
/// Working in s avoids a square root in the short-range loop.
struct Splitting {
  int k = 2;
  std::array<double, 8> c{};  ///< c_0..c_k

  explicit Splitting(int degree);

  /// gamma at rho^2 = s, for s < 1 only (the polynomial part).
  double inner(double s) const noexcept {
    const double t = s - 1.0;
    double p = c[static_cast<std::size_t>(k)];
    for (int n = k - 1; n >= 0; --n) p = p * t + c[static_cast<std::size_t>(n)];
    return p;
  }
  /// gamma(rho) at rho^2 = s, everywhere.
  double gamma(double s) const noexcept { return s >= 1.0 ? 1.0 / std::sqrt(s) : inner(s); }
  /// g_a(r) = gamma(r/a)/a at r^2 = r2.
  double softened(double r2, double a) const noexcept { return gamma(r2 / (a * a)) / a; }
};

/// The nodal C1 piecewise-polynomial basis of Hardy's MSM: Phi(0) = 1, Phi(n) = 0 for other
/// integers n, support |t| < order/2; order 4 (cubic, reproduces polynomials of degree 2) or 6
/// (quintic, degree 4).
struct Basis {
  int order = 4;
  explicit Basis(int order_) : order(order_) {}
  int half() const noexcept { return order / 2; }  ///< support radius s
  double phi(double t) const noexcept;
  /// The 2s weights of a point at lattice coordinate u: w[j] = Phi(u - (base + j)) for
  /// base = floor(u) - s + 1, j = 0..2s-1. Returns base.
  long weights(double u, double* w) const noexcept;
  /// Two-scale weight J_k = Phi(k/2), |k| <= 2s - 1: restriction and prolongation.
  double two_scale(int k) const noexcept { return phi(0.5 * k); }
};

}  // namespace dcs::msm
