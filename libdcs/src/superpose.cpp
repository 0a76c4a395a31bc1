// Horn's closed-form quaternion solution (J. Opt. Soc. Am. A 4, 629 (1987)): with the
// cross-covariance S = sum (m - cm)(r - cr)^T, the best rotation is the unit quaternion that
// maximises q^T N q for a symmetric 4x4 N built from S, i.e. N's top eigenvector. A quaternion
// always gives a proper rotation, so no reflection fix-up (Kabsch's sign of det) is needed.
#include "dcs/superpose.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <string>

#include "dcs/error.hpp"

namespace dcs {

Vec3 RigidFit::apply(const Vec3& x) const {
  const Vec3 d{x[0] - from_centre[0], x[1] - from_centre[1], x[2] - from_centre[2]};
  Vec3 out{};
  for (std::size_t r = 0; r < 3; ++r)
    out[r] = rotation[r][0] * d[0] + rotation[r][1] * d[1] + rotation[r][2] * d[2] + to_centre[r];
  return out;
}

namespace {

template <std::size_t N>
using Mat = std::array<std::array<double, N>, N>;
using Mat4 = Mat<4>;

Vec3 centroid(const std::vector<Vec3>& points) {
  Vec3 sum{};
  for (const Vec3& p : points)
    for (std::size_t a = 0; a < 3; ++a) sum[a] += p[a];
  const double n = static_cast<double>(points.size());
  return {sum[0] / n, sum[1] / n, sum[2] / n};
}

// Cyclic Jacobi eigen-decomposition of a symmetric NxN matrix: `a` is diagonalised in place and
// the columns of `v` are the eigenvectors. Converges quadratically; a few sweeps reach rounding.
template <std::size_t N>
void jacobi_eigen(Mat<N>& a, Mat<N>& v) {
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = 0; j < N; ++j) v[i][j] = i == j ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 64; ++sweep) {
    double off = 0.0;
    for (std::size_t p = 0; p < N; ++p)
      for (std::size_t q = p + 1; q < N; ++q) off += a[p][q] * a[p][q];
    if (off == 0.0) return;
    for (std::size_t p = 0; p < N; ++p) {
      for (std::size_t q = p + 1; q < N; ++q) {
        if (a[p][q] == 0.0) continue;
        // The rotation angle that zeroes a[p][q] (Numerical Recipes' stable form).
        const double theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
        const double t =
            (theta >= 0.0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0);
        const double s = t * c;
        for (std::size_t k = 0; k < N; ++k) {  // A <- A J
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (std::size_t k = 0; k < N; ++k) {  // A <- J^T A
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        for (std::size_t k = 0; k < N; ++k) {  // V <- V J
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
}

}  // namespace

std::array<double, 3> principal_spreads(const std::vector<Vec3>& points) {
  if (points.empty()) return {0.0, 0.0, 0.0};
  const Vec3 c = centroid(points);
  Mat<3> cov{};
  for (const Vec3& p : points)
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) cov[i][j] += (p[i] - c[i]) * (p[j] - c[j]);
  Mat<3> v{};
  jacobi_eigen(cov, v);
  std::array<double, 3> spreads{};
  const double n = static_cast<double>(points.size());
  // Rounding can leave a zero eigenvalue slightly negative.
  for (std::size_t k = 0; k < 3; ++k) spreads[k] = std::sqrt(std::max(cov[k][k], 0.0) / n);
  std::sort(spreads.begin(), spreads.end(), std::greater<>());
  return spreads;
}

bool on_one_line(const std::vector<Vec3>& points) {
  const std::array<double, 3> s = principal_spreads(points);
  const double off_line = std::hypot(s[1], s[2]);
  return off_line < kMinOffLineSpread || off_line < kMinOffLineRatio * s[0];
}

RigidFit least_squares_fit(const std::vector<Vec3>& mobile, const std::vector<Vec3>& reference) {
  if (mobile.empty() || mobile.size() != reference.size())
    throw UsageError("least_squares_fit: the point sets must be non-empty and of equal size (" +
                     std::to_string(mobile.size()) + " mobile, " +
                     std::to_string(reference.size()) + " reference points)");
  for (const auto* set : {&mobile, &reference})
    for (const Vec3& p : *set)
      if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !std::isfinite(p[2]))
        throw UsageError("least_squares_fit: a coordinate is not a finite number");

  RigidFit fit;
  fit.from_centre = centroid(mobile);
  fit.to_centre = centroid(reference);

  // S[i][j] = sum over points of (m - cm)_i (r - cr)_j.
  double s[3][3] = {};
  for (std::size_t k = 0; k < mobile.size(); ++k) {
    const Vec3& m = mobile[k];
    const Vec3& r = reference[k];
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j)
        s[i][j] += (m[i] - fit.from_centre[i]) * (r[j] - fit.to_centre[j]);
  }
  const double sxx = s[0][0], sxy = s[0][1], sxz = s[0][2];
  const double syx = s[1][0], syy = s[1][1], syz = s[1][2];
  const double szx = s[2][0], szy = s[2][1], szz = s[2][2];
  Mat4 n = {{{sxx + syy + szz, syz - szy, szx - sxz, sxy - syx},
             {syz - szy, sxx - syy - szz, sxy + syx, szx + sxz},
             {szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy},
             {sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz}}};
  Mat4 v{};
  jacobi_eigen(n, v);
  // The largest eigenvalue; ties go to the lowest index, so that a zero N (n = 1, coincident
  // points) gives the quaternion (1, 0, 0, 0), the identity.
  std::size_t best = 0;
  for (std::size_t k = 1; k < 4; ++k)
    if (n[k][k] > n[best][best]) best = k;
  double q0 = v[0][best], q1 = v[1][best], q2 = v[2][best], q3 = v[3][best];
  const double norm = std::sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3);
  q0 /= norm, q1 /= norm, q2 /= norm, q3 /= norm;

  auto& rot = fit.rotation;
  rot[0] = {q0 * q0 + q1 * q1 - q2 * q2 - q3 * q3, 2 * (q1 * q2 - q0 * q3),
            2 * (q1 * q3 + q0 * q2)};
  rot[1] = {2 * (q1 * q2 + q0 * q3), q0 * q0 - q1 * q1 + q2 * q2 - q3 * q3,
            2 * (q2 * q3 - q0 * q1)};
  rot[2] = {2 * (q1 * q3 - q0 * q2), 2 * (q2 * q3 + q0 * q1),
            q0 * q0 - q1 * q1 - q2 * q2 + q3 * q3};

  // RMSD from the fitted points themselves (not from the eigenvalue, which cancels badly when
  // the fit is nearly exact).
  double sum = 0.0;
  for (std::size_t k = 0; k < mobile.size(); ++k) {
    const Vec3 x = fit.apply(mobile[k]);
    for (std::size_t a = 0; a < 3; ++a) sum += (x[a] - reference[k][a]) * (x[a] - reference[k][a]);
  }
  fit.rmsd = std::sqrt(sum / static_cast<double>(mobile.size()));
  return fit;
}

}  // namespace dcs
