// MPI ranks (the MPI build, DCS_ENABLE_MPI): whether this process is one of several ranks, and
// which. Usable in every build; without MPI (or when the process was not started by an MPI
// launcher) there is one rank and MPI is never initialised.
#pragma once

#include <functional>

namespace dcs::pipeline {

struct MpiInfo {
  bool active = false;  ///< started by mpirun/srun in an MPI build: runs go through the ranks
  int rank = 0;
  int size = 1;
  int local_rank = 0;  ///< among the ranks of this node (which GPU this rank uses)
  int local_size = 1;
};

/// True in the MPI build.
bool mpi_built() noexcept;

/// Initialises MPI (MPI_THREAD_MULTIPLE) when this is the MPI build and the process was started
/// by an MPI launcher (mpirun, or srun with PMI/PMIx); otherwise does nothing. Call once from
/// the main thread before any other dcs call. Throws Error when MPI cannot give the thread
/// support the pipeline needs.
const MpiInfo& mpi_start();

/// What mpi_start() found (inactive before it).
const MpiInfo& mpi_info() noexcept;

/// Runs `step`; with several ranks, every rank then learns whether it failed on any of them, and
/// all throw together (the rank where it failed its own error, the others a RankFailure). For
/// steps before the ranks' collective work: a rank that stopped alone would leave the others
/// waiting forever.
void on_every_rank(const std::function<void()>& step);

/// MPI_Finalize when mpi_start() initialised MPI.
void mpi_stop() noexcept;

}  // namespace dcs::pipeline
