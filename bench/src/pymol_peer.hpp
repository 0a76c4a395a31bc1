// PyMOL's direct Coulomb map (`map_new coulomb`, no cutoff: a float loop over every atom for
// every point, one thread) measured in the same run as dcs, on the same machine and atoms: the
// peer the CPU benchmark compares with.
#pragma once

#include <string>

#include "dcs/types.hpp"

namespace dcs::bench {

struct PymolMeasurement {
  bool available = false;
  std::string why;      ///< why not, when not available
  std::string version;  ///< PyMOL's cmd.get_version()
  std::string python;   ///< the interpreter that ran it
  double atoms = 0.0;
  double points = 0.0;       ///< points of the map PyMOL made (read back from its CCP4 file)
  double cpu_seconds = 0.0;  ///< process CPU time of map_new, best of the repetitions
  double evals_per_second() const { return atoms * points / cpu_seconds; }
};

/// Writes `system` as a PQR and has PyMOL map it at `spacing` Å with `buffer` Å of padding,
/// `repetitions` times (best taken). The interpreter is $DCS_PYMOL_PYTHON, else /usr/bin/python3
/// (Debian's python3-pymol), else python3 on the PATH: the first that imports pymol.
PymolMeasurement measure_pymol(const System& system, double spacing, double buffer,
                               int repetitions);

}  // namespace dcs::bench
