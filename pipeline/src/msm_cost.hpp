// Whether --method msm is worth it for a run: both methods' work estimated from the plan
// (dcs/msm_plan.hpp: msm_work) before anything is computed, a warning where msm is expected
// slower than direct summation by more than the model's error (issue 38), and the estimates
// for the file's /method attributes.
#pragma once

#include "dcs/grid.hpp"
#include "dcs/msm_plan.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/types.hpp"

namespace dcs::pipeline {

/// The work of this run's map by msm at --msm-error `target` and by the exact method, in exact
/// pairs; the check counts msm's own error check (none where --validate compares both methods
/// at the same sample, or for a trajectory's mean map).
/// `on_gpu`: the terms weighted as measured on a GPU (msm_cost.cpp), where an exact pair is far
/// cheaper against msm's lattice work than on one CPU thread.
MsmWork msm_run_work(const RunConfig& config, const System& system, const GridSpec& grid,
                     double target, bool on_gpu);

/// --method msm: warns (both estimates, and the advice: --method exact, or the tightest looser
/// --msm-error expected no slower than exact) when msm's estimate exceeds the exact method's by
/// more than kMsmSlowerMargin. Nothing for --method exact.
void warn_if_msm_slower(const RunConfig& config, const System& system, const GridSpec& grid,
                        bool on_gpu);

}  // namespace dcs::pipeline
