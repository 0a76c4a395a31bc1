// The trajectory job: a map averaged over the frames of an MD trajectory (--topology,
// --trajectory). Two stages: the frame engine adds every frame's potential to each point's
// running statistics, checkpointed in "<output>.frames.partial" (frame_engine.hpp); then the
// mean is the map of the one-map job (stored, reduced, DX/MRC, committed as any map), and the
// file's /trajectory group holds the standard deviation, minimum and maximum of every point,
// the frames, their times and fits, and the inputs' checksums.
//
// Its units of work are planes: every participant (executor.hpp; MPI ranks) reads the frames
// itself and adds them to its own contiguous share of the planes (Executor::planes(); each
// point still sees the frames in order: the bytes do not depend on the number of ranks); the
// leader then makes the map from the shared statistics file.
#pragma once

#include "../devices.hpp"
#include "../executor.hpp"
#include "dcs/pipeline/progress.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/pipeline/run_result.hpp"

namespace dcs::pipeline {

/// The trajectory's map (the leader's result is the map's; the others' only report their part).
RunResult run_trajectory(const RunConfig& config, Workers& workers, ProgressSink* progress,
                         Executor& executor);

}  // namespace dcs::pipeline
