// Is the box large enough? |V| on the six faces of the box, compared with |V| near the molecule.
//
// The potential of a charged molecule decays as 1/r (a neutral one about as 1/r^2), so with the
// default 10 Å padding the box faces can still be at a sizeable fraction of the surface potential
// (lysozyme at ε = 80: 1.8-2.2 kT/e on the faces, 5.7 kT/e near the atoms), and isosurfaces or
// colours at those levels end at the box edge. BoxFacesSink watches the slabs and records the
// largest |V| on each face and a histogram of |V| within kBoxFacesMargin of the atoms' bounding
// box; check() compares the two and estimates how far the faces must move.
//
// The reference is the near-molecule percentile, not the map's colour range: the map-wide
// percentile falls as the box grows (lysozyme, ε = 80: 4.9, 4.2, 3.7 kT/e at padding 10, 20,
// 30 Å), so a face criterion against it would never be met for a charged molecule.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dcs/io/colour_range.hpp"
#include "dcs/io/watching_sink.hpp"
#include "dcs/map.hpp"
#include "dcs/map_sink.hpp"
#include "dcs/types.hpp"

namespace dcs::io {

/// Å around the atoms' bounding box (of centres) that counts as "near the molecule".
inline constexpr double kBoxFacesMargin = 3.0;
/// A face is too close when its max |V| exceeds this fraction of the near-molecule range.
inline constexpr double kBoxFacesFraction = 0.25;

/// What BoxFacesSink::check() found.
struct BoxFacesCheck {
  double face_max_abs = 0.0;  ///< the largest |V| over the six faces (map units)
  int face = 0;               ///< where: 0 x-, 1 x+, 2 y-, 3 y+, 4 z-, 5 z+
  double reference = 0.0;     ///< the percentile of |V| near the molecule (map units)
  double fraction = 0.0;      ///< face_max_abs / reference
  bool too_close = false;     ///< fraction above the limit given to check()
  /// Å to move every face outwards so that each falls under the limit, from the far-field
  /// decay |V| ~ 1/d^decay_power, d the distance from the molecule's centre to the face.
  double extra_padding = 0.0;
  int decay_power = 1;      ///< 1: net charge (|Q| >= 0.5 e), 2: a neutral molecule (dipole)
  double net_charge = 0.0;  ///< e
};

/// "x-", "x+", ... for face 0-5.
const char* face_name(int face);

/// A sink that only watches (like ColourRangeSink): the faces' max |V| and a histogram of |V|
/// near the molecule, over the planes z % stride == 0 and the last plane, stride as for the
/// colour range (every plane of maps up to sample_values points). The result depends only on
/// the grid, not on slab size, resumption or ranks: complete() reads the planes no slab brought.
class BoxFacesSink final : public WatchingSink {
 public:
  /// `box_lo`, `box_hi`: the bounding box of the atom centres; `net_charge` in e.
  BoxFacesSink(const Vec3& box_lo, const Vec3& box_hi, double net_charge,
               std::size_t sample_values = kColourRangeSampleValues)
      : box_lo_(box_lo), box_hi_(box_hi), net_charge_(net_charge), sample_values_(sample_values) {}
  std::string name() const override { return "(box faces)"; }
  std::size_t memory_bytes() const override;
  void begin(const MapMetadata& meta) override;
  void write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) override;
  /// Reads the sampled planes no slab brought, one at a time. Idempotent.
  void complete(MapReader& map) override;
  /// Max |V| on each face (0 x-, 1 x+, 2 y-, 3 y+, 4 z-, 5 z+) over the planes seen so far.
  const std::array<double, 6>& face_max_abs() const noexcept { return face_max_; }
  /// Compares the faces with the `percentile` of |V| near the molecule; too_close when a face
  /// exceeds `limit` times it.
  BoxFacesCheck check(double percentile = 99.0, double limit = kBoxFacesFraction) const;

 private:
  bool sampled(std::int64_t z) const { return z % stride_ == 0 || z == grid_.nz() - 1; }
  void count_plane(std::int64_t z, const float* values);
  Vec3 box_lo_, box_hi_;
  double net_charge_;
  std::size_t sample_values_;
  GridSpec grid_;
  std::int64_t stride_ = 1;
  std::array<std::int64_t, 3> near_lo_{}, near_hi_{};  ///< index box near the molecule (inclusive)
  std::vector<bool> seen_;                             ///< per plane
  std::array<double, 6> face_max_{};
  AbsValueHistogram near_;
};

}  // namespace dcs::io
