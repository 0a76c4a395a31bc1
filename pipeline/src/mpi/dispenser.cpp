// The dispenser of work to ranks (mpi_support.hpp).
#include <chrono>
#include <thread>

#include "mpi_support.hpp"

namespace dcs::pipeline {

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

}  // namespace dcs::pipeline
