// Judging a trajectory's frames (frame_checks.hpp).
#include "frame_checks.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/log.hpp"

namespace dcs::pipeline {
namespace {

double median(std::vector<double>& values) {
  const std::size_t n = values.size();
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n / 2),
                   values.end());
  const double upper = values[n / 2];
  if (n % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n / 2));
  return 0.5 * (lower + upper);
}

std::string list_frames(const std::vector<std::int64_t>& frames) {
  std::string text;
  for (std::size_t i = 0; i < frames.size() && i < 10; ++i)
    text += (i ? ", " : "") + std::to_string(frames[i]);
  if (frames.size() > 10) text += fmt::format(" and {} more", frames.size() - 10);
  return text;
}

}  // namespace

double fit_outlier_threshold(std::vector<double> rmsd) {
  if (rmsd.size() < 5) return 0.0;
  const double middle = median(rmsd);
  for (double& value : rmsd) value = std::fabs(value - middle);
  const double mad = 1.4826 * median(rmsd);
  return middle + std::max(6.0 * mad, 1.0);
}

FrameChecks judge_frames(const FrameEngineReport& report, const std::vector<std::int64_t>& frames,
                         const std::string& file, bool strict) {
  FrameChecks checks;
  const bool fitted = std::any_of(report.fit_rmsd.begin(), report.fit_rmsd.end(),
                                  [](double r) { return r != 0.0; });
  if (fitted) checks.fit_outlier_threshold = fit_outlier_threshold(report.fit_rmsd);
  for (std::size_t k = 0; k < report.facts.size() && k < frames.size(); ++k) {
    if (report.facts[k].long_bonds > 0) checks.long_bond_frames.push_back(frames[k]);
    if (report.facts[k].outside_grid > 0) checks.outside_grid_frames.push_back(frames[k]);
    if (checks.fit_outlier_threshold > 0.0 && report.fit_rmsd[k] > checks.fit_outlier_threshold)
      checks.fit_outlier_frames.push_back(frames[k]);
  }
  if (!checks.long_bond_frames.empty())
    log().warn(
        "{} frame(s) keep bonds across the cell boundary after making molecules whole "
        "(a molecule spanning the box?): frames {}",
        checks.long_bond_frames.size(), list_frames(checks.long_bond_frames));
  if (!checks.outside_grid_frames.empty())
    log().warn(
        "{} frame(s) have mapped atoms outside the grid (a molecule that moved or "
        "jumped; --align fits it back, --center-on keeps it in the box): frames {}",
        checks.outside_grid_frames.size(), list_frames(checks.outside_grid_frames));
  if (!checks.fit_outlier_frames.empty())
    log().warn(
        "{} frame(s) fit with an RMSD above {:.2f} Å, far from the others (a split or "
        "damaged frame?): frames {}",
        checks.fit_outlier_frames.size(), checks.fit_outlier_threshold,
        list_frames(checks.fit_outlier_frames));
  if (strict && !checks.fit_outlier_frames.empty())
    throw InputError(
        file, 0,
        fmt::format("frames {}: fit RMSD above {:.2f} Å (--strict)",
                    list_frames(checks.fit_outlier_frames), checks.fit_outlier_threshold));
  return checks;
}

}  // namespace dcs::pipeline
