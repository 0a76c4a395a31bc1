// MPI start-up and the dispenser of work (dcs/pipeline/mpi.hpp, mpi_support.hpp).
#include "dcs/pipeline/mpi.hpp"

#include <cstdlib>

#include "dcs/error.hpp"

#ifdef DCS_HAVE_MPI
#include <chrono>

#include "mpi_support.hpp"
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
    throw Error("this MPI library does not support MPI_THREAD_MULTIPLE, which dcs needs (its "
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

namespace {
constexpr int kRequestTag = 7101, kReplyTag = 7102;
constexpr int kNext = 0, kStop = 1, kLeave = 2;
}  // namespace

Dispenser::Dispenser(MPI_Comm comm, std::size_t count) : count_(count) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  if (rank_ == 0 && size_ > 1) service_ = std::thread([this] { serve(); });
}

Dispenser::~Dispenser() {
  if (rank_ != 0) {
    const std::lock_guard lock(mutex_);
    if (!exhausted_) {
      int request = kLeave;
      MPI_Send(&request, 1, MPI_INT, 0, kRequestTag, comm_);
      exhausted_ = true;
    }
  }
  if (service_.joinable()) service_.join();
  MPI_Comm_free(&comm_);
}

void Dispenser::serve() {
  int remaining = size_ - 1;  // ranks that may still ask
  while (remaining > 0) {
    int flag = 0;
    MPI_Status status{};
    MPI_Iprobe(MPI_ANY_SOURCE, kRequestTag, comm_, &flag, &status);
    if (!flag) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    int request = 0;
    MPI_Recv(&request, 1, MPI_INT, status.MPI_SOURCE, kRequestTag, comm_, MPI_STATUS_IGNORE);
    if (request == kStop) {
      const std::lock_guard lock(mutex_);
      stopped_ = true;
    } else if (request == kLeave) {
      --remaining;
    } else {
      long long index = -1;
      {
        const std::lock_guard lock(mutex_);
        if (!stopped_ && next_ < count_) index = static_cast<long long>(next_++);
      }
      MPI_Send(&index, 1, MPI_LONG_LONG, status.MPI_SOURCE, kReplyTag, comm_);
      if (index < 0) --remaining;
    }
  }
}

std::optional<std::size_t> Dispenser::next() {
  const std::lock_guard lock(mutex_);
  if (exhausted_) return std::nullopt;
  if (rank_ == 0) {
    if (stopped_ || next_ >= count_) {
      exhausted_ = true;
      return std::nullopt;
    }
    return next_++;
  }
  int request = kNext;
  long long index = -1;
  MPI_Send(&request, 1, MPI_INT, 0, kRequestTag, comm_);
  MPI_Recv(&index, 1, MPI_LONG_LONG, 0, kReplyTag, comm_, MPI_STATUS_IGNORE);
  if (index < 0) {
    exhausted_ = true;
    return std::nullopt;
  }
  return static_cast<std::size_t>(index);
}

void Dispenser::stop() {
  const std::lock_guard lock(mutex_);
  if (rank_ == 0) {
    stopped_ = true;
  } else if (!exhausted_) {
    int request = kStop;
    MPI_Send(&request, 1, MPI_INT, 0, kRequestTag, comm_);
  }
}

#else

const MpiInfo& mpi_start() { return g_info; }
void mpi_stop() noexcept {}

#endif

}  // namespace dcs::pipeline
