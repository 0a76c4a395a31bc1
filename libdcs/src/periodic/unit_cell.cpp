// The cell from lengths and angles in reduced form, and the periodic geometry on it.
#include "dcs/unit_cell.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

namespace dcs {
namespace {

double dot(const Vec3& a, const Vec3& b) noexcept {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

Vec3 cross(const Vec3& a, const Vec3& b) noexcept {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

/// cos of an angle in degrees, exactly 0 at 90° (so an orthorhombic cell's vectors are
/// diagonal, bit for bit).
double cos_deg(double degrees) noexcept {
  return degrees == 90.0 ? 0.0 : std::cos(degrees * std::numbers::pi / 180.0);
}

double sin_deg(double degrees) noexcept {
  return degrees == 90.0 ? 1.0 : std::sin(degrees * std::numbers::pi / 180.0);
}

}  // namespace

UnitCell UnitCell::from_lengths_angles(const Vec3& lengths, const Vec3& angles_deg) {
  UnitCell cell;
  cell.lengths_ = lengths;
  cell.angles_ = angles_deg;
  if (lengths[0] == 0.0 && lengths[1] == 0.0 && lengths[2] == 0.0) return cell;  // no box
  const auto refuse = [&](std::string why) {
    cell.unusable_ = std::move(why);
    return cell;
  };
  for (int i = 0; i < 3; ++i) {
    if (!std::isfinite(lengths[i]) || !std::isfinite(angles_deg[i]))
      return refuse("a length or an angle is not a finite number");
    if (lengths[i] <= 0.0)
      return refuse(fmt::format("the length {:g} Å is not positive", lengths[i]));
    if (angles_deg[i] <= 0.0 || angles_deg[i] >= 180.0)
      return refuse(fmt::format("the angle {:g}° is outside (0, 180)", angles_deg[i]));
  }
  const double ca = cos_deg(angles_deg[0]), cb = cos_deg(angles_deg[1]);
  const double cg = cos_deg(angles_deg[2]), sg = sin_deg(angles_deg[2]);
  const double cy = (ca - cb * cg) / sg;
  const double cz2 = 1.0 - cb * cb - cy * cy;
  if (!(cz2 > 1e-12))
    return refuse(fmt::format("the angles {:g}°, {:g}°, {:g}° form no cell of positive volume",
                              angles_deg[0], angles_deg[1], angles_deg[2]));
  const double a = lengths[0], b = lengths[1], c = lengths[2];
  cell.vectors_ = {Vec3{a, 0.0, 0.0}, Vec3{b * cg, b * sg, 0.0},
                   Vec3{c * cb, c * cy, c * std::sqrt(cz2)}};
  const Mat3& m = cell.vectors_;
  cell.volume_ = dot(m[0], cross(m[1], m[2]));
  // Reciprocal rows: a* = (b × c)/V, b* = (c × a)/V, c* = (a × b)/V.
  const Vec3 bc = cross(m[1], m[2]), ca_ = cross(m[2], m[0]), ab = cross(m[0], m[1]);
  for (int i = 0; i < 3; ++i) {
    cell.reciprocal_[0][i] = bc[i] / cell.volume_;
    cell.reciprocal_[1][i] = ca_[i] / cell.volume_;
    cell.reciprocal_[2][i] = ab[i] / cell.volume_;
  }
  std::size_t n = 0;
  for (int i = -1; i <= 1; ++i)
    for (int j = -1; j <= 1; ++j)
      for (int k = -1; k <= 1; ++k)
        if (i != 0 || j != 0 || k != 0)
          cell.neighbours_[n++] = cell.to_cartesian(Vec3{double(i), double(j), double(k)});
  const bool square = angles_deg[0] == 90.0 && angles_deg[1] == 90.0 && angles_deg[2] == 90.0;
  cell.shape_ = square ? Shape::kOrthorhombic : Shape::kTriclinic;
  return cell;
}

double UnitCell::shortest_width() const noexcept {
  if (!is_periodic()) return 0.0;
  double width = 1.0 / std::sqrt(dot(reciprocal_[0], reciprocal_[0]));
  for (int i = 1; i < 3; ++i)
    width = std::min(width, 1.0 / std::sqrt(dot(reciprocal_[i], reciprocal_[i])));
  return width;
}

Vec3 UnitCell::to_fractional(const Vec3& r) const noexcept {
  return {dot(r, reciprocal_[0]), dot(r, reciprocal_[1]), dot(r, reciprocal_[2])};
}

Vec3 UnitCell::to_cartesian(const Vec3& s) const noexcept {
  Vec3 r{};
  for (int i = 0; i < 3; ++i)
    r[i] = s[0] * vectors_[0][i] + s[1] * vectors_[1][i] + s[2] * vectors_[2][i];
  return r;
}

Vec3 UnitCell::wrap(const Vec3& r) const noexcept {
  if (!is_periodic()) return r;
  Vec3 s = to_fractional(r);
  Vec3 shift{};
  for (int i = 0; i < 3; ++i) shift[i] = -std::floor(s[i]);
  Vec3 out = r;
  const Vec3 move = to_cartesian(shift);
  for (int i = 0; i < 3; ++i) out[i] += move[i];
  // Rounding may leave a coordinate a hair outside [0, 1): one more whole step fixes it.
  s = to_fractional(out);
  for (int i = 0; i < 3; ++i) {
    if (s[i] >= 1.0 || s[i] < 0.0) {
      const double step = s[i] >= 1.0 ? -1.0 : 1.0;
      for (int k = 0; k < 3; ++k) out[k] += step * vectors_[i][k];
    }
  }
  return out;
}

Vec3 UnitCell::minimum_image(const Vec3& d) const noexcept {
  if (!is_periodic()) return d;
  if (shape_ == Shape::kOrthorhombic) {  // each axis on its own: rounding is exact
    Vec3 out = d;
    for (int i = 0; i < 3; ++i) out[i] -= std::nearbyint(d[i] / lengths_[i]) * lengths_[i];
    return out;
  }
  Vec3 s = to_fractional(d);
  for (int i = 0; i < 3; ++i) s[i] -= std::nearbyint(s[i]);
  const Vec3 base = to_cartesian(s);
  Vec3 best = base;
  double best_r2 = dot(base, base);
  for (const Vec3& shift : neighbours_) {
    const Vec3 trial{base[0] + shift[0], base[1] + shift[1], base[2] + shift[2]};
    const double r2 = dot(trial, trial);
    if (r2 < best_r2) {
      best_r2 = r2;
      best = trial;
    }
  }
  return best;
}

std::string UnitCell::describe() const {
  switch (shape_) {
    case Shape::kInfinite:
      return unusable_ ? fmt::format("unusable cell {:g} {:g} {:g}, {:g} {:g} {:g} ({})",
                                     lengths_[0], lengths_[1], lengths_[2], angles_[0], angles_[1],
                                     angles_[2], *unusable_)
                       : "no cell";
    case Shape::kOrthorhombic:
      return fmt::format("orthorhombic {:.3f} {:.3f} {:.3f} Å", lengths_[0], lengths_[1],
                         lengths_[2]);
    case Shape::kTriclinic: break;
  }
  return fmt::format("triclinic {:.3f} {:.3f} {:.3f} Å, {:.2f} {:.2f} {:.2f}°", lengths_[0],
                     lengths_[1], lengths_[2], angles_[0], angles_[1], angles_[2]);
}

}  // namespace dcs
