// Batches: the maps of a run one after another in this process, a failure recorded in its
// result (or stopping the batch without --keep-going).
#pragma once

#include <vector>

#include "dcs/error.hpp"
#include "dcs/pipeline/progress.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/pipeline/run_result.hpp"
#include "devices.hpp"
#include "inputs.hpp"

namespace dcs::pipeline {

/// The result of a job that failed with `error`.
RunResult failed_result(const Job& job, const Error& error);

/// The result of a job a stopped batch did not reach.
RunResult not_attempted(const Job& job);

/// Every job with this process's workers. One job: its failure is thrown. An interruption
/// always throws.
std::vector<RunResult> run_batch(const RunConfig& config, const std::vector<Job>& jobs,
                                 Workers& workers, ProgressSink* progress, ModelCache& cache);

}  // namespace dcs::pipeline
