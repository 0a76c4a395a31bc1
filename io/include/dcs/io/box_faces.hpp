// Is the box large enough? |V| on the six faces of the box against the map's colour range, and
// the mapped atoms against the box.
//
// The criterion: a viewer paints the map at ±L, the colour range (the file's colour_range, which
// the summary, `dcs preview` and every recipe use), so the box changes what it shows only where
// a face reaches L: the saturated colour, or an isosurface at ±L, then runs into the box edge
// instead of closing around the molecule; or where mapped atoms lie outside the box (a
// trajectory's molecule that drifted or jumped across the periodic boundary, a hand-placed
// grid): their surface is not in the map at all. Below L a face is painted in a pale colour and
// changes nothing: lysozyme (net +8 e) with the default 10 Å padding has its faces at 43 % of L
// at any ε (a fixed dielectric scales both alike), so a default run does not warn.
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

/// What BoxFacesSink::check() found.
struct BoxFacesCheck {
  double face_max_abs = 0.0;  ///< the largest |V| over the six faces (map units)
  int face = 0;               ///< where: 0 x-, 1 x+, 2 y-, 3 y+, 4 z-, 5 z+
  double limit = 0.0;         ///< the colour range L given to check() (map units)
  double fraction = 0.0;      ///< face_max_abs / limit
  /// Å by which the atoms' box sticks out of the grid beyond its farthest face (0: inside).
  double atoms_outside = 0.0;
  bool too_close = false;  ///< a face reaches the limit, or atoms lie outside the box
  /// Å to move every face outwards so that each falls under the limit, from the far-field
  /// decay |V| ~ 1/d^decay_power, d the distance from the molecule's centre to the face.
  double extra_padding = 0.0;
  int decay_power = 1;      ///< 1: net charge (|Q| >= 0.5 e), 2: a neutral molecule (dipole)
  double net_charge = 0.0;  ///< e
};

/// "x-", "x+", ... for face 0-5.
const char* face_name(int face);

/// A sink that only watches (like ColourRangeSink): the faces' max |V| over the planes
/// z % stride == 0 and the last plane, stride as for the colour range (every plane of maps up to
/// sample_values points). The result depends only on the grid, not on slab size, resumption or
/// ranks: complete() reads the planes no slab brought.
class BoxFacesSink final : public WatchingSink {
 public:
  /// `box_lo`, `box_hi`: the bounding box of the mapped atoms' centres (of every frame of a
  /// trajectory); `net_charge` in e.
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
  /// too_close when a face's max |V| reaches `limit` (the map's colour range L, map units) or
  /// the atoms' box sticks out of the grid.
  BoxFacesCheck check(double limit) const;

 private:
  bool sampled(std::int64_t z) const { return z % stride_ == 0 || z == grid_.nz() - 1; }
  void count_plane(std::int64_t z, const float* values);
  Vec3 box_lo_, box_hi_;
  double net_charge_;
  std::size_t sample_values_;
  GridSpec grid_;
  std::int64_t stride_ = 1;
  std::vector<bool> seen_;  ///< per plane
  std::array<double, 6> face_max_{};
};

}  // namespace dcs::io
