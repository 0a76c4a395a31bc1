// Which points lie within a distance of a query point, fast: a cell list. The points are
// binned in cells at least the cutoff wide, so a query looks at its own bin and the 26 around
// it. In a periodic cell the bins are slices of the cell in fractional coordinates and the
// distances are minimum-image, exact for triclinic cells too (a point's image within the
// cutoff lies at most one bin away along each cell vector, whatever the angles); without a
// cell the bins cover the points' bounding box and the distances are plain. Used by the
// selections' distance keywords (around).
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "dcs/unit_cell.hpp"
#include "dcs/vec3.hpp"

namespace dcs {

class NeighbourGrid {
 public:
  /// Bins `points` (copied) for queries at `cutoff` (Å, >= 0). Points with a coordinate that
  /// is not finite are left out (never within any distance).
  NeighbourGrid(std::span<const Vec3> points, double cutoff, const UnitCell& cell);

  /// Whether some point lies within the cutoff of q (distance <= cutoff, in the point's
  /// nearest image in a periodic cell). False for a q that is not finite.
  bool any_within(const Vec3& q) const;

 private:
  bool any_within_periodic(const Vec3& q) const;
  bool any_within_open(const Vec3& q) const;
  std::size_t bin_of(const std::array<long long, 3>& b) const noexcept {
    return static_cast<std::size_t>((b[0] * counts_[1] + b[1]) * counts_[2] + b[2]);
  }

  UnitCell cell_;
  double cutoff2_ = 0.0;
  bool everything_ = false;  ///< periodic, cutoff beyond any minimum image: all points near
  std::array<long long, 3> counts_{1, 1, 1};  ///< bins along each cell vector (or axis)
  std::array<long long, 3> reach_{1, 1, 1};   ///< bins a query looks at on each side
  Vec3 low_{};                                ///< open case: the bounding box's lowest corner
  Vec3 width_{};                              ///< open case: a bin's width per axis (Å)
  std::vector<std::size_t> starts_;           ///< bin b holds points_[starts_[b], starts_[b+1])
  std::vector<Vec3> points_;                  ///< wrapped into the cell when periodic, by bin
};

}  // namespace dcs
