// The devices of one run: one backend per GPU or per CPU worker, and this process's share of
// the node when it is one of several MPI ranks.
#pragma once

#include <memory>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/pipeline/devices.hpp"
#include "dcs/pipeline/run_config.hpp"

namespace dcs::pipeline {

/// The workers of a run, in order. Each serves the map's slabs (`list`); those that compute
/// potentials are also in `backends` (the points, the float64 reference, validation), which is
/// empty when the map already exists (a trajectory's mean, a map from memory).
struct Workers {
  std::vector<std::unique_ptr<MapSource>> owned;
  std::vector<MapSource*> list;
  std::vector<PotentialBackend*> backends;
  void add_backend(std::unique_ptr<PotentialBackend> backend);
  void add_source(std::unique_ptr<MapSource> source);
  MapSource& first() { return *owned.front(); }
  /// The first computing worker; InternalError when the workers only serve an existing map.
  PotentialBackend& lead() const;
  /// "cuda:0 (H100); cuda:1 (H100)": every worker's device, joined by `separator`.
  std::string device_names(const char* separator) const;
  /// Whether the workers compute on GPUs: make_workers()'s device choice (a map served from
  /// existing frames keeps its frames' workers' answer).
  bool on_gpu = false;
};

/// One backend per device of compute.device (CPU: compute.cpu_workers backends, the threads
/// split between them), each wrapped for `method`. Several GPUs start their contexts at the same
/// time.
Workers make_workers(const ComputeRequest& compute, const MethodRequest& method);

/// prepare() on every worker, each on its own thread when there are several (uploading and
/// ordering 10^6 atoms takes a GPU ~0.1 s: one after the other, that was serial time).
void prepare_workers(const std::vector<MapSource*>& workers, const System& system,
                     const GridSpec& grid, const Physics& physics);

/// What every worker's slabs must satisfy: plane counts in multiples of each one's
/// plane_multiple, at least the largest min_points.
SlabHint combined_hint(const Workers& workers);

/// The configuration of this process when it is one of several MPI ranks on a node: with
/// --device auto or cuda, the GPU of its node-local rank; with a CPU backend, its share of the
/// cores. Unchanged without MPI.
RunConfig rank_local_config(const RunConfig& config);

}  // namespace dcs::pipeline
