// The one-map job: one map from its input to its committed files, written once whatever
// executes it (executor.hpp: this process's workers, or MPI ranks sharing the map).
#pragma once

#include "dcs/io/map_store.hpp"
#include "dcs/pipeline/run_result.hpp"
#include "devices.hpp"
#include "executor.hpp"
#include "inputs.hpp"
#include "outputs.hpp"
#include "prepared_map.hpp"

namespace dcs::pipeline {

/// Every setting that changes the map's values, in a fixed order: what a partial file must
/// match to be resumed, a complete output to be skipped, and MPI ranks to share a map.
io::ResumeKey resume_key(const RunConfig& config, const System& system, const GridSpec& grid,
                         const MapSource& backend);

/// The files a map of `system` on `grid` writes at `paths`, for check_free_space(): the store
/// (unless `resuming`; `chunk_depth` 0: one-plane chunks, the largest), DX and MRC.
std::vector<DiskNeed> map_disk_needs(const RunConfig& config, const GridSpec& grid,
                                     const System& system, const OutputPaths& paths,
                                     std::int64_t chunk_depth, bool resuming);

/// One map whose input `job.in` (and label) is read: outputs decided, computed by `workers`
/// with `executor`, finished and committed. run_map() after reading an atom file; the
/// trajectory job with its mean map's input.
RunResult run_read_map(const RunConfig& config, MapJob& job, Workers& workers, Executor& executor,
                       ProgressSink* progress);

/// One map with `executor`; `cache` holds the models of a file read for --models each.
RunResult run_map(const RunConfig& config, const Job& job, Workers& workers, Executor& executor,
                  ProgressSink* progress, ModelCache* cache);

}  // namespace dcs::pipeline
