// MPI ranks (built only with DCS_ENABLE_MPI): one map shared by every rank, or a batch whose maps
// are handed out to the ranks. Every step that can fail on one rank ends in io::agree(), so all
// ranks stop together and `mpirun` sees every rank exit.
#pragma once

#include <vector>

#include "../devices.hpp"
#include "../inputs.hpp"
#include "dcs/pipeline/progress.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/pipeline/run_result.hpp"

namespace dcs::pipeline {

/// Collective: this process's workers, made on every rank (all fail if one does).
Workers make_workers_on_ranks(const RunConfig& config);

/// Collective: throws UsageError on every rank, naming the first difference, unless every rank
/// was given the same run (shared_settings()) and computes with the same backend and kernels.
/// Ranks that disagree would write one map with two physics, or wait for each other forever.
void check_same_run_on_ranks(const RunConfig& config, const Workers& workers);

/// Collective: one map computed by every rank together (the job of map_job.hpp with a rank
/// executor). Rank 0's result is the map's; the other ranks' are partial.
RunResult run_map_on_ranks(const RunConfig& config, const Job& job, Workers& workers,
                           ProgressSink* progress, ModelCache* cache);

/// Collective: one map averaged over a trajectory's frames, each rank adding the frames to its
/// share of the planes (trajectory/trajectory_job.hpp). Rank 0's result is the map's.
RunResult run_trajectory_on_ranks(const RunConfig& config, Workers& workers,
                                  ProgressSink* progress);

/// Collective: the potential at points (points/points_job.hpp), pieces of the point list
/// round-robin over the ranks, gathered on rank 0, which writes. Rank 0's result is the run's.
RunResult run_points_on_ranks(const RunConfig& config, Workers& workers, ProgressSink* progress);

/// Collective: many maps, each computed whole by one rank (the next one, largest input first,
/// to whichever rank is free). Rank 0 returns every job's result, the others nothing.
std::vector<RunResult> run_batch_on_ranks(const RunConfig& config, const std::vector<Job>& jobs,
                                          Workers& workers, ModelCache& cache);

}  // namespace dcs::pipeline
