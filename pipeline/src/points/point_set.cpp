#include "point_set.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "dcs/atoms.hpp"
#include "dcs/error.hpp"
#include "dcs/io/point_list.hpp"
#include "dcs/limits.hpp"

namespace dcs::pipeline {

PointSet make_point_set(const PointsRequest& request, const System& system, std::size_t most) {
  if (!(std::isfinite(request.offset) && std::fabs(request.offset) <= limits::kMaxPadding))
    throw UsageError(fmt::format("--offset must be a distance within ±{:g} Å, got {}",
                                 limits::kMaxPadding, request.offset));
  PointSet set;
  switch (request.source) {
    case PointsRequest::Source::kAtoms: {
      set.positions.reserve(system.atoms.size());
      set.skip.reserve(system.atoms.size());
      for (std::size_t a = 0; a < system.atoms.size(); ++a) {
        set.positions.push_back(system.atoms[a].position);
        set.skip.push_back(static_cast<std::uint32_t>(a));
      }
      set.description = fmt::format("the {} atoms of {}, each from all the others", system.size(),
                                    system.source_path);
      break;
    }
    case PointsRequest::Source::kList: {
      if (request.offset != 0.0)
        throw UsageError("--offset moves mesh vertices along their normals; " + request.path +
                         " is a point list, which has no normals");
      set.positions = io::read_point_list(request.path, std::min(most, io::kMaxPoints));
      set.description = fmt::format("{} points of {}", set.positions.size(), request.path);
      break;
    }
    case PointsRequest::Source::kMesh: {
      io::Mesh mesh = io::read_mesh(request.path);
      // Normals are needed to move the vertices; without an offset they are kept when the file
      // has them (or its faces give them) and left out otherwise.
      if (request.offset != 0.0 || !mesh.normals.empty()) {
        set.normals = io::vertex_normals(mesh);
      } else if (mesh.face_count() > 0) {
        try {
          set.normals = io::vertex_normals(mesh);
        } catch (const InputError&) {
          set.normals.clear();  // a degenerate face somewhere: no normals, no harm without offset
        }
      }
      set.positions = mesh.vertices;
      if (request.offset != 0.0) {
        set.surface_positions = mesh.vertices;
        for (std::size_t v = 0; v < set.positions.size(); ++v)
          for (int axis = 0; axis < 3; ++axis)
            set.positions[v][axis] += request.offset * set.normals[v][axis];
      }
      set.description = request.offset != 0.0
                            ? fmt::format("{} vertices of {}, {:g} Å out along their normals",
                                          mesh.vertices.size(), request.path, request.offset)
                            : fmt::format("{} vertices of {}", mesh.vertices.size(), request.path);
      set.mesh = std::move(mesh);
      break;
    }
  }
  if (set.positions.size() > std::size_t{0xFFFFFFFE})
    throw UsageError(fmt::format("{} points: more than a run takes", set.positions.size()));
  return set;
}

}  // namespace dcs::pipeline
