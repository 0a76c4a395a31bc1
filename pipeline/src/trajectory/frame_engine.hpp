// The frame engine: the potential of every listed frame on a block of z-planes, added in frame
// order to each point's running statistics (mean, spread, minimum, maximum).
//
//   decoders (D threads)         workers (one per GPU / CPU backend)      accumulator (caller)
//   frame k read, selected,  ──►  take a free frame buffer, then the  ──►  frames taken in
//   fitted by decoder k mod D,    next frame in order: prepare() its       order k = 0, 1, ...;
//   each with its own reader,     atoms, compute_slab() the block          each plane adds it
//   at most workers + D frames                                             (Welford, float64);
//   ahead of the workers                                                   checkpoints the planes
// A worker takes a buffer before it takes a frame, and frames are taken in order, so the lowest
// unfinished frame always holds a buffer and the pool cannot deadlock; the decoder of the frame
// the workers wait for is never held back (it is within D of the next frame taken). A frame's
// atoms do not depend on the decoder that read it. Each point's statistics
// see the frames in list order whatever computed them: the result is bit-identical for any
// number of workers, any block size and any resumption (a plane's checkpoint says how many
// frames it holds; a resumed run adds only the frames after those).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../inputs.hpp"
#include "dcs/backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/io/frame_accumulators.hpp"
#include "dcs/io/frame_maps.hpp"
#include "dcs/io/profile_frames.hpp"
#include "dcs/physics.hpp"
#include "dcs/pipeline/progress.hpp"
#include "frame_source.hpp"

namespace dcs::pipeline {

struct FramePlan {
  std::int64_t z_begin = 0;  ///< this process's planes [z_begin, z_end)
  std::int64_t z_end = 0;
  std::int64_t block = 1;    ///< planes whose statistics are held in memory at once
  std::int64_t step = 1;     ///< planes per compute_slab() call (a multiple of plane_multiple)
  std::size_t buffers = 2;   ///< frame buffers of `block` planes (at least workers + 1)
  std::size_t decoders = 1;  ///< threads decoding frames at once, each with its own reader
  double checkpoint_seconds = 10.0;
};

/// The decoding threads of a trajectory run: `requested`, or for 0 half the hardware threads,
/// 1 to 8, and at most one per eight frames of `atoms` mapped atoms within `budget` bytes (each
/// decoder holds up to two frames' atoms at once, and the frames waiting for the workers).
std::size_t decode_threads_for(std::size_t requested, std::size_t atoms, std::size_t budget);

/// Host bytes of a plan on `grid`: the planes' statistics (24 bytes a point) and the buffers.
std::size_t frame_plan_bytes(const GridSpec& grid, const FramePlan& plan);

/// The largest block (a multiple of `multiple`, at least one step) whose statistics and
/// `workers` + 1 buffers fit in `budget`, for planes [z_begin, z_end).
FramePlan make_frame_plan(const GridSpec& grid, std::int64_t z_begin, std::int64_t z_end,
                          std::size_t workers, std::int64_t multiple, std::size_t budget,
                          double checkpoint_seconds);

/// What the engine writes of every frame beside the statistics, each before the checkpoint that
/// counts the frame.
struct FrameWrites {
  io::FrameMapsFile* maps = nullptr;          ///< --frame-maps: the frame's planes
  io::ProfileFramesFile* profiles = nullptr;  ///< --profile: its planes' plane_sums()
};

struct FrameEngineReport {
  double wall_seconds = 0.0;
  double decode_seconds = 0.0;      ///< the decoders reading and fitting frames, summed
  std::size_t decode_threads = 1;   ///< decoders that shared that work
  double accumulate_seconds = 0.0;  ///< adding frames to the statistics
  double checkpoint_seconds = 0.0;  ///< storing and syncing checkpoints
  std::vector<double> worker_busy_seconds;
  std::size_t frames_computed = 0;  ///< frame-blocks computed (frames x blocks)
  std::size_t frames_reused = 0;    ///< frame-blocks a resumed run found in the checkpoints
  std::vector<double> times_ps;     ///< per listed frame (NaN where the file has none)
  std::vector<double> fit_rmsd;     ///< per listed frame (Å; 0 without --align)
  std::vector<FrameFacts> facts;    ///< per listed frame: cell, long bonds, atoms off the grid
  AtomBox atoms_box;                ///< of the mapped atoms over every frame read
  double busy_fraction() const;
};

/// Adds every listed frame of `source` to the statistics of planes [plan.z_begin, plan.z_end)
/// in `file` (continuing each plane's checkpoint; none: in memory only, for --null-output), with
/// `workers` (the engine prepares each frame's atoms). Every frame's planes, or their plane sums,
/// are written to `writes`' files too. Throws the first error of any thread, InterruptedError on
/// dcs::interrupt_requested() (after checkpointing the frames added).
FrameEngineReport run_frame_engine(FrameSource& source, const GridSpec& grid,
                                   const Physics& physics, const std::vector<MapSource*>& workers,
                                   io::FrameAccumulatorFile* file, const FramePlan& plan,
                                   ProgressSink* progress, const std::string& label,
                                   const FrameWrites& writes = {});

}  // namespace dcs::pipeline
