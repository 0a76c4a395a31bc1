// `dcs preview MAP.h5 -o MAP.png`: the three central slices of a map as a PNG. The picture is
// drawn by python/dcs_preview.py (matplotlib, a well-kept plotting library); this runs it:
// installed, from share/dcs/python beside the binary's bin/; in the build tree, from the source.
#pragma once

#include <string>

namespace dcs::app {

struct PreviewCommand {
  std::string input;         ///< dcs HDF5 map
  std::string output;        ///< PNG (default <input stem>.png)
  double percentile = 99.0;  ///< colour limits: ±this percentile of |V|
  bool force = false;
};

/// The Python that draws: $DCS_PYTHON if set, else (for the build tree's binary only) the viewer
/// venv of the source tree (scripts/setup-viewers.sh) when it exists, else python3 from PATH.
std::string preview_python(bool build_tree);

/// Runs the script and returns its exit status (1 with a message when it cannot be started).
int run_preview(const PreviewCommand& command);

}  // namespace dcs::app
