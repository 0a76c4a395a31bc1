// The cell list of neighbour_grid.hpp.
#include "dcs/neighbour_grid.hpp"

#include <algorithm>
#include <cmath>

namespace dcs {
namespace {

// A bin is made a hair wider than the cutoff, so that rounding in the fractional coordinates
// cannot put a point within the cutoff two bins away.
constexpr double kMargin = 1e-9;
constexpr long long kMaxPerAxis = 1024;

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

bool finite(const Vec3& v) {
  return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
}

long long floor_div(long long u, long long n) { return u >= 0 ? u / n : -((-u + n - 1) / n); }

// Halves the largest count until the bins number at most `cap` (more points per bin, but the
// bins stay at least the cutoff wide, so every query stays exact).
void cap_bins(std::array<long long, 3>& counts, long long cap) {
  while (counts[0] * counts[1] * counts[2] > cap) {
    auto largest = std::max_element(counts.begin(), counts.end());
    *largest = std::max<long long>(1, *largest / 2);
  }
}

}  // namespace

NeighbourGrid::NeighbourGrid(std::span<const Vec3> points, double cutoff, const UnitCell& cell)
    : cell_(cell), cutoff2_(cutoff * cutoff) {
  const double reach = cutoff * (1.0 + kMargin);
  const long long cap = std::max<long long>(64, 2 * static_cast<long long>(points.size()));
  std::vector<Vec3> kept;
  kept.reserve(points.size());
  for (const Vec3& p : points)
    if (finite(p)) kept.push_back(cell.is_periodic() ? cell.wrap(p) : p);
  // Bin counts: as many bins as fit at least `reach` wide along each direction.
  if (cell.is_periodic()) {
    // No minimum image is longer than half the sum of the cell vectors' lengths: from there on
    // every point is within the cutoff (and the bins a query would visit are not counted).
    double half_sum = 0.0;
    for (int i = 0; i < 3; ++i)
      half_sum += 0.5 * std::sqrt(dot(cell.vectors()[i], cell.vectors()[i]));
    everything_ = cutoff >= half_sum;
    for (int i = 0; i < 3; ++i) {
      const double spacing = 1.0 / std::sqrt(dot(cell.reciprocal()[i], cell.reciprocal()[i]));
      const double fit = reach > 0.0 ? std::floor(spacing / reach) : double(kMaxPerAxis);
      counts_[i] =
          std::clamp(static_cast<long long>(std::min(fit, double(kMaxPerAxis))), 1LL, kMaxPerAxis);
    }
    cap_bins(counts_, cap);
    for (int i = 0; i < 3; ++i) {
      const double spacing = 1.0 / std::sqrt(dot(cell.reciprocal()[i], cell.reciprocal()[i]));
      const double width = spacing / static_cast<double>(counts_[i]);
      if (!everything_) reach_[i] = std::max(1LL, static_cast<long long>(std::ceil(reach / width)));
    }
  } else {
    Vec3 high{};
    for (int i = 0; i < 3; ++i) low_[i] = high[i] = kept.empty() ? 0.0 : kept[0][i];
    for (const Vec3& p : kept)
      for (int i = 0; i < 3; ++i)
        low_[i] = std::min(low_[i], p[i]), high[i] = std::max(high[i], p[i]);
    for (int i = 0; i < 3; ++i) {
      const double extent = high[i] - low_[i];
      width_[i] = std::max({reach, extent / double(kMaxPerAxis), 1e-6});
      const double fit = std::floor(extent / width_[i]);
      counts_[i] = std::isfinite(fit) ? static_cast<long long>(fit) + 1 : 1;  // inf: one bin
    }
    const std::array<long long, 3> before = counts_;
    cap_bins(counts_, cap);
    for (int i = 0; i < 3; ++i)
      if (counts_[i] != before[i])
        width_[i] = std::max(width_[i], (high[i] - low_[i]) / double(counts_[i]) * (1.0 + kMargin));
  }
  // Counting sort of the points by bin.
  auto bin_index = [&](const Vec3& p) {
    std::array<long long, 3> b{};
    const Vec3 s = cell.is_periodic() ? cell.to_fractional(p) : Vec3{};
    for (int i = 0; i < 3; ++i) {
      const double f =
          cell.is_periodic() ? s[i] * double(counts_[i]) : (p[i] - low_[i]) / width_[i];
      b[i] = std::clamp(static_cast<long long>(std::floor(f)), 0LL, counts_[i] - 1);
    }
    return bin_of(b);
  };
  const std::size_t bins = static_cast<std::size_t>(counts_[0] * counts_[1] * counts_[2]);
  starts_.assign(bins + 1, 0);
  std::vector<std::size_t> bin(kept.size());
  for (std::size_t j = 0; j < kept.size(); ++j) ++starts_[(bin[j] = bin_index(kept[j])) + 1];
  for (std::size_t b = 0; b < bins; ++b) starts_[b + 1] += starts_[b];
  std::vector<std::size_t> next(starts_.begin(), starts_.end() - 1);
  points_.resize(kept.size());
  for (std::size_t j = 0; j < kept.size(); ++j) points_[next[bin[j]]++] = kept[j];
}

bool NeighbourGrid::any_within(const Vec3& q) const {
  if (!finite(q) || points_.empty()) return false;
  if (everything_) return true;
  return cell_.is_periodic() ? any_within_periodic(q) : any_within_open(q);
}

bool NeighbourGrid::any_within_periodic(const Vec3& q) const {
  const Vec3 w = cell_.wrap(q);
  const Vec3 s = cell_.to_fractional(w);
  std::array<long long, 3> home{};
  for (int i = 0; i < 3; ++i)
    home[i] = std::clamp(static_cast<long long>(std::floor(s[i] * double(counts_[i]))), 0LL,
                         counts_[i] - 1);
  const Mat3& v = cell_.vectors();
  std::array<long long, 3> u{}, b{};
  for (u[0] = home[0] - reach_[0]; u[0] <= home[0] + reach_[0]; ++u[0]) {
    for (u[1] = home[1] - reach_[1]; u[1] <= home[1] + reach_[1]; ++u[1]) {
      for (u[2] = home[2] - reach_[2]; u[2] <= home[2] + reach_[2]; ++u[2]) {
        // Bin u outside [0, n) is bin u mod n moved by whole cell vectors: the points' images.
        Vec3 shift{-w[0], -w[1], -w[2]};
        for (int i = 0; i < 3; ++i) {
          const long long t = floor_div(u[i], counts_[i]);
          b[i] = u[i] - t * counts_[i];
          for (int k = 0; k < 3; ++k) shift[k] += static_cast<double>(t) * v[i][k];
        }
        const std::size_t bin = bin_of(b);
        for (std::size_t j = starts_[bin]; j < starts_[bin + 1]; ++j) {
          const Vec3 d{points_[j][0] + shift[0], points_[j][1] + shift[1],
                       points_[j][2] + shift[2]};
          if (dot(d, d) <= cutoff2_) return true;
        }
      }
    }
  }
  return false;
}

bool NeighbourGrid::any_within_open(const Vec3& q) const {
  std::array<long long, 3> home{};
  for (int i = 0; i < 3; ++i) {
    const double f = std::floor((q[i] - low_[i]) / width_[i]);
    if (counts_[i] == 1) continue;  // one bin: every point is a candidate
    // A point within the cutoff is at most one bin away: farther queries find nothing.
    if (!(f >= -1.0 && f <= double(counts_[i]))) return false;
    home[i] = static_cast<long long>(f);
  }
  std::array<long long, 3> b{};
  for (b[0] = std::max(0LL, home[0] - 1); b[0] <= std::min(counts_[0] - 1, home[0] + 1); ++b[0]) {
    for (b[1] = std::max(0LL, home[1] - 1); b[1] <= std::min(counts_[1] - 1, home[1] + 1); ++b[1]) {
      for (b[2] = std::max(0LL, home[2] - 1); b[2] <= std::min(counts_[2] - 1, home[2] + 1);
           ++b[2]) {
        const std::size_t bin = bin_of(b);
        for (std::size_t j = starts_[bin]; j < starts_[bin + 1]; ++j) {
          const Vec3 d{points_[j][0] - q[0], points_[j][1] - q[1], points_[j][2] - q[2]};
          if (dot(d, d) <= cutoff2_) return true;
        }
      }
    }
  }
  return false;
}

}  // namespace dcs
