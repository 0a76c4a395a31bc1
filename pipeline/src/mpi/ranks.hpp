// MPI ranks (built only with DCS_ENABLE_MPI): the rank executor (one map shared by every rank,
// a trajectory's planes or points' pieces spread over them), and a batch whose maps are handed
// out to the ranks. Every step that can fail on one rank ends in io::agree(), so all ranks stop
// together and `mpirun` sees every rank exit.
#pragma once

#include <memory>
#include <vector>

#include "../devices.hpp"
#include "../executor.hpp"
#include "../inputs.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/pipeline/run_result.hpp"

namespace dcs::pipeline {

/// The executor of MPI_COMM_WORLD's ranks (make_executor() picks it under mpirun).
std::unique_ptr<Executor> make_rank_executor();

/// Collective: many maps, each computed whole by one rank (the next one, largest input first,
/// to whichever rank is free). Rank 0 returns every job's result, the others nothing.
std::vector<RunResult> run_batch_on_ranks(const RunConfig& config, const std::vector<Job>& jobs,
                                          Workers& workers, ModelCache& cache);

}  // namespace dcs::pipeline
