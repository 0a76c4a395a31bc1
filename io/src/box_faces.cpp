// |V| on the box faces against |V| near the molecule: see dcs/io/box_faces.hpp.
#include "dcs/io/box_faces.hpp"

#include <algorithm>
#include <cmath>

namespace dcs::io {
namespace {

/// The index range [lo, hi] of grid points within [a, b] Å along one axis (lo > hi: none).
std::array<std::int64_t, 2> index_range(double a, double b, double origin, double h,
                                        std::int64_t n) {
  const auto lo = static_cast<std::int64_t>(std::max(0.0, std::ceil((a - origin) / h)));
  const double top = std::floor((b - origin) / h);
  const auto hi = top < 0.0 ? std::int64_t{-1} : std::min(n - 1, static_cast<std::int64_t>(top));
  return {lo, hi};
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

std::size_t BoxFacesSink::memory_bytes() const { return std::size_t{1} << 20; }  // the histogram

void BoxFacesSink::begin(const MapMetadata& meta) {
  grid_ = meta.grid;
  const std::size_t points = grid_.points();
  stride_ = static_cast<std::int64_t>(
      std::max<std::size_t>(1, sample_values_ > 0 ? points / sample_values_ : 1));
  for (std::size_t a = 0; a < 3; ++a) {
    const auto range = index_range(box_lo_[a] - kBoxFacesMargin, box_hi_[a] + kBoxFacesMargin,
                                   grid_.origin[a], grid_.spacing[a], grid_.counts[a]);
    near_lo_[a] = range[0];
    near_hi_[a] = range[1];
  }
  seen_.assign(static_cast<std::size_t>(grid_.nz()), false);
  face_max_.fill(0.0);
  near_ = AbsValueHistogram();
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
  if (z < near_lo_[2] || z > near_hi_[2] || near_lo_[0] > near_hi_[0]) return;
  for (std::int64_t j = near_lo_[1]; j <= near_hi_[1]; ++j)
    near_.add(values + static_cast<std::size_t>(j) * nx + static_cast<std::size_t>(near_lo_[0]),
              static_cast<std::size_t>(near_hi_[0] - near_lo_[0] + 1));
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

BoxFacesCheck BoxFacesSink::check(double percentile, double limit) const {
  BoxFacesCheck result;
  result.face =
      static_cast<int>(std::max_element(face_max_.begin(), face_max_.end()) - face_max_.begin());
  result.face_max_abs = face_max_[static_cast<std::size_t>(result.face)];
  result.reference = near_.percentile(percentile);
  if (!(result.reference > 0.0)) return result;
  result.fraction = result.face_max_abs / result.reference;
  result.too_close = result.fraction > limit;
  result.net_charge = net_charge_;
  result.decay_power = std::fabs(net_charge_) >= 0.5 ? 1 : 2;
  // Far field: |V(d)| = |V(d_f)| (d_f / d)^p, so d = d_f (|V(d_f)| / target)^(1/p).
  const double target = limit * result.reference;
  for (int face = 0; face < 6; ++face) {
    const double value = face_max_[static_cast<std::size_t>(face)];
    if (!(value > target)) continue;
    const auto a = static_cast<std::size_t>(face / 2);
    const double centre = 0.5 * (box_lo_[a] + box_hi_[a]);
    const double edge =
        grid_.origin[a] + static_cast<double>(grid_.counts[a] - 1) * grid_.spacing[a];
    const double distance =
        std::max(face % 2 == 0 ? centre - grid_.origin[a] : edge - centre, grid_.spacing[a]);
    const double needed = distance * std::pow(value / target, 1.0 / result.decay_power);
    result.extra_padding = std::max(result.extra_padding, needed - distance);
  }
  return result;
}

}  // namespace dcs::io
