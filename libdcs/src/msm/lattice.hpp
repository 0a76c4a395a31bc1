// The MSM's long-range part: charges anterpolated to the finest lattice, restricted level by
// level, a cutoff lattice sum on each level and an all-pairs sum on the top one, prolonged back
// so that the finest lattice holds the potential of the smooth kernel g_a. Every step is a
// gather in a fixed order (no atomics, no order that depends on threads), so the lattice is the
// same bits for any thread count.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "dcs/parallel.hpp"
#include "dcs/types.hpp"
#include "splitting.hpp"

namespace dcs::msm {

struct PointCharge {
  double x, y, z, q;
};

/// Values on lattice indices lo[d] .. lo[d] + n[d] - 1, x fastest.
struct Lattice {
  std::array<long, 3> lo{};
  std::array<long, 3> n{};
  std::vector<double> v;

  void resize(std::array<long, 3> lower, std::array<long, 3> counts);
  std::size_t points() const noexcept {
    return static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) *
           static_cast<std::size_t>(n[2]);
  }
  /// Flat offset of lattice index (i, j, k) (absolute indices, inside the range).
  std::size_t offset(long i, long j, long k) const noexcept {
    return (static_cast<std::size_t>(k - lo[2]) * static_cast<std::size_t>(n[1]) +
            static_cast<std::size_t>(j - lo[1])) *
               static_cast<std::size_t>(n[0]) +
           static_cast<std::size_t>(i - lo[0]);
  }
};

/// Throws InterruptedError once dcs::interrupt_requested(): the lattice loops poll it per
/// plane, line or row, so SIGTERM takes effect within a fraction of a second of lattice work.
void stop_if_interrupted();

/// A kernel tabulated on lattice displacements |d_x| <= r[0], ..., x fastest.
struct Stencil {
  std::array<long, 3> r{};
  std::vector<double> v;
};

/// e = scale * sum_d K(d) q_{n+d} by the stencil directly (K even), skipping zeros; the
/// oracle of the FFT sum (fft_convolution.hpp), which LongRange uses where it is less work.
void direct_lattice_sum(const Lattice& q, const Stencil& K, double scale, Lattice& e,
                        ThreadPool& pool);

/// The lattice hierarchy of one prepare().
class LongRange {
 public:
  LongRange(const Basis& basis, const Splitting& splitting, double h, double a)
      : basis_(basis), splitting_(splitting), h_(h), a_(a) {}

  /// Solves for the long-range potential (in e/Å, before the unit's factor) on a finest lattice
  /// whose index 0 sits at `lower` and which covers [lower, upper] with the basis' support.
  void solve(const std::vector<PointCharge>& atoms, const Vec3& lower, const Vec3& upper,
             ThreadPool& pool);

  const Lattice& finest() const noexcept { return potential_; }
  const Vec3& origin() const noexcept { return origin_; }
  double spacing() const noexcept { return h_; }
  int levels() const noexcept { return levels_; }
  std::size_t lattice_points() const noexcept { return lattice_points_; }

 private:
  Basis basis_;
  Splitting splitting_;
  double h_, a_;
  Vec3 origin_{};
  int levels_ = 0;
  std::size_t lattice_points_ = 0;
  Lattice potential_;
};

}  // namespace dcs::msm
