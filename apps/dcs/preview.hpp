// `dcs preview MAP.h5 -o MAP.png`: slices of a map as a PNG, coloured over the map's own colour
// range (the file's colour_range, as the run summary printed it). The picture is
// drawn by python/dcs_preview.py (matplotlib, a well-kept plotting library); this runs it:
// installed, from share/dcs/python beside the binary's bin/; in the build tree, from the source.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dcs::app {

struct PreviewCommand {
  std::string input;   ///< dcs HDF5 map
  std::string output;  ///< PNG (default <input stem>.png)
  // Unset: the file's colour range; any of the three set: the percentile of |V| on the
  // solvent-accessible shell (surface view) or over the map (centre view) instead.
  std::optional<double> percentile;  ///< colour limits: ±this percentile of |V| (99)
  std::string view = "surface";      ///< surface (atoms' interior masked) | centre
  std::vector<std::string> slices;   ///< "z=12.5": the planes drawn (default: through the centre)
  std::optional<double> probe;       ///< Å, the shell starts at radius + probe (1.4)
  std::optional<double> shell;       ///< Å, shell width (1)
  bool force = false;
};

/// The Python that draws: $DCS_PYTHON if set, else (for the build tree's binary only) the viewer
/// venv of the source tree (scripts/setup-viewers.sh) when it exists, else the interpreter chosen
/// at build time (CMake DCS_PREVIEW_PYTHON, default /usr/bin/python3), never PATH's python3.
std::string preview_python(bool build_tree);

/// Runs the script and returns its exit status (1 with a message when it cannot be started).
int run_preview(const PreviewCommand& command);

}  // namespace dcs::app
