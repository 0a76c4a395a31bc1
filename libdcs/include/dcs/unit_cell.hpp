// The periodic cell of an MD system (chemfiles' Frame::cell, OpenMM's box vectors): lengths
// a, b, c in Å and angles α, β, γ in degrees, as MDAnalysis reports `dimensions`, held as three
// box vectors in reduced form (a along x, b in the xy plane, c with z > 0), which is the form
// GROMACS and OpenMM require and the one every cell can be brought to by a rotation.
// An infinite cell (the default) is a system without periodicity.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "dcs/vec3.hpp"

namespace dcs {

class UnitCell {
 public:
  enum class Shape {
    kInfinite,      ///< no periodicity
    kOrthorhombic,  ///< every angle 90°
    kTriclinic,     ///< any other usable cell
  };

  UnitCell() = default;  ///< infinite

  /// A cell from its lengths (Å) and angles (degrees). Every value must be finite, the lengths
  /// > 0 and the angles in (0, 180) forming a cell of positive volume; why_unusable() says
  /// otherwise, and the cell is then kept as given but is_periodic() is false. All-zero
  /// lengths (DCD, XTC and TRR files without a box write zeros) give the infinite cell.
  static UnitCell from_lengths_angles(const Vec3& lengths, const Vec3& angles_deg);

  Shape shape() const noexcept { return shape_; }
  bool is_periodic() const noexcept { return shape_ != Shape::kInfinite; }
  /// Why a cell that was given is not usable for periodic work ("a length is 0", "the angles
  /// 10, 10, 170 form no cell"); none for a usable cell and for the infinite cell.
  const std::optional<std::string>& why_unusable() const noexcept { return unusable_; }

  const Vec3& lengths() const noexcept { return lengths_; }  ///< Å
  const Vec3& angles() const noexcept { return angles_; }    ///< degrees
  const Mat3& vectors() const noexcept { return vectors_; }  ///< reduced form, Å
  /// The reciprocal vectors without 2π: rows a*, b*, c* with a·a* = 1, a·b* = 0, ...
  /// (the inverse of vectors(), transposed).
  const Mat3& reciprocal() const noexcept { return reciprocal_; }
  double volume() const noexcept { return volume_; }  ///< Å³ (0 when not periodic)
  /// The smallest spacing of the lattice planes through two cell vectors (Å), V / |a × b| and
  /// the like: the thinnest the box is; a sphere of that diameter fits in it.
  double shortest_width() const noexcept;

  /// Fractional coordinates (s with r = s0·a + s1·b + s2·c) and back.
  Vec3 to_fractional(const Vec3& r) const noexcept;
  Vec3 to_cartesian(const Vec3& s) const noexcept;
  /// The image of r whose fractional coordinates are in [0, 1).
  Vec3 wrap(const Vec3& r) const noexcept;
  /// The shortest image of a difference vector d (the minimum image convention), exact for any
  /// cell in reduced form: the nearest lattice point is searched among the 27 neighbours of the
  /// fractional rounding.
  Vec3 minimum_image(const Vec3& d) const noexcept;

  /// "orthorhombic 61.000 61.000 61.000" or "triclinic 77.1 77.1 77.1, 109.47 109.47 109.47".
  std::string describe() const;

  bool operator==(const UnitCell& other) const noexcept {
    return shape_ == other.shape_ && lengths_ == other.lengths_ && angles_ == other.angles_;
  }

 private:
  Shape shape_ = Shape::kInfinite;
  Vec3 lengths_{0.0, 0.0, 0.0};
  Vec3 angles_{90.0, 90.0, 90.0};
  Mat3 vectors_{};
  Mat3 reciprocal_{};
  /// The 26 lattice vectors i·a + j·b + k·c, i, j, k in {-1, 0, 1}, not all 0: the neighbours
  /// minimum_image() tries, made once with the cell rather than on every call.
  std::array<Vec3, 26> neighbours_{};
  double volume_ = 0.0;
  std::optional<std::string> unusable_;
};

}  // namespace dcs
