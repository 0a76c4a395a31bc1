// What must never pass silently in a trajectory's frames, judged once every frame is read: bonds
// still across the cell boundary after making molecules whole, mapped atoms outside the grid,
// and fits whose RMSD stands out from the others (a molecule split or jumped in that frame).
// Each is named with its frames on the console and counted in the file; --strict refuses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frame_engine.hpp"

namespace dcs::pipeline {

struct FrameChecks {
  std::vector<std::int64_t> long_bond_frames;     ///< trajectory frame numbers
  std::vector<std::int64_t> outside_grid_frames;  ///< trajectory frame numbers
  std::vector<std::int64_t> fit_outlier_frames;   ///< trajectory frame numbers
  double fit_outlier_threshold = 0.0;  ///< Å; 0 when not judged (no --align, < 5 frames)
};

/// Judges the frames of `report` (listed `frames`), logs a warning for each kind found naming
/// up to 10 frames, and under `strict` throws InputError naming `file` and the frames.
FrameChecks judge_frames(const FrameEngineReport& report, const std::vector<std::int64_t>& frames,
                         const std::string& file, bool strict);

/// The fit RMSD above which a frame is an outlier: the median plus the larger of 6 scaled
/// median absolute deviations and 1 Å (a robust rule: one split frame cannot hide itself by
/// inflating a standard deviation; 1 Å keeps ordinary flexibility from counting). 0 with fewer
/// than 5 frames.
double fit_outlier_threshold(std::vector<double> rmsd);

}  // namespace dcs::pipeline
