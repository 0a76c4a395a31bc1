// MPI ranks (built only with DCS_ENABLE_MPI): the rank executor (one map shared by every rank,
// a batch's maps or a map's slabs dealt by the Dispenser, a trajectory's planes or points'
// pieces spread over them). Every step that can fail on one rank ends in io::agree(), so all
// ranks stop together and `mpirun` sees every rank exit.
#pragma once

#include <memory>

#include "../executor.hpp"

namespace dcs::pipeline {

/// The executor of MPI_COMM_WORLD's ranks (make_executor() picks it under mpirun).
std::unique_ptr<Executor> make_rank_executor();

}  // namespace dcs::pipeline
