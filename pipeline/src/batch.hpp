// The maps of a run, written once for every executor (executor.hpp): one map shared by every
// participant, or a batch whose maps are dealt whole to whichever participant is free, a
// failure recorded in its result (or ending the dealing without --keep-going).
#pragma once

#include <vector>

#include "dcs/pipeline/progress.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/pipeline/run_result.hpp"
#include "devices.hpp"
#include "executor.hpp"
#include "inputs.hpp"

namespace dcs::pipeline {

/// Collective: the maps of `jobs` with `executor`. One job: the map shared by every participant,
/// its failure thrown. A batch: each map computed whole by the participant that executor.deal()
/// hands it to (over ranks the largest input first); a failure is recorded in its result and,
/// without --keep-going, stops the dealing; the maps nobody reached are "not attempted". An
/// interruption throws on every participant. The leader returns every job's result in the order
/// given, the others nothing. Alone, `progress` is told of each map as it finishes (ranks'
/// results are printed at the end).
std::vector<RunResult> run_maps(const RunConfig& config, const std::vector<Job>& jobs,
                                Workers& workers, Executor& executor, ProgressSink* progress,
                                ModelCache& cache);

}  // namespace dcs::pipeline
