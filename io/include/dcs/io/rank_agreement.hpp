// The agreement of MPI ranks on success and failure (built with DCS_ENABLE_MPI). A step that
// every rank takes ends in agree(): each rank says what its step threw, if anything; when one
// rank failed, every rank stops, the ranks that failed rethrow their own error and the others
// throw a RankFailure naming the lowest failing rank and its message (an interrupt on some rank
// makes every rank throw InterruptedError). No rank is left waiting in a collective call the
// others have abandoned, so `mpirun` sees every rank exit.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "dcs/error.hpp"

namespace dcs::io {

class RankFailure : public Error {
 public:
  RankFailure(int rank, ExitCode code, const std::string& message)
      : Error(message), rank_(rank), code_(code) {}
  int rank() const noexcept { return rank_; }
  ExitCode exit_code() const noexcept override { return code_; }

 private:
  int rank_;
  ExitCode code_;
};

/// Collective over `comm`: returns when no rank's step threw (`local` is null everywhere);
/// otherwise rethrows `local` where it is set and throws RankFailure (InterruptedError when
/// only interrupts happened) on the other ranks.
void agree(MPI_Comm comm, std::exception_ptr local);

/// Runs `step` on every rank of `comm` and agree()s on its outcome.
void agree_on(MPI_Comm comm, const std::function<void()>& step);

/// Collective: the per-rank strings of `comm`, in rank order, on every rank.
std::vector<std::string> all_gather(MPI_Comm comm, const std::string& mine);

/// What one rank's step ended in, for rounds that agree along with other data (ParallelStore).
struct RankOutcome {
  int state = 0;  ///< 0 fine, 1 interrupted, 2 failed
  ExitCode code = ExitCode::kOk;
  std::string message;
};
RankOutcome classify(const std::exception_ptr& local);

/// "No rank" in an MPI_Allreduce(MIN) of failing or interrupted ranks.
constexpr std::int64_t kNoRank = INT64_MAX;

/// After an MPI_Allreduce(MIN) of {failed rank, interrupted rank}: returns when both are
/// kNoRank, else broadcasts the origin's message and throws on every rank.
void settle(MPI_Comm comm, int rank, const std::exception_ptr& local, std::int64_t failed,
            std::int64_t interrupted);

}  // namespace dcs::io
