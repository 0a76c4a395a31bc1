// The `dcs` pipeline as a library call: read atoms, place the grid, plan slabs within the memory
// budget, compute them on every worker (one per GPU, or CPU backends) while a writer streams
// finished slabs into the HDF5 store and the other sinks, then statistics, validation and
// commit. docs/ARCHITECTURE.md draws the rooms this goes through. Everything here throws
// dcs::Error subclasses and never prints (progress goes through ProgressSink, messages through
// dcs::log()).
#pragma once

#include <vector>

#include "dcs/pipeline/progress.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/pipeline/run_result.hpp"

namespace dcs {

/// Runs the whole pipeline over every input (of this shard). One input: throws its failure.
/// Several: every input's outcome is in its RunResult (error and exit_code when it failed);
/// without keep_going the first failure stops the batch and the inputs after it are returned
/// with attempted = false. An interruption always throws. Under MPI (pipeline/mpi.hpp) one
/// input is computed by all ranks together, several are handed out to the ranks; only rank 0
/// returns results (every input's), the other ranks an empty list.
std::vector<RunResult> run(const RunConfig& config, ProgressSink* progress = nullptr);

}  // namespace dcs
