// Who carries out the steps of one map: this process's workers alone (LocalExecutor), or MPI
// ranks sharing the map (mpi/rank_executor.cpp). The one-map job is written once against it.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "dcs/pipeline/progress.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "devices.hpp"
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

/// How the steps of one map are carried out. The job calls these in order: together() to read
/// the input, check_agreement(), decide(), together() to prepare the workers, compute_shared(),
/// and on_leader() to finish and commit.
class MapExecutor {
 public:
  virtual ~MapExecutor() = default;
  /// True where the map is finished and committed (this process, or MPI rank 0).
  virtual bool leads() const = 0;
  /// Workers of every participant, given this one's.
  virtual std::size_t all_workers(std::size_t mine) const = 0;
  /// Runs `step` on every participant; if it fails anywhere, it throws everywhere.
  virtual void together(const std::function<void()>& step) = 0;
  /// Throws where participants read different inputs or were given different settings.
  virtual void check_agreement(const RunConfig& config, const MapJob& job) = 0;
  /// The leader runs `leader_step` (plans the outputs, makes the store where it is shared);
  /// every participant then holds its decisions (complete, resuming, the plan).
  virtual void decide(MapJob& job, const std::function<void()>& leader_step) = 0;
  /// True when participants write their slabs into a shared store before the leader finishes.
  virtual bool shares_the_map() const = 0;
  /// Shared maps: every participant computes its slabs into the store made by decide();
  /// returns what they did. Otherwise nothing (the leader computes in finish).
  virtual std::optional<SharedReport> compute_shared(const RunConfig& config, MapJob& job,
                                                     Workers& workers, ProgressSink* progress) = 0;
  /// Runs `step` on the leader; the others learn whether it failed.
  virtual void on_leader(const std::function<void()>& step) = 0;
};

/// This process's workers alone: the leader does everything.
class LocalExecutor final : public MapExecutor {
 public:
  bool leads() const override { return true; }
  std::size_t all_workers(std::size_t mine) const override { return mine; }
  void together(const std::function<void()>& step) override { step(); }
  void check_agreement(const RunConfig&, const MapJob&) override {}
  void decide(MapJob&, const std::function<void()>& leader_step) override { leader_step(); }
  bool shares_the_map() const override { return false; }
  std::optional<SharedReport> compute_shared(const RunConfig&, MapJob&, Workers&,
                                             ProgressSink*) override {
    return std::nullopt;
  }
  void on_leader(const std::function<void()>& step) override { step(); }
};

}  // namespace dcs::pipeline
