// Z order (Morton codes on a 2^21 lattice over the points' bounding box): consecutive points are
// close in space, so a backend's block of points (PotentialBackend::points_hint) is compact and
// its centre-relative offsets stay small, which keeps near pairs precise. The points job sorts
// its list so (pipeline/src/points/), and the benchmarks their random points.
#pragma once

#include <cstddef>
#include <vector>

#include "dcs/types.hpp"

namespace dcs {

/// order[i] = the input index of the i-th point in Z order (ties in input order: stable).
std::vector<std::size_t> spatial_order(const std::vector<Vec3>& points);

}  // namespace dcs
