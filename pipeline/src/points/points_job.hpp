// The points job (--points, --at-atoms): the potential of one atom file at listed points, a
// surface mesh's vertices or its own atoms, spread over every worker (threads, GPUs) in whole
// blocks of the backends' points_hint, so each value is bit-identical whatever ran it. Writes
// the values as a CSV and an HDF5 table, and the mesh back with a value and a colour per vertex,
// or the atoms as a PDB with the value in the B-factor column. docs/ARCHITECTURE.md places it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "../devices.hpp"
#include "../executor.hpp"

#include "dcs/backend.hpp"
#include "dcs/pipeline/progress.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/pipeline/run_result.hpp"

namespace dcs::pipeline {

/// One points run: this process alone, or a share of it (executor.hpp: pieces of the list dealt
/// round-robin, collected on the leader). The leader writes the outputs and its result is the
/// run's. Throws (InputError, UsageError, IoError, ValidationError,
/// InterruptedError) on every participant, with nothing left under an output name.
RunResult run_points(const RunConfig& config, Workers& workers, ProgressSink* progress,
                     Executor& executor);

/// The potential at `points` (Å, in any order) computed by this process's `workers` alone, the
/// way run_points() computes a list (Z order, whole blocks, pieces over the workers): the values
/// a points run of the same atoms and points gives, bit for bit, in the order of `points`.
/// `skip`: empty, or per point the atom its sum leaves out (--at-atoms: PointSet::skip).
/// Throws InterruptedError when dcs::interrupt_requested() becomes true.
std::vector<float> compute_points_here(const System& system, const Physics& physics,
                                       const std::vector<Vec3>& points,
                                       const std::vector<std::uint32_t>& skip, Workers& workers,
                                       ProgressSink* progress);

}  // namespace dcs::pipeline
