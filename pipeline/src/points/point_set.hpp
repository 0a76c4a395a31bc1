// Where a points run wants the potential: listed points, a surface mesh's vertices (moved along
// their normals by --offset), or every atom's centre with that atom left out (--at-atoms).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dcs/io/mesh.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/types.hpp"

namespace dcs::pipeline {

struct PointSet {
  std::vector<Vec3> positions;          ///< where the values are computed, in the user's order
  std::vector<std::uint32_t> skip;      ///< empty, or per point the atom left out (--at-atoms)
  std::vector<Vec3> normals;            ///< meshes: a unit normal per vertex, when known
  std::vector<Vec3> surface_positions;  ///< meshes moved by --offset: the vertices before it
  std::optional<io::Mesh> mesh;         ///< the mesh read, written back with the values
  std::string description;  ///< e.g. "2562 vertices of surf.ply, 1.4 Å out along the normals"
};

/// Reads the request's points (io::read_point_list, io::read_mesh) or takes `system`'s atoms.
/// Throws InputError for a bad file, and UsageError for an offset on a list or beyond
/// limits::kMaxPadding; io::TooManyPoints for a list of more than `most` points.
PointSet make_point_set(const PointsRequest& request, const System& system,
                        std::size_t most = SIZE_MAX);

}  // namespace dcs::pipeline
