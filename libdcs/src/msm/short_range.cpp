// Bins and the short-range sum (short_range.hpp).
#include "short_range.hpp"

#include <algorithm>
#include <cmath>

#include "dcs/msm_plan.hpp"

namespace dcs::msm {

ShortRange::ShortRange(const Splitting& splitting, double cutoff, double min_distance)
    : splitting_(splitting),
      a_(cutoff),
      a2_(cutoff * cutoff),
      inv_a2_(1.0 / (cutoff * cutoff)),
      min_r2_(min_distance * min_distance),
      cell_(0.5 * cutoff) {}

void ShortRange::bin(const std::vector<PointCharge>& atoms) {
  Vec3 upper{};
  for (int d = 0; d < 3; ++d) {
    lower_[d] = upper[d] = d == 0 ? atoms[0].x : d == 1 ? atoms[0].y : atoms[0].z;
  }
  for (const PointCharge& atom : atoms) {
    const double p[3] = {atom.x, atom.y, atom.z};
    for (int d = 0; d < 3; ++d) {
      lower_[d] = std::min(lower_[d], p[d]);
      upper[d] = std::max(upper[d], p[d]);
    }
  }
  const MsmBins geometry = msm_bins(a_, lower_, upper);  // the device bins the same way
  for (int d = 0; d < 3; ++d) n_[d] = geometry.n[static_cast<std::size_t>(d)];
  const std::size_t bins = static_cast<std::size_t>(n_[0] * n_[1] * n_[2]);
  std::vector<std::size_t> of(atoms.size());
  start_.assign(bins + 1, 0);
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    const double p[3] = {atoms[i].x, atoms[i].y, atoms[i].z};
    long c[3];
    for (int d = 0; d < 3; ++d)
      c[d] = std::min(n_[d] - 1, static_cast<long>(std::floor((p[d] - lower_[d]) / cell_)));
    of[i] = static_cast<std::size_t>((c[2] * n_[1] + c[1]) * n_[0] + c[0]);
    ++start_[of[i] + 1];
  }
  for (std::size_t b = 0; b < bins; ++b) start_[b + 1] += start_[b];
  std::vector<std::size_t> fill(start_.begin(), start_.end() - 1);
  sorted_.resize(atoms.size());
  for (std::size_t i = 0; i < atoms.size(); ++i) sorted_[fill[of[i]]++] = atoms[i];
}

void ShortRange::gather(double x_begin, double x_end, double y0, double z0, Candidates& out) const {
  out.clear();
  auto cell_range = [&](double lo, double hi, int d, long& first, long& last) {
    first = std::max(0L, static_cast<long>(std::floor((lo - lower_[d]) / cell_)));
    last = std::min(n_[d] - 1, static_cast<long>(std::floor((hi - lower_[d]) / cell_)));
  };
  long x0, x1, y0c, y1c, z0c, z1c;
  cell_range(x_begin - a_, x_end + a_, 0, x0, x1);
  cell_range(y0 - a_, y0 + a_, 1, y0c, y1c);
  cell_range(z0 - a_, z0 + a_, 2, z0c, z1c);
  if (x0 > x1 || y0c > y1c || z0c > z1c) return;  // the segment is beyond a of every atom
  for (long cz = z0c; cz <= z1c; ++cz)
    for (long cy = y0c; cy <= y1c; ++cy) {
      const std::size_t row = static_cast<std::size_t>((cz * n_[1] + cy) * n_[0]);
      for (std::size_t o = start_[row + static_cast<std::size_t>(x0)];
           o < start_[row + static_cast<std::size_t>(x1) + 1]; ++o) {
        const PointCharge& atom = sorted_[o];
        const double dy = atom.y - y0, dz = atom.z - z0;
        const double yz2 = dy * dy + dz * dz;
        const double dx = atom.x < x_begin ? x_begin - atom.x
                          : atom.x > x_end ? atom.x - x_end
                                           : 0.0;
        if (yz2 + dx * dx >= a2_) continue;  // beyond a of every point of the segment
        out.x.push_back(atom.x);
        out.yz2.push_back(yz2);
        out.q.push_back(atom.q);
      }
    }
}

namespace {

inline double pair_term(double x, double cx, double yz2, double q, const double* c, double a2,
                        double inv_a2, double inv_a, double min_r2) {
  const double dx = x - cx;
  const double r2 = dx * dx + yz2;
  const double t = r2 * inv_a2 - 1.0;
  const double gamma =
      ((((((c[6] * t + c[5]) * t + c[4]) * t + c[3]) * t + c[2]) * t + c[1]) * t + c[0]);
  // 1/max(r, r_min) - gamma(r/a)/a inside a; nothing outside
  const double term = 1.0 / std::sqrt(r2 > min_r2 ? r2 : min_r2) - gamma * inv_a;
  return r2 < a2 ? q * term : 0.0;
}

/// The short-range loop over one point's candidates: eight running sums (candidate i into sum
/// i % 8) added pairwise at the end, a fixed order that depends only on the candidate list and
/// that the vectoriser can keep in registers. gamma's polynomial has a fixed degree
/// (coefficients past k are zero), so the loop has no inner loop or branch. Cloned for AVX-512
/// and AVX2, chosen once by the loader for this CPU, so every point of a run takes one clone.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
double
sum_candidates(double x, const double* cx, const double* yz2, const double* q, std::size_t n,
               const double* c, double a2, double inv_a2, double inv_a, double min_r2) {
  constexpr std::size_t kLanes = 8;
  double lane[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l)
      lane[l] += pair_term(x, cx[i + l], yz2[i + l], q[i + l], c, a2, inv_a2, inv_a, min_r2);
  for (std::size_t l = 0; i < n; ++i, ++l)
    lane[l] += pair_term(x, cx[i], yz2[i], q[i], c, a2, inv_a2, inv_a, min_r2);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

}  // namespace

double ShortRange::sum(double x, const Candidates& c) const noexcept {
  double coefficients[7] = {};
  for (int n = 0; n <= splitting_.k; ++n)
    coefficients[n] = splitting_.c[static_cast<std::size_t>(n)];
  return sum_candidates(x, c.x.data(), c.yz2.data(), c.q.data(), c.x.size(), coefficients, a2_,
                        inv_a2_, 1.0 / a_, min_r2_);
}

}  // namespace dcs::msm
