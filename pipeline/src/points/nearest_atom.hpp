// How far listed points or mesh vertices lie from the molecule: the distance of each to its
// nearest atom centre, summarised (median, maximum). A surface mesh in the molecule's frame has
// its vertices 1-4 Å from atom centres; a mesh saved in another frame (PyMOL's `save x.obj`
// writes camera coordinates) lies far off, and its values mean nothing for the molecule.
#pragma once

#include <cstddef>
#include <vector>

#include "dcs/types.hpp"

namespace dcs::pipeline {

struct NearestAtomDistances {
  double median = 0.0;  ///< Å (of an even count: the upper middle value)
  double max = 0.0;     ///< Å
};

/// The median and largest distance from `points` to their nearest atom of `system` (neither
/// empty): a cell list over the atoms' box (about two atoms a cell), each point searching shells
/// of cells outward from the cell nearest it until no nearer atom can be left, so the cost grows
/// with the points and atoms, not their product.
NearestAtomDistances nearest_atom_distances(const std::vector<Vec3>& points, const System& system);

/// Above this median (Å, plus any --offset) a points run warns that the points lie away from the
/// molecule: the vertices of a molecular surface lie within about 4 Å of atom centres (a
/// radius of at most 2 Å plus the 1.4 Å probe of a solvent-accessible surface), so 6 Å leaves
/// room for coarse meshes while an 18 Å median (a mesh in camera coordinates) is caught.
inline constexpr double kFarMedianDistance = 6.0;

}  // namespace dcs::pipeline
