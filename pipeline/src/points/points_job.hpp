// The points job (--points, --at-atoms): the potential of one atom file at listed points, a
// surface mesh's vertices or its own atoms, spread over every worker (threads, GPUs) in whole
// blocks of the backends' points_hint, so each value is bit-identical whatever ran it. Writes
// the values as a CSV and an HDF5 table, and the mesh back with a value and a colour per vertex,
// or the atoms as a PDB with the value in the B-factor column. docs/ARCHITECTURE.md places it.
#pragma once

#include "../devices.hpp"
#include "dcs/pipeline/progress.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/pipeline/run_result.hpp"

namespace dcs::pipeline {

/// One points run in this process. Throws (InputError, UsageError, IoError, ValidationError,
/// Interrupted) with nothing left under an output name.
RunResult run_points(const RunConfig& config, Workers& workers, ProgressSink* progress);

}  // namespace dcs::pipeline
