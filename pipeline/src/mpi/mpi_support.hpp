// Private MPI helpers of the pipeline (MPI build only): handing out work to ranks.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "../executor.hpp"
#include "dcs/pipeline/engine.hpp"

namespace dcs::pipeline {

/// The rank executor's Dealer: hands out the indices 0 .. count-1, in order, to whichever rank
/// asks first (dynamic assignment of slabs or of a batch's maps). Rank 0 answers requests on a
/// service thread (so it answers while its own workers compute); its own calls take the next index
/// directly. The ranks talk on a duplicate of the communicator. Construction and destruction are
/// collective.
class Dispenser final : public Dealer {
 public:
  Dispenser(MPI_Comm comm, std::size_t count);
  ~Dispenser() override;
  Dispenser(const Dispenser&) = delete;
  Dispenser& operator=(const Dispenser&) = delete;

  /// The next index, or nothing when every index is handed out or stop() was called anywhere.
  /// Thread-safe.
  std::optional<std::size_t> next() override;
  /// From now on nothing more is handed out, to any rank (a failure without --keep-going).
  void stop() override;

 private:
  void serve();

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::size_t count_ = 0;
  std::mutex mutex_;
  std::size_t next_ = 0;    // rank 0: the next index
  bool stopped_ = false;    // rank 0: stop() was called somewhere
  bool exhausted_ = false;  // this rank was told "none left"
  std::thread service_;
};

/// Slabs from a fixed list (static assignment).
class ListSource final : public SlabSource {
 public:
  explicit ListSource(std::vector<std::size_t> slabs) : slabs_(std::move(slabs)) {}
  std::optional<std::size_t> next() override {
    if (position_ >= slabs_.size()) return std::nullopt;
    return slabs_[position_++];
  }

 private:
  std::vector<std::size_t> slabs_;
  std::size_t position_ = 0;
};

/// Slabs from a Dealer over a list (dynamic assignment).
class DealtSource final : public SlabSource {
 public:
  DealtSource(Dealer& dealer, std::vector<std::size_t> slabs)
      : dealer_(dealer), slabs_(std::move(slabs)) {}
  std::optional<std::size_t> next() override {
    const std::optional<std::size_t> index = dealer_.next();
    if (!index) return std::nullopt;
    return slabs_[*index];
  }

 private:
  Dealer& dealer_;
  std::vector<std::size_t> slabs_;
};

}  // namespace dcs::pipeline
