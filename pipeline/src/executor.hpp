// Who carries out a job's units of work: this process's workers alone (LocalExecutor), or MPI
// ranks sharing them (mpi/rank_executor.cpp). Every job kind (one map, a batch of maps, a
// trajectory, points) is written once against Executor; run.cpp picks the executor once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dcs/pipeline/progress.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/pipeline/run_result.hpp"
#include "devices.hpp"
#include "inputs.hpp"
#include "prepared_map.hpp"

namespace dcs::pipeline {

/// What the ranks that computed a shared map did (for the summary and the provenance).
struct SharedReport {
  double compute_seconds = 0.0;  ///< the slowest rank's engine time
  double write_seconds = 0.0;    ///< the slowest rank's writing
  double busy_fraction = 0.0;    ///< mean over the ranks
  std::size_t workers = 0;       ///< of every rank
  std::size_t slabs_computed = 0;
  std::string devices;  ///< every rank's devices
  std::string hosts;
};

/// Units of work handed out one at a time to whichever participant asks first (deal()): alone
/// they come in order; over ranks rank 0 answers the others (mpi/dispenser.cpp).
class Dealer {
 public:
  virtual ~Dealer() = default;
  /// The next unit, or nothing when every unit is handed out or stop() was called anywhere.
  virtual std::optional<std::size_t> next() = 0;
  /// From now on nothing more is handed out, to any participant (a failure that ends the work).
  virtual void stop() = 0;
};

/// The participants of a run and how a job's units of work are spread over them. Participant
/// 0 leads: it decides, finishes and commits; every step that can fail on one participant runs
/// in together(), so that all stop together. The units a job declares:
///  - a batch's maps: deal(), each map whole to the next free participant (batch.cpp);
///  - a map's slabs of planes: compute_shared() (ranks write one store, their slabs dealt
///    statically or by deal(); alone, the leader's engine computes them as it finishes);
///  - a trajectory's planes: planes() (contiguous, in multiples of the workers' plane
///    multiple), each participant adding every frame to its own;
///  - points' pieces: round_robin(), gathered on the leader by collect().
class Executor {
 public:
  virtual ~Executor() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// True for MPI ranks, even one: a map is written through a store every rank shares.
  virtual bool on_ranks() const = 0;
  /// True where the results are finished and committed (this process, or MPI rank 0).
  bool leads() const { return rank() == 0; }
  /// Workers of every participant, given this one's.
  std::size_t all_workers(std::size_t mine) const {
    return mine * static_cast<std::size_t>(size());
  }

  /// Runs `step` on every participant; if it fails anywhere, it throws everywhere.
  virtual void together(const std::function<void()>& step) = 0;
  /// Runs `step` on the leader; the others learn whether it failed.
  void on_leader(const std::function<void()>& step) {
    together([&] {
      if (leads()) step();
    });
  }
  /// Every participant's `mine`, in rank order (collective).
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  /// The leader's `bytes` bytes at `data` copied to every participant (collective).
  virtual void broadcast(void* data, std::size_t bytes) = 0;

  /// Collective: `units` units for deal()ing; the Dealer's destruction is collective too.
  virtual std::unique_ptr<Dealer> deal(std::size_t units) = 0;
  /// This participant's units of `units` dealt round-robin: unit u to participant u % size().
  std::vector<std::size_t> round_robin(std::size_t units) const;
  /// Pieces of `piece` values dealt by round_robin(): the leader's `values` receives every
  /// other participant's (collective).
  virtual void collect(std::vector<float>& values, std::size_t piece) = 0;
  /// This participant's planes [begin, end) of nz: contiguous, boundaries on multiples of
  /// `multiple`, the last share ending at nz.
  std::pair<std::int64_t, std::int64_t> planes(std::int64_t nz, std::int64_t multiple) const;

  /// Ranks: every rank computes its slabs of `job`'s map into the shared store the leader made
  /// in decide_map(); returns what they did. Alone: nothing (the leader computes as it finishes).
  virtual std::optional<SharedReport> compute_shared(const RunConfig& config, MapJob& job,
                                                     Workers& workers, ProgressSink* progress) = 0;
};

/// This process's workers alone: the leader does everything.
class LocalExecutor final : public Executor {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  bool on_ranks() const override { return false; }
  void together(const std::function<void()>& step) override { step(); }
  std::vector<std::string> gather(const std::string& mine) override { return {mine}; }
  void broadcast(void*, std::size_t) override {}
  void collect(std::vector<float>&, std::size_t) override {}
  std::unique_ptr<Dealer> deal(std::size_t units) override;  ///< in order
  std::optional<SharedReport> compute_shared(const RunConfig&, MapJob&, Workers&,
                                             ProgressSink*) override {
    return std::nullopt;
  }
};

/// The executor of this process: MPI ranks when it was started as one of them (mpi_info()),
/// otherwise its workers alone.
std::unique_ptr<Executor> make_executor();

/// Collective: this participant's workers, made on every participant (all fail if one does).
Workers make_workers_with(Executor& executor, const RunConfig& config);

/// Collective: throws UsageError on every participant, naming the first difference, unless
/// every one was given the same run (shared_settings()) and computes with the same backend and
/// kernels. Ranks that disagree would write one map with two physics, or wait forever.
void check_same_run(Executor& executor, const RunConfig& config, const Workers& workers);

}  // namespace dcs::pipeline
