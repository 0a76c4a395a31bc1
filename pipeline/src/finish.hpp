// Finishing a map on the leader: statistics, validation, the sinks written from the store, and
// every output committed together; or, on failure, everything removed but a resumable partial.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dcs/io/map_store.hpp"
#include "dcs/map_sink.hpp"
#include "dcs/pipeline/engine.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/pipeline/run_result.hpp"
#include "devices.hpp"
#include "prepared_map.hpp"
#include "validation.hpp"

namespace dcs::pipeline {

/// Begins every sink with the map's metadata; returns them as the engine takes them.
std::vector<MapSink*> begin_sinks(const std::vector<std::unique_ptr<MapSink>>& sinks,
                                  const MapMetadata& meta);

/// Throws InternalError when the map has a value that is not finite (the distance clamp should
/// prevent any): every map run refuses to finish one.
void refuse_nonfinite(const GridStats& stats);

/// --method and its parameters for the metadata (the error is measured later): msm's and
/// exact's estimated work on `system` and `grid`; ewald's parameters depend on the cell of
/// `system` and whether `grid` tiles it.
MethodInfo method_info(const RunConfig& config, const System& system, const GridSpec& grid,
                       bool on_gpu);

/// --validate (against the tolerance) and msm's error (against its target) on `sample`, into
/// meta.validation and meta.method (method_info() first); logs each and throws
/// ValidationError (exit 4) when either fails.
void judge_sample(const RunConfig& config, const std::string& input, PotentialBackend& lead,
                  const ReferenceSample& sample, MapMetadata& meta);

/// The statistics of planes combined in plane order (the same bits whatever computed them).
StatsAccum combined_stats(const std::vector<StatsAccum>& plane_stats);

/// Everything after the engine: statistics, validation, the store finished, the sinks written,
/// every output committed. `store_finished` is set once the store is: from then on an
/// interruption leaves nothing to resume.
void finish_map(const RunConfig& config, MapJob& job, Workers& workers, io::MapStore& store,
                std::vector<std::unique_ptr<MapSink>>& sinks, const EngineReport& report,
                RunResult& result, bool& store_finished);

/// The failure path of a map whose store is open (call from a catch block): sinks aborted; an
/// interrupted store that was not finished yet is kept for --resume (and the interruption
/// reported so), and so is one after a write error (IoError) when it was resumed or holds
/// checkpointed planes; anything else is removed. Rethrows.
[[noreturn]] void abandon_map(const MapJob& job, io::MapStore& store,
                              std::vector<std::unique_ptr<MapSink>>& sinks, bool store_finished);

}  // namespace dcs::pipeline
