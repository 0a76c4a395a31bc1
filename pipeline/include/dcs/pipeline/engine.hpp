// The slab engine: computes one map slab by slab on one or more workers (one per GPU, or CPU
// backends) and streams the finished slabs, in z order, into the store and the sinks.
//
//   workers (one thread each)                          writer (the calling thread)
//   take a free buffer from the pool ──► next slab ──► finished slabs, reordered by z ──►
//   compute_slab() into it           (dynamic: a      store.write_slab(), sinks, checkpoint,
//                                     free worker     progress; the buffer goes back to the pool
//                                     takes the next)
//
// Host memory is the buffer pool (MapPlan::buffers slabs), whatever the size of the grid: a
// worker waits for a free buffer, so the writer bounds how far computing runs ahead of writing.
// Slabs are handed out in increasing z order to whoever holds a buffer, so the lowest unfinished
// slab always owns one and the pool cannot deadlock.
//
// Determinism: slabs start at multiples of MapPlan::step (a multiple of every backend's
// plane_multiple), each plane's statistics are reduced on their own, and the engine combines
// them in plane order: the map and its statistics are bit-identical for any number of workers,
// any slab size and any resumption.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/map_sink.hpp"
#include "dcs/pipeline/progress.hpp"
#include "dcs/stats.hpp"

namespace dcs::pipeline {

struct MapPlan {
  std::int64_t step = 1;             ///< planes per slab (the last slab may be shorter)
  std::size_t buffers = 2;           ///< host slab buffers in the pool
  double checkpoint_seconds = 10.0;  ///< make written planes durable at least this often
};

/// Hands out slabs to this process's workers when several processes share one map (MPI ranks):
/// next() returns the index (into the map's slabs, MapPlan::step planes each) of the next slab
/// this process computes, or nothing when none is left for it. Called from worker threads, one
/// call at a time; the indices it returns increase.
class SlabSource {
 public:
  virtual ~SlabSource() = default;
  virtual std::optional<std::size_t> next() = 0;
};

/// Host bytes a plan holds: the buffer pool.
std::size_t plan_bytes(const GridSpec& grid, const MapPlan& plan);

/// How the engine's time went.
struct EngineReport {
  std::vector<StatsAccum> plane_stats;      ///< per plane, in plane order
  double wall_seconds = 0.0;                ///< first slab started to last slab written
  double write_seconds = 0.0;               ///< writer busy in the store and the sinks
  double writer_wait_seconds = 0.0;         ///< writer waiting for the next slab in z order
  std::vector<double> worker_busy_seconds;  ///< per worker, inside compute_slab()
  std::size_t slabs_computed = 0;
  std::size_t slabs_reused = 0;  ///< slabs a resumed run found done in the store
  /// Busy time of all workers over wall time times workers (the GPU busy fraction).
  double busy_fraction() const;
};

/// Computes every slab the store does not hold yet (all slabs without a store) with `workers`
/// (prepared for `grid`), writing them into `store` (optional) and `sinks` in z order. Progress
/// is reported in atom evaluations (`atoms` per point). Throws the first error of any worker or
/// sink, InterruptedError when dcs::interrupt_requested() becomes true; in both cases every
/// worker has stopped when it returns.
///
/// With a `source` (MPI ranks sharing one map) only the slabs it hands out are computed and
/// written, in the order it hands them out; the sinks must be empty, and report.plane_stats
/// holds this process's planes only.
EngineReport run_engine(const GridSpec& grid, const std::vector<MapSource*>& workers,
                        const MapPlan& plan, io::SlabStore* store,
                        const std::vector<MapSink*>& sinks, ProgressSink* progress,
                        const std::string& label, std::size_t atoms, SlabSource* source = nullptr);

}  // namespace dcs::pipeline
