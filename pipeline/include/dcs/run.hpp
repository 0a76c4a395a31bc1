// The `dcs` pipeline as a library call: read atoms, place the grid, plan slabs within the memory
// budget, compute them on every worker (one per GPU, or CPU backends) while a writer streams
// finished slabs into the HDF5 store and the other sinks, then statistics, validation and
// commit. docs/ARCHITECTURE.md draws the rooms this goes through. Everything here throws
// dcs::Error subclasses and never prints (progress goes through ProgressSink, messages through
// dcs::log()).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dcs/map.hpp"
#include "dcs/pipeline/progress.hpp"
#include "dcs/pipeline/run_config.hpp"

namespace dcs {

struct RunResult {
  std::string input;
  long long model = -1;              ///< --models each: the model of `input` mapped; else -1
  std::vector<std::string> outputs;  ///< files written
  std::size_t atoms = 0;
  MapMetadata metadata;              ///< grid, physics, stats, validation, provenance
  double compute_seconds = 0.0;      ///< compute + statistics
  double write_seconds = 0.0;        ///< all output files
  double total_seconds = 0.0;        ///< read to last byte written
  double evaluations = 0.0;          ///< atoms * grid points
  double busy_fraction = 0.0;        ///< workers' time in compute over wall time
  std::size_t workers = 0;           ///< devices (or CPU workers) used
  std::size_t slabs_computed = 0;
  std::size_t slabs_reused = 0;      ///< found complete in a partial file (--resume)
  bool skipped = false;              ///< --resume found the outputs complete
  bool attempted = true;             ///< false: a batch stopped (failure) before this input
  std::string error;                 ///< non-empty when this input failed
  int exit_code = 0;
  int rank = -1;                     ///< MPI batch: the rank that ran it (-1 without MPI)
};

/// Runs the whole pipeline over every input (of this shard). One input: throws its failure.
/// Several: every input's outcome is in its RunResult (error and exit_code when it failed);
/// without keep_going the first failure stops the batch and the inputs after it are returned
/// with attempted = false. An interruption always throws. Under MPI (pipeline/mpi.hpp) one
/// input is computed by all ranks together, several are handed out to the ranks; only rank 0
/// returns results (every input's), the other ranks an empty list.
std::vector<RunResult> run(const RunConfig& config, ProgressSink* progress = nullptr);

}  // namespace dcs
