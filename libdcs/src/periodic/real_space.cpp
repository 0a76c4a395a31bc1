// The real-space Ewald sum over the periodic images on a cell list.
#include "dcs/periodic/real_space.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dcs/error.hpp"
#include "dcs/parallel.hpp"

namespace dcs::periodic {
namespace {

constexpr std::size_t kNoSlot = std::numeric_limits<std::size_t>::max();

double norm(const Vec3& v) noexcept { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/// s wrapped into [0, 1) (a rounding to 1.0 counts as 0).
Vec3 wrap_fractional(Vec3 s) noexcept {
  for (double& f : s) {
    f -= std::floor(f);
    if (!(f < 1.0)) f = 0.0;
  }
  return s;
}

int floor_div(int a, int b) noexcept { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

RealSpaceSum::RealSpaceSum(std::span<const Vec3> positions, std::span<const double> charges,
                           const UnitCell& cell, double beta, double cutoff)
    : cell_(cell), beta_(beta), cutoff_(cutoff) {
  if (!cell.is_periodic()) throw UsageError("the real-space Ewald sum needs a periodic cell");
  if (positions.size() != charges.size())
    throw UsageError("real-space sum: as many charges as positions are needed");
  // Bins about half a cutoff across the planes; fewer where that would make more bins than
  // twice the atoms (a large, sparse box), so memory stays proportional to the atoms.
  const std::size_t atoms = positions.size();
  std::array<double, 3> width{};
  for (int axis = 0; axis < 3; ++axis) {
    width[axis] = 1.0 / norm(cell.reciprocal()[axis]);
    bins_[axis] = std::max(1, int(std::min(1024.0, std::floor(width[axis] / (0.5 * cutoff)))));
  }
  const auto total = [&] {
    return std::size_t(bins_[0]) * std::size_t(bins_[1]) * std::size_t(bins_[2]);
  };
  while (total() > 2 * atoms + 64) {
    int largest = 0;
    for (int axis = 1; axis < 3; ++axis)
      if (bins_[axis] > bins_[largest]) largest = axis;
    bins_[largest] = std::max(1, bins_[largest] / 2);
  }
  for (int axis = 0; axis < 3; ++axis)
    reach_[axis] = int(std::ceil(cutoff / width[axis] * bins_[axis]));

  // Counting sort of the atoms by bin (stable).
  std::vector<Vec3> wrapped(atoms);
  atom_bin_.resize(atoms);
  std::vector<std::size_t> bin_index(atoms);
  starts_.assign(total() + 1, 0);
  for (std::size_t i = 0; i < atoms; ++i) {
    const Vec3 s = wrap_fractional(cell.to_fractional(positions[i]));
    wrapped[i] = cell.to_cartesian(s);
    atom_bin_[i] = bin_of(s);
    const auto& b = atom_bin_[i];
    bin_index[i] =
        (std::size_t(b[0]) * std::size_t(bins_[1]) + std::size_t(b[1])) * std::size_t(bins_[2]) +
        std::size_t(b[2]);
    ++starts_[bin_index[i] + 1];
  }
  for (std::size_t b = 0; b + 1 < starts_.size(); ++b) starts_[b + 1] += starts_[b];
  std::vector<std::size_t> next(starts_.begin(), starts_.end() - 1);
  x_.resize(atoms), y_.resize(atoms), z_.resize(atoms), q_.resize(atoms), slot_of_.resize(atoms);
  for (std::size_t i = 0; i < atoms; ++i) {
    const std::size_t slot = next[bin_index[i]]++;
    slot_of_[i] = slot;
    x_[slot] = wrapped[i][0], y_[slot] = wrapped[i][1], z_[slot] = wrapped[i][2];
    q_[slot] = charges[i];
  }
}

std::array<int, 3> RealSpaceSum::bin_of(const Vec3& fractional) const noexcept {
  std::array<int, 3> bin{};
  for (int axis = 0; axis < 3; ++axis)
    bin[axis] = std::min(bins_[axis] - 1, int(fractional[axis] * bins_[axis]));
  return bin;
}

double RealSpaceSum::sum_at(const Vec3& p, const std::array<int, 3>& bin, std::size_t own,
                            double min_distance) const {
  const Mat3& v = cell_.vectors();
  const double cutoff2 = cutoff_ * cutoff_;
  double sum = 0.0;
  for (int o0 = -reach_[0]; o0 <= reach_[0]; ++o0) {
    const int b0 = bin[0] + o0, n0 = floor_div(b0, bins_[0]), w0 = b0 - n0 * bins_[0];
    for (int o1 = -reach_[1]; o1 <= reach_[1]; ++o1) {
      const int b1 = bin[1] + o1, n1 = floor_div(b1, bins_[1]), w1 = b1 - n1 * bins_[1];
      for (int o2 = -reach_[2]; o2 <= reach_[2]; ++o2) {
        const int b2 = bin[2] + o2, n2 = floor_div(b2, bins_[2]), w2 = b2 - n2 * bins_[2];
        // The point relative to this image of the bin: p - n·vectors.
        const double px = p[0] - (n0 * v[0][0] + n1 * v[1][0] + n2 * v[2][0]);
        const double py = p[1] - (n0 * v[0][1] + n1 * v[1][1] + n2 * v[2][1]);
        const double pz = p[2] - (n0 * v[0][2] + n1 * v[1][2] + n2 * v[2][2]);
        const bool home = n0 == 0 && n1 == 0 && n2 == 0;
        const std::size_t b =
            (std::size_t(w0) * std::size_t(bins_[1]) + std::size_t(w1)) * std::size_t(bins_[2]) +
            std::size_t(w2);
        for (std::size_t j = starts_[b]; j < starts_[b + 1]; ++j) {
          const double dx = px - x_[j], dy = py - y_[j], dz = pz - z_[j];
          const double r2 = dx * dx + dy * dy + dz * dz;
          if (r2 >= cutoff2 || (home && j == own)) continue;
          const double r = std::max(std::sqrt(r2), min_distance);
          sum += q_[j] * std::erfc(beta_ * r) / r;
        }
      }
    }
  }
  return sum;
}

void RealSpaceSum::potential_at(std::span<const Vec3> points, std::span<double> out,
                                double min_distance, unsigned threads) const {
  if (out.size() != points.size()) throw InternalError("real-space sum: output size differs");
  parallel_for(points.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const Vec3 s = wrap_fractional(cell_.to_fractional(points[i]));
      out[i] = sum_at(cell_.to_cartesian(s), bin_of(s), kNoSlot, min_distance);
    }
  });
}

void RealSpaceSum::potential_at_atoms(std::span<double> out, unsigned threads) const {
  if (out.size() != slot_of_.size()) throw InternalError("real-space sum: output size differs");
  parallel_for(out.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t slot = slot_of_[i];
      out[i] = sum_at(Vec3{x_[slot], y_[slot], z_[slot]}, atom_bin_[i], slot, 0.0);
    }
  });
}

}  // namespace dcs::periodic
