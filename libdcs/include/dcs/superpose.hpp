// Least-squares superposition of two point sets (Kabsch's problem), as used to align the frames
// of a trajectory onto a reference before their potentials are computed or compared.
#pragma once

#include <array>
#include <vector>

#include "dcs/types.hpp"

namespace dcs {

/// A rigid motion x -> rotation * (x - from_centre) + to_centre.
struct RigidFit {
  std::array<std::array<double, 3>, 3> rotation{};  ///< row-major, proper (det +1)
  Vec3 from_centre{};                               ///< centroid of the mobile points, Å
  Vec3 to_centre{};                                 ///< centroid of the reference points, Å
  double rmsd = 0.0;  ///< of the fitted mobile points to the reference, Å
  Vec3 apply(const Vec3& x) const;
};

/// Unweighted least-squares superposition of `mobile` onto `reference` (same size n >= 1, else
/// UsageError), in float64, by Horn's quaternion method: the rotation is the eigenvector of the
/// largest eigenvalue of a symmetric 4x4 matrix (Jacobi iteration), so it is always a proper
/// rotation, never a reflection. The rotation equals MDAnalysis's
/// align.rotation_matrix(mobile - from_centre, reference - to_centre)[0].
/// Degenerate sets (n = 1, 2, collinear or coincident points), where many rotations fit
/// equally well, give one of them deterministically (the identity for n = 1 or when all points
/// coincide), never NaN. Non-finite coordinates give UsageError.
RigidFit least_squares_fit(const std::vector<Vec3>& mobile, const std::vector<Vec3>& reference);

/// The RMS extents (Å) of `points` about their centroid along its principal axes, largest
/// first: the square roots of the eigenvalues of the points' covariance matrix (the singular
/// values of the centred coordinates over sqrt(n)). Zeros for an empty set.
std::array<double, 3> principal_spreads(const std::vector<Vec3>& points);

/// A fit onto points on one line leaves the rotation about that line undetermined (any angle
/// fits equally well, and least_squares_fit's choice is arbitrary). The points count as on one
/// line (or coincident) when their RMS distance from their best line (the hypot of the second
/// and third principal spreads) is below kMinOffLineSpread, about 30 x the rounding of XTC's
/// 0.001 Å resolution and 1000 x float32's for coordinates below 100 Å, or below
/// kMinOffLineRatio of their spread along it (the first principal spread; the scale-free bound,
/// which takes over for atoms more than about 10 Å apart). Three atoms 1.5 Å apart pass once
/// bent by more than 1.6 degrees from straight.
inline constexpr double kMinOffLineSpread = 0.01;  // Å
inline constexpr double kMinOffLineRatio = 1e-3;
bool on_one_line(const std::vector<Vec3>& points);

}  // namespace dcs
