// The ranks' agreement on success and failure (dcs/io/rank_agreement.hpp).
#include "dcs/io/rank_agreement.hpp"

#include <array>
#include <new>

#include <fmt/format.h>

namespace dcs::io {
namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

}  // namespace

RankOutcome classify(const std::exception_ptr& local) {
  RankOutcome outcome;
  if (!local) return outcome;
  try {
    std::rethrow_exception(local);
  } catch (const InterruptedError& error) {
    outcome = {1, error.exit_code(), error.what()};
  } catch (const Error& error) {
    outcome = {2, error.exit_code(), error.what()};
  } catch (const std::bad_alloc&) {
    outcome = {2, ExitCode::kRuntimeError, "out of memory"};
  } catch (const std::exception& error) {
    outcome = {2, ExitCode::kRuntimeError, error.what()};
  } catch (...) {
    outcome = {2, ExitCode::kRuntimeError, "unknown error"};
  }
  return outcome;
}

void settle(MPI_Comm comm, int rank, const std::exception_ptr& local, std::int64_t failed,
            std::int64_t interrupted) {
  if (failed == kNoRank && interrupted == kNoRank) return;
  const int origin = static_cast<int>(failed != kNoRank ? failed : interrupted);
  const RankOutcome outcome = classify(local);
  std::array<long long, 2> header{static_cast<long long>(outcome.code),
                                  static_cast<long long>(outcome.message.size())};
  MPI_Bcast(header.data(), 2, MPI_LONG_LONG, origin, comm);
  std::string message(static_cast<std::size_t>(header[1]), '\0');
  if (rank == origin) message = outcome.message;
  if (!message.empty())
    MPI_Bcast(message.data(), static_cast<int>(message.size()), MPI_CHAR, origin, comm);
  if (local) std::rethrow_exception(local);
  if (failed == kNoRank)
    throw InterruptedError(
        fmt::format("rank {} was interrupted ({}); every rank stopped", origin, message));
  throw RankFailure(origin, static_cast<ExitCode>(header[0]),
                    fmt::format("rank {} failed: {}", origin, message));
}

void agree(MPI_Comm comm, std::exception_ptr local) {
  const int rank = rank_of(comm);
  const RankOutcome outcome = classify(local);
  std::array<std::int64_t, 2> in{outcome.state == 2 ? rank : kNoRank,
                                 outcome.state == 1 ? rank : kNoRank};
  std::array<std::int64_t, 2> out{};
  MPI_Allreduce(in.data(), out.data(), 2, MPI_INT64_T, MPI_MIN, comm);
  settle(comm, rank, local, out[0], out[1]);
}

void agree_on(MPI_Comm comm, const std::function<void()>& step) {
  std::exception_ptr local;
  try {
    step();
  } catch (...) {
    local = std::current_exception();
  }
  agree(comm, local);
}

std::vector<std::string> all_gather(MPI_Comm comm, const std::string& mine) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm);
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  for (std::size_t r = 1; r < offsets.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                 MPI_CHAR, comm);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out.push_back(
        all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return out;
}

}  // namespace dcs::io
