// Whether --method msm is worth it for a run (msm_cost.hpp).
#include "msm_cost.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "dcs/log.hpp"
#include "dcs/msm.hpp"
#include "validation.hpp"

namespace dcs::pipeline {

MsmWork msm_run_work(const RunConfig& config, const System& system, const GridSpec& grid,
                     double target) {
  const std::size_t check = measures_method_error(config) && !config.validate
                                ? std::min<std::size_t>(requested_points(config), grid.points())
                                : 0;
  return msm_work(msm_parameters(target), msm_box(system, grid), grid, system.size(), check);
}

void warn_if_msm_slower(const RunConfig& config, const System& system, const GridSpec& grid) {
  if (config.method != Method::kMsm || system.atoms.empty()) return;
  const MsmWork work = msm_run_work(config, system, grid, config.msm_error);
  const double ratio = work.msm() / work.exact;
  log().debug(
      "msm work estimate (exact pairs): short range {:.3g}, interpolation {:.3g}, levels {:.3g}, "
      "top {:.3g}, check {:.3g}: {:.3g} against exact {:.3g} ({:.2f}x)",
      work.short_range, work.interpolation, work.levels, work.top, work.check, work.msm(),
      work.exact, ratio);
  if (ratio <= kMsmSlowerMargin) return;
  // The tightest looser target of the parameter table that is expected no slower than exact.
  std::string looser;
  for (const double t : {1e-4, 1e-3, 1e-2}) {
    if (t <= config.msm_error * (1.0 + 1e-9)) continue;
    const MsmWork w = msm_run_work(config, system, grid, t);
    if (w.msm() <= w.exact) {
      looser =
          fmt::format(", or a looser --msm-error {:.0e} (estimated {:.2g}x)", t, w.msm() / w.exact);
      break;
    }
  }
  log().warn(
      "--method msm --msm-error {:.1e} is expected to take about {:.1f}x the exact method's time "
      "here (estimated work {:.3g} against {:.3g} pair evaluations for {} atoms x {} points; {}): "
      "use --method exact{}",
      config.msm_error, ratio, work.msm(), work.exact, system.size(), grid.points(),
      describe(msm_parameters(config.msm_error)), looser);
}

}  // namespace dcs::pipeline
