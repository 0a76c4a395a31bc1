// --preset: the constants, units and defaults of the tools people colour surfaces with, so that
// a dcs map or table reproduces theirs (README: "which model to use when"). Each value comes
// from the tool's own source, cited beside it in presets.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/physics.hpp"

namespace dcs {

struct Preset {
  std::string name;  ///< "chimerax", "pymol"
  std::string tool;  ///< "ChimeraX coulombic", "PyMOL map_new coulomb"
  Physics physics;   ///< unit, Coulomb constant, dielectric and its model
  double spacing;    ///< Å, the tool's default grid spacing
  double padding;    ///< Å, the tool's default padding (buffer)
  GridLayout layout;
  double surface_offset;  ///< Å along vertex normals (--offset's default with this preset)
  double colour_range;    ///< the tool's default colour scale runs -range..range (unit above)
  /// The tool maps a periodic cell's smoothed reciprocal potential (VMD PMEpot): --periodic is
  /// implied and the map is dcs/periodic/pmepot_backend.hpp's.
  bool pmepot_map = false;
};

/// The presets, in the order `--help` lists them.
const std::vector<Preset>& presets();

/// The preset called `name`; throws UsageError listing the valid names otherwise.
const Preset& find_preset(std::string_view name);

}  // namespace dcs
