// The order the backends see points in: Z order (Morton codes on a 2^21 lattice over the points'
// bounding box), so that consecutive points are close in space and a backend's block of points
// (PotentialBackend::points_hint) is compact: its centre-relative offsets stay small, which is
// what keeps near pairs precise. The values are put back in the user's order afterwards.
#pragma once

#include <cstddef>
#include <vector>

#include "dcs/types.hpp"

namespace dcs::pipeline {

/// order[i] = the input index of the i-th point in Z order (ties in input order: stable).
std::vector<std::size_t> spatial_order(const std::vector<Vec3>& points);

}  // namespace dcs::pipeline
