// Bins and the short-range sum (short_range.hpp).
#include "short_range.hpp"

#include <algorithm>
#include <cmath>

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
  for (int d = 0; d < 3; ++d)
    n_[d] = static_cast<long>(std::floor((upper[d] - lower_[d]) / cell_)) + 1;
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
  for (long cz = z0c; cz <= z1c; ++cz)
    for (long cy = y0c; cy <= y1c; ++cy) {
      const std::size_t row = static_cast<std::size_t>((cz * n_[1] + cy) * n_[0]);
      for (std::size_t o = start_[row + static_cast<std::size_t>(x0)];
           x0 <= x1 && o < start_[row + static_cast<std::size_t>(x1) + 1]; ++o) {
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

double ShortRange::sum(double x, const Candidates& c) const noexcept {
  const std::size_t n = c.x.size();
  const double* cx = c.x.data();
  const double* yz2 = c.yz2.data();
  const double* q = c.q.data();
  const double inv_a = 1.0 / a_;
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = x - cx[i];
    const double r2 = dx * dx + yz2[i];
    // 1/max(r, r_min) - gamma(r/a)/a inside a; nothing outside (branch-free for the vectoriser)
    const double term =
        1.0 / std::sqrt(std::max(r2, min_r2_)) - splitting_.inner(r2 * inv_a2_) * inv_a;
    total += r2 < a2_ ? q[i] * term : 0.0;
  }
  return total;
}

}  // namespace dcs::msm
