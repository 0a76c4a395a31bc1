// MPI start-up (dcs/pipeline/mpi.hpp): whether this process is one of several ranks, and which.
#include "dcs/pipeline/mpi.hpp"

#include <cstdlib>

#include "dcs/error.hpp"

#ifdef DCS_HAVE_MPI
#include <mpi.h>

#include "dcs/io/rank_agreement.hpp"
#endif

namespace dcs::pipeline {
namespace {
MpiInfo g_info;
#ifdef DCS_HAVE_MPI
bool g_started = false;
#endif
}  // namespace

bool mpi_built() noexcept {
#ifdef DCS_HAVE_MPI
  return true;
#else
  return false;
#endif
}

const MpiInfo& mpi_info() noexcept { return g_info; }

void on_every_rank(const std::function<void()>& step) {
#ifdef DCS_HAVE_MPI
  if (g_info.active) {
    io::agree_on(MPI_COMM_WORLD, step);
    return;
  }
#endif
  step();
}

#ifdef DCS_HAVE_MPI

const MpiInfo& mpi_start() {
  if (g_started) return g_info;
  // Started by a launcher: OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE, PMIx/PMI launchers (srun)
  // set PMIX_RANK or PMI_RANK. A plain `dcs` never initialises MPI.
  const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr ||
                        std::getenv("PMIX_RANK") != nullptr || std::getenv("PMI_RANK") != nullptr;
  if (!launched) return g_info;
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
    throw Error("MPI_Init_thread failed");
  g_started = true;
  if (provided < MPI_THREAD_MULTIPLE)
    throw Error(
        "this MPI library does not support MPI_THREAD_MULTIPLE, which dcs needs (its "
        "workers ask for slabs while the writer takes part in collective writes)");
  g_info.active = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_info.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_info.size);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_info.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &g_info.local_rank);
  MPI_Comm_size(node, &g_info.local_size);
  MPI_Comm_free(&node);
  return g_info;
}

void mpi_stop() noexcept {
  if (!g_started) return;
  g_started = false;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

#else

const MpiInfo& mpi_start() { return g_info; }
void mpi_stop() noexcept {}

#endif

}  // namespace dcs::pipeline
