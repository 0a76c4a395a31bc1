// The MSM's short-range part: sum_i q_i [1/max(r_i, r_min) - g_a(r_i)] over the atoms within a
// of a point. Atoms are sorted into cubic bins of side a/2 (stable, so input order within a
// bin); a row block of map points gathers the atoms within a of its segment, bins in (z, y, x)
// order, and each point sums that list in order: the same bits whatever computes the block.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "dcs/types.hpp"
#include "lattice.hpp"
#include "splitting.hpp"

namespace dcs::msm {

/// The atoms near one block of points: positions relative to nothing (Å), charges, and the
/// squared distance of each from the block's line in y and z.
struct Candidates {
  std::vector<double> x, yz2, q;
  void clear() {
    x.clear();
    yz2.clear();
    q.clear();
  }
};

class ShortRange {
 public:
  ShortRange(const Splitting& splitting, double cutoff, double min_distance);

  void bin(const std::vector<PointCharge>& atoms);

  /// The atoms within the cutoff of the segment y = y0, z = z0, x in [x_begin, x_end].
  void gather(double x_begin, double x_end, double y0, double z0, Candidates& out) const;

  /// The short-range sum at (x, y0, z0) over `c` gathered for its segment (e/Å).
  double sum(double x, const Candidates& c) const noexcept;

  double cutoff() const noexcept { return a_; }

  // The bins, copied out by msm_prepare_host (msm_bins() in dcs/msm_plan.hpp sizes them): bin (x,
  // y, z) covers [lower + (x, y, z) * cell, + cell) and holds sorted()[starts()[b], starts()[b +
  // 1]) for b = (z * bins[1] + y) * bins[0] + x (the last bin of an axis also its upper edge).
  const Vec3& lower() const noexcept { return lower_; }
  double cell() const noexcept { return cell_; }
  std::array<long, 3> bins() const noexcept { return {n_[0], n_[1], n_[2]}; }
  const std::vector<std::size_t>& starts() const noexcept { return start_; }
  const std::vector<PointCharge>& sorted() const noexcept { return sorted_; }

 private:
  Splitting splitting_;
  double a_, a2_, inv_a2_, min_r2_;
  double cell_;
  Vec3 lower_{};
  long n_[3] = {0, 0, 0};
  std::vector<std::size_t> start_;  ///< bin b's atoms: [start_[b], start_[b+1])
  std::vector<PointCharge> sorted_;
};

}  // namespace dcs::msm
