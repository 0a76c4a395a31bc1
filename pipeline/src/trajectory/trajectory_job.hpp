// The trajectory job: a map averaged over the frames of an MD trajectory (--topology,
// --trajectory). Two stages: the frame engine adds every frame's potential to each point's
// running statistics, checkpointed in "<output>.frames.partial" (frame_engine.hpp); then the
// mean is the map of the one-map job (stored, reduced, DX/MRC, committed as any map), and the
// file's /trajectory group holds the standard deviation, minimum and maximum of every point,
// the frames, their times and fits, and the inputs' checksums.
//
// Under MPI every rank reads the frames itself and adds them to its own contiguous share of the
// planes (each point still sees the frames in order: the bytes do not depend on the number of
// ranks); rank 0 then makes the map from the shared statistics file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../devices.hpp"
#include "dcs/pipeline/progress.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/pipeline/run_result.hpp"

namespace dcs::pipeline {

/// Who shares a trajectory's planes: this process alone (the defaults), or MPI ranks
/// (mpi/rank_trajectory.cpp).
class PlaneSharing {
 public:
  virtual ~PlaneSharing() = default;
  virtual int rank() const { return 0; }
  virtual int size() const { return 1; }
  /// Runs `step` on every participant; if it fails anywhere, it throws everywhere.
  virtual void together(const std::function<void()>& step) { step(); }
  /// Every participant's `mine`, in rank order (collective).
  virtual std::vector<std::string> gather(const std::string& mine) { return {mine}; }
};

/// This process's share of nz planes: contiguous, boundaries on multiples of `multiple`.
std::pair<std::int64_t, std::int64_t> plane_share(std::int64_t nz, std::int64_t multiple, int rank,
                                                  int size);

/// The trajectory's map (rank 0's result is the map's; the other ranks' only report their part).
RunResult run_trajectory(const RunConfig& config, Workers& workers, ProgressSink* progress,
                         PlaneSharing& sharing);

}  // namespace dcs::pipeline
