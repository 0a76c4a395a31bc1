// The float64 Ewald sum (see ewald_reference.hpp): plain loops over atoms, images and k.
#include "dcs/periodic/ewald_reference.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "dcs/error.hpp"
#include "dcs/parallel.hpp"

namespace dcs::periodic {
namespace {

double dot(const Vec3& a, const Vec3& b) noexcept {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/// The reciprocal sum's terms: for each m of the half space (m1 > 0, or m1 = 0 and m2 > 0, or
/// m1 = m2 = 0 and m3 > 0) with |k| ≤ k_cutoff, 2·(4π/V)·exp(-k²/4β²)/k² and S(k).
class ReciprocalSum {
 public:
  ReciprocalSum(std::span<const Vec3> positions, std::span<const double> charges,
                const UnitCell& cell, const EwaldParameters& parameters, unsigned threads)
      : cell_(cell) {
    const double pi = std::numbers::pi;
    for (int axis = 0; axis < 3; ++axis)  // |m_i| = |k·a_i|/2π ≤ k_cutoff |a_i| / 2π
      limit_[axis] = int(parameters.k_cutoff *
                         std::sqrt(dot(cell.vectors()[axis], cell.vectors()[axis])) / (2 * pi));
    const Mat3& star = cell.reciprocal();
    for (int m1 = 0; m1 <= limit_[0]; ++m1)
      for (int m2 = -limit_[1]; m2 <= limit_[1]; ++m2)
        for (int m3 = -limit_[2]; m3 <= limit_[2]; ++m3) {
          if (m1 == 0 && (m2 < 0 || (m2 == 0 && m3 <= 0))) continue;
          Vec3 k{};
          for (int i = 0; i < 3; ++i)
            k[i] = 2 * pi * (m1 * star[0][i] + m2 * star[1][i] + m3 * star[2][i]);
          const double k2 = dot(k, k);
          if (k2 > parameters.k_cutoff * parameters.k_cutoff) continue;
          m_.push_back({m1, m2, m3});
          weight_.push_back(2.0 * 4.0 * pi / cell.volume() *
                            std::exp(-k2 / (4.0 * parameters.beta * parameters.beta)) / k2);
        }
    // S(k) per k, each k's sum over the atoms in atom order: each thread owns a range of k and
    // walks every atom (so the sums do not depend on the thread count).
    structure_.assign(m_.size(), {0.0, 0.0});
    parallel_for(m_.size(), threads, [&](std::size_t begin, std::size_t end) {
      Phases phases;
      for (std::size_t j = 0; j < positions.size(); ++j) {
        fill(phases, cell.to_fractional(positions[j]));
        for (std::size_t k = begin; k < end; ++k) structure_[k] += charges[j] * term(phases, k);
      }
    });
  }

  /// (4π/V) Σ_{k≠0} exp(-k²/4β²)/k² Re[S(k) e^{-ik·r}].
  double at(const Vec3& r) const {
    Phases phases;
    fill(phases, cell_.to_fractional(r));
    double sum = 0.0;
    for (std::size_t k = 0; k < m_.size(); ++k)
      sum += weight_[k] * (structure_[k] * std::conj(term(phases, k))).real();
    return sum;
  }

 private:
  /// e^{2πi m s_i} for m = -limit_i..limit_i along each axis, each from its own phase m·s_i
  /// reduced mod 1 (so the rounding does not grow with m).
  using Phases = std::array<std::vector<std::complex<double>>, 3>;

  void fill(Phases& phases, const Vec3& s) const {
    for (int i = 0; i < 3; ++i) {
      phases[i].resize(std::size_t(2 * limit_[i] + 1));
      for (int m = -limit_[i]; m <= limit_[i]; ++m) {
        const double turns = m * s[i] - std::nearbyint(m * s[i]);
        phases[i][std::size_t(m + limit_[i])] = std::polar(1.0, 2.0 * std::numbers::pi * turns);
      }
    }
  }

  /// e^{ik·r} = e^{2πi m·s} of term k.
  std::complex<double> term(const Phases& phases, std::size_t k) const noexcept {
    const auto& m = m_[k];
    return phases[0][std::size_t(m[0] + limit_[0])] * phases[1][std::size_t(m[1] + limit_[1])] *
           phases[2][std::size_t(m[2] + limit_[2])];
  }

  UnitCell cell_;
  std::array<int, 3> limit_{};
  std::vector<std::array<int, 3>> m_;
  std::vector<double> weight_;
  std::vector<std::complex<double>> structure_;
};

/// Σ_j Σ_n q_j erfc(β r)/r over the images within the cutoff, skipping atom `own` at n = 0.
double real_sum_at(std::span<const Vec3> positions, std::span<const double> charges,
                   const UnitCell& cell, const Vec3& r, const EwaldParameters& parameters,
                   double min_distance, std::size_t own) {
  const Mat3& v = cell.vectors();
  const double cutoff2 = parameters.real_cutoff * parameters.real_cutoff;
  // A displacement reduced to fractional s in [-½, ½] plus n is within the cutoff only if
  // |s_i + n_i| = |a*_i · d| ≤ cutoff·|a*_i|, so |n_i| ≤ cutoff·|a*_i| + ½.
  std::array<int, 3> reach{};
  for (int i = 0; i < 3; ++i)
    reach[i] = int(std::floor(
        parameters.real_cutoff * std::sqrt(dot(cell.reciprocal()[i], cell.reciprocal()[i])) + 0.5));
  double sum = 0.0;
  for (std::size_t j = 0; j < positions.size(); ++j) {
    Vec3 s = cell.to_fractional(
        Vec3{r[0] - positions[j][0], r[1] - positions[j][1], r[2] - positions[j][2]});
    Vec3 shift{};
    for (int i = 0; i < 3; ++i) shift[i] = std::nearbyint(s[i]);
    for (int n0 = -reach[0]; n0 <= reach[0]; ++n0)
      for (int n1 = -reach[1]; n1 <= reach[1]; ++n1)
        for (int n2 = -reach[2]; n2 <= reach[2]; ++n2) {
          const double c0 = n0 - shift[0], c1 = n1 - shift[1], c2 = n2 - shift[2];
          if (j == own && c0 == 0.0 && c1 == 0.0 && c2 == 0.0) continue;
          Vec3 d{};
          for (int i = 0; i < 3; ++i)
            d[i] = r[i] - positions[j][i] + c0 * v[0][i] + c1 * v[1][i] + c2 * v[2][i];
          const double r2 = dot(d, d);
          if (r2 >= cutoff2) continue;
          const double distance = std::max(std::sqrt(r2), min_distance);
          sum += charges[j] * std::erfc(parameters.beta * distance) / distance;
        }
  }
  return sum;
}

void check_inputs(std::span<const Vec3> positions, std::span<const double> charges,
                  const UnitCell& cell) {
  if (!cell.is_periodic()) throw UsageError("the Ewald sum needs a periodic cell");
  if (positions.size() != charges.size())
    throw UsageError("the Ewald sum needs as many charges as positions");
}

double total_charge(std::span<const double> charges) noexcept {
  double q = 0.0;
  for (const double c : charges) q += c;
  return q;
}

}  // namespace

EwaldParameters reference_parameters(const UnitCell& cell, const PeriodicSettings& settings) {
  PeriodicSettings tight = settings;
  tight.accuracy = std::min(1e-8, settings.accuracy * 1e-3);
  tight.real_cutoff = std::max(2.0 * settings.real_cutoff, 0.5 * cell.shortest_width());
  return choose_ewald_parameters(cell, tight);
}

std::vector<double> ewald_reference_at(std::span<const Vec3> positions,
                                       std::span<const double> charges, const UnitCell& cell,
                                       std::span<const Vec3> points,
                                       const EwaldParameters& parameters, double min_distance,
                                       unsigned threads) {
  check_inputs(positions, charges, cell);
  const ReciprocalSum reciprocal(positions, charges, cell, parameters, threads);
  const double background = -std::numbers::pi * total_charge(charges) /
                            (parameters.beta * parameters.beta * cell.volume());
  std::vector<double> out(points.size());
  parallel_for(points.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      out[i] = real_sum_at(positions, charges, cell, points[i], parameters, min_distance,
                           positions.size()) +
               reciprocal.at(points[i]) + background;
  });
  return out;
}

std::vector<double> reciprocal_reference_at(std::span<const Vec3> positions,
                                            std::span<const double> charges, const UnitCell& cell,
                                            std::span<const Vec3> points,
                                            const EwaldParameters& parameters, unsigned threads) {
  check_inputs(positions, charges, cell);
  const ReciprocalSum reciprocal(positions, charges, cell, parameters, threads);
  std::vector<double> out(points.size());
  parallel_for(points.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) out[i] = reciprocal.at(points[i]);
  });
  return out;
}

std::vector<double> ewald_reference_at_atoms(std::span<const Vec3> positions,
                                             std::span<const double> charges, const UnitCell& cell,
                                             const EwaldParameters& parameters, unsigned threads) {
  check_inputs(positions, charges, cell);
  const ReciprocalSum reciprocal(positions, charges, cell, parameters, threads);
  const double background = -std::numbers::pi * total_charge(charges) /
                            (parameters.beta * parameters.beta * cell.volume());
  const double self = -2.0 * parameters.beta / std::sqrt(std::numbers::pi);
  std::vector<double> out(positions.size());
  parallel_for(positions.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i)
      out[i] = real_sum_at(positions, charges, cell, positions[i], parameters, 0.0, i) +
               reciprocal.at(positions[i]) + background + self * charges[i];
  });
  return out;
}

}  // namespace dcs::periodic
