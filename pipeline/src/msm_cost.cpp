// Whether --method msm is worth it for a run (msm_cost.hpp).
#include "msm_cost.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "dcs/log.hpp"
#include "dcs/msm.hpp"
#include "validation.hpp"

namespace dcs::pipeline {
namespace {

// The weights of libdcs/src/msm/work.cpp are one CPU thread's. On a GPU both methods use the
// whole device, and the exact kernel gains far more there than msm's lattice work: measured /
// estimated per phase on one H200 (bench/results/gpu-check_2026-12-01_h200.md, five tiled-2lzt
// cases) had medians of 6.3 for the lattice levels and top, 9.05 for the short range and
// interpolation, and 0.51 for the check. With them the five cases' msm/exact estimates are 0.7-49
// against 0.9-5.2 measured, each on the right side of kMsmSlowerMargin (the CPU weights said
// 0.14-7.9, and missed the 5.2x and 4.5x cases). The small case is overestimated 15x.
constexpr double kGpuLatticeWeight = 6.3, kGpuSlabWeight = 9.05, kGpuCheckWeight = 0.51;

}  // namespace

MsmWork msm_run_work(const RunConfig& config, const System& system, const GridSpec& grid,
                     double target, bool on_gpu) {
  const std::size_t check =
      measures_method_error(config) && !config.validation.enabled
          ? std::min<std::size_t>(requested_points(config.validation), grid.points())
          : 0;
  MsmWork work =
      msm_work(msm_parameters(target), msm_box(system, grid), grid, system.size(), check);
  if (on_gpu) {
    work.levels *= kGpuLatticeWeight;
    work.top *= kGpuLatticeWeight;
    work.short_range *= kGpuSlabWeight;
    work.interpolation *= kGpuSlabWeight;
    work.check *= kGpuCheckWeight;
  }
  return work;
}

void warn_if_msm_slower(const RunConfig& config, const System& system, const GridSpec& grid,
                        bool on_gpu) {
  if (config.method.kind != Method::kMsm || system.atoms.empty()) return;
  const MsmWork work = msm_run_work(config, system, grid, config.method.msm_error, on_gpu);
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
    if (t <= config.method.msm_error * (1.0 + 1e-9)) continue;
    const MsmWork w = msm_run_work(config, system, grid, t, on_gpu);
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
      config.method.msm_error, ratio, work.msm(), work.exact, system.size(), grid.points(),
      describe(msm_parameters(config.method.msm_error)), looser);
}

}  // namespace dcs::pipeline
