// |V| on the box faces against |V| near the molecule: see dcs/io/box_faces.hpp.
#include "dcs/io/box_faces.hpp"

#include <algorithm>
#include <cmath>

namespace dcs::io {
namespace {

/// The coordinate of the last grid point along axis `a`.
double grid_end(const GridSpec& grid, std::size_t a) {
  return grid.origin[a] + static_cast<double>(grid.counts[a] - 1) * grid.spacing[a];
}

double max_abs(const float* values, std::size_t n, std::size_t step, double start) {
  double m = start;
  for (std::size_t i = 0; i < n; ++i)
    m = std::max(m, static_cast<double>(std::fabs(values[i * step])));
  return m;
}

}  // namespace

const char* face_name(int face) {
  static const char* const names[] = {"x-", "x+", "y-", "y+", "z-", "z+"};
  return face >= 0 && face < 6 ? names[face] : "?";
}

std::size_t BoxFacesSink::memory_bytes() const {  // a bit per plane
  return static_cast<std::size_t>(grid_.nz()) / 8 + 1;
}

void BoxFacesSink::begin(const MapMetadata& meta) {
  grid_ = meta.grid;
  const std::size_t points = grid_.points();
  stride_ = static_cast<std::int64_t>(
      std::max<std::size_t>(1, sample_values_ > 0 ? points / sample_values_ : 1));
  seen_.assign(static_cast<std::size_t>(grid_.nz()), false);
  face_max_.fill(0.0);
}

void BoxFacesSink::count_plane(std::int64_t z, const float* values) {
  if (!sampled(z) || seen_[static_cast<std::size_t>(z)]) return;
  seen_[static_cast<std::size_t>(z)] = true;
  const auto nx = static_cast<std::size_t>(grid_.nx()), ny = static_cast<std::size_t>(grid_.ny());
  face_max_[0] = max_abs(values, ny, nx, face_max_[0]);           // x = 0 column
  face_max_[1] = max_abs(values + nx - 1, ny, nx, face_max_[1]);  // x = nx - 1
  face_max_[2] = max_abs(values, nx, 1, face_max_[2]);            // y = 0 row
  face_max_[3] = max_abs(values + (ny - 1) * nx, nx, 1, face_max_[3]);
  if (z == 0) face_max_[4] = max_abs(values, nx * ny, 1, face_max_[4]);
  if (z == grid_.nz() - 1) face_max_[5] = max_abs(values, nx * ny, 1, face_max_[5]);
}

void BoxFacesSink::write_slab(const Slab& slab, const float* values, const StatsAccum*) {
  for (std::int64_t k = 0; k < slab.z_count; ++k)
    count_plane(slab.z_begin + k, values + static_cast<std::size_t>(k) * grid_.plane_points());
}

void BoxFacesSink::complete(MapReader& map) {
  std::vector<float> plane;
  for (std::int64_t z = 0; z < grid_.nz(); ++z) {
    if (!sampled(z) || seen_[static_cast<std::size_t>(z)]) continue;
    plane.resize(grid_.plane_points());
    map.read_planes(Slab{z, 1}, plane.data());
    count_plane(z, plane.data());
  }
}

BoxFacesCheck BoxFacesSink::check(double limit) const {
  BoxFacesCheck result;
  result.face =
      static_cast<int>(std::max_element(face_max_.begin(), face_max_.end()) - face_max_.begin());
  result.face_max_abs = face_max_[static_cast<std::size_t>(result.face)];
  result.limit = limit;
  result.net_charge = net_charge_;
  result.decay_power = std::fabs(net_charge_) >= 0.5 ? 1 : 2;
  for (std::size_t a = 0; a < 3; ++a)
    result.atoms_outside = std::max(
        {result.atoms_outside, grid_.origin[a] - box_lo_[a], box_hi_[a] - grid_end(grid_, a)});
  result.too_close = result.atoms_outside > 0.0;
  if (!(limit > 0.0)) return result;
  result.fraction = result.face_max_abs / limit;
  result.too_close = result.too_close || result.fraction >= 1.0;
  // Far field: |V(d)| = |V(d_f)| (d_f / d)^p, so d = d_f (|V(d_f)| / limit)^(1/p).
  for (int face = 0; face < 6; ++face) {
    const double value = face_max_[static_cast<std::size_t>(face)];
    if (!(value >= limit)) continue;
    const auto a = static_cast<std::size_t>(face / 2);
    const double centre = 0.5 * (box_lo_[a] + box_hi_[a]);
    const double distance = std::max(
        face % 2 == 0 ? centre - grid_.origin[a] : grid_end(grid_, a) - centre, grid_.spacing[a]);
    const double needed = distance * std::pow(value / limit, 1.0 / result.decay_power);
    result.extra_padding = std::max(result.extra_padding, needed - distance);
  }
  return result;
}

}  // namespace dcs::io
