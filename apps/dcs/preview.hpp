// `dcs preview MAP.h5 -o MAP.png`: slices of a map as a PNG, coloured by the potential just
// outside the molecule (or, --view centre, over the whole map). The picture is
// drawn by python/dcs_preview.py (matplotlib, a well-kept plotting library); this runs it:
// installed, from share/dcs/python beside the binary's bin/; in the build tree, from the source.
#pragma once

#include <string>
#include <vector>

namespace dcs::app {

struct PreviewCommand {
  std::string input;                ///< dcs HDF5 map
  std::string output;               ///< PNG (default <input stem>.png)
  double percentile = 99.0;         ///< colour limits: ±this percentile of |V|
  std::string view = "surface";     ///< surface (limits from the solvent-accessible shell) | centre
  std::vector<std::string> slices;  ///< "z=12.5": the planes drawn (default: through the centre)
  double probe = 1.4;               ///< Å, the shell starts at radius + probe
  double shell = 1.0;               ///< Å, shell width
  bool force = false;
};

/// The Python that draws: $DCS_PYTHON if set, else (for the build tree's binary only) the viewer
/// venv of the source tree (scripts/setup-viewers.sh) when it exists, else python3 from PATH.
std::string preview_python(bool build_tree);

/// Runs the script and returns its exit status (1 with a message when it cannot be started).
int run_preview(const PreviewCommand& command);

}  // namespace dcs::app
