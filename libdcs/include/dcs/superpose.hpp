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

}  // namespace dcs
