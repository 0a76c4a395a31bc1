// The trajectory job (trajectory_job.hpp).
#include "trajectory_job.hpp"

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "../map_executor.hpp"
#include "../map_job.hpp"
#include "../outputs.hpp"
#include "../slab_plan.hpp"
#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/log.hpp"
#include "dcs/timer.hpp"
#include "frame_engine.hpp"
#include "frame_source.hpp"
#include "mean_map_backend.hpp"

namespace dcs::pipeline {
namespace {

/// What the map's values depend on beyond an atom file's settings.
std::vector<std::pair<std::string, std::string>> trajectory_settings(const TrajectoryRequest& t,
                                                                     const FrameSource& source) {
  return {{"topology", std::filesystem::path(t.topology).filename().string()},
          {"frames", fmt::format("{} of {} ({})", source.frames().size(),
                                 source.frames().empty() ? 0 : source.frames().back() + 1,
                                 to_string(t.frames))},
          {"select", t.select.empty() ? "all" : t.select},
          {"align", t.align.empty() ? "none" : t.align},
          {"statistic", "mean over frames"}};
}

/// No output may be one of the run's inputs (the trajectory's files are never overwritten).
void check_inputs_untouched(const TrajectoryRequest& t, const OutputPaths& paths,
                            const std::string& frames_path) {
  std::vector<std::string> inputs = t.files;
  inputs.push_back(t.topology);
  for (const std::string* output : {&paths.h5, &paths.dx, &paths.mrc, &paths.store, &frames_path})
    for (const std::string& input : inputs) {
      if (output->empty()) continue;
      std::error_code error;
      if (std::filesystem::weakly_canonical(*output, error) ==
          std::filesystem::weakly_canonical(input, error))
        throw UsageError(fmt::format("output {} would overwrite the input {}", *output, input));
    }
}

/// The /trajectory group: the spread, minimum and maximum grids (read back from `file`), the
/// frames and what they came from.
io::MapExtras trajectory_extras(const RunConfig& config, const FrameSource& source,
                                const FrameEngineReport& report, io::FrameAccumulatorFile& file) {
  const TrajectoryRequest& t = *config.trajectory;
  const std::string units(unit_name(config.physics.unit));
  io::MapExtras extras;
  extras.group = "trajectory";
  // One plane read serves the three grids filled one after another: keep the last plane read.
  auto plane = std::make_shared<io::PlaneAccumulator>();
  auto last = std::make_shared<std::int64_t>(-1);
  auto load = [&file, plane, last](std::int64_t z) -> const io::PlaneAccumulator& {
    if (*last != z) {
      file.load(z, *plane);
      *last = z;
    }
    return *plane;
  };
  extras.grids.push_back(
      {"stdev", units,
       "standard deviation over the frames at each point (population: divided by the number of "
       "frames), from Welford's running sums in float64, frames added in order",
       [load](std::int64_t z, float* out) {
         const io::PlaneAccumulator& p = load(z);
         const double n = static_cast<double>(p.frames);
         for (std::size_t i = 0; i < p.m2.size(); ++i)
           out[i] = static_cast<float>(std::sqrt(std::max(0.0, p.m2[i]) / n));
       }});
  extras.grids.push_back({"min", units, "smallest value over the frames at each point",
                          [load](std::int64_t z, float* out) {
                            const io::PlaneAccumulator& p = load(z);
                            std::copy(p.min.begin(), p.min.end(), out);
                          }});
  extras.grids.push_back({"max", units, "largest value over the frames at each point",
                          [load](std::int64_t z, float* out) {
                            const io::PlaneAccumulator& p = load(z);
                            std::copy(p.max.begin(), p.max.end(), out);
                          }});
  extras.integers.push_back({"frames", source.frames()});
  extras.reals.push_back({"time_ps", report.times_ps});
  extras.reals.push_back({"fit_rmsd", report.fit_rmsd});
  std::vector<std::string> files{std::filesystem::absolute(t.topology).string()};
  for (const std::string& f : t.files) files.push_back(std::filesystem::absolute(f).string());
  extras.texts.push_back({"files", files});
  extras.texts.push_back({"sha256", source.file_sha256()});
  extras.attributes = {
      {"description",
       "/potential is the mean over the frames listed in frames (0-based indices into the "
       "trajectory files, read in order); stdev, min and max are per point over the same frames"},
      {"topology", std::filesystem::absolute(t.topology).string()},
      {"select", t.select.empty() ? "all" : t.select},
      {"align", t.align.empty() ? "none" : t.align},
      {"frames_option", to_string(t.frames)},
      {"fit_rmsd_description",
       "Å: RMSD of each frame's --align atoms after the least-squares fit onto the first listed "
       "frame's (0 without --align)"}};
  return extras;
}

/// --null-output: every frame computed and added in memory, nothing written (benchmarks).
RunResult run_without_output(const RunConfig& config, FrameSource& source, const GridSpec& grid,
                             Workers& workers, ProgressSink* progress,
                             SteadyClock::time_point start) {
  const SlabHint hint = combined_hint(workers);
  const FramePlan plan =
      make_frame_plan(grid, 0, grid.nz(), workers.list.size(), hint.plane_multiple,
                      memory_budget(config), config.checkpoint_seconds);
  const FrameEngineReport report =
      run_frame_engine(source, grid, config.physics, workers.list, nullptr, plan, progress,
                       config.trajectory->files.front());
  RunResult result;
  result.input = config.trajectory->files.front();
  result.atoms = source.selected_atoms();
  result.frames = source.frames().size();
  result.frames_computed = report.frames_computed;
  result.decode_seconds = report.decode_seconds;
  result.metadata.grid = grid;
  result.metadata.physics = config.physics;
  result.evaluations = static_cast<double>(grid.points()) *
                       static_cast<double>(source.selected_atoms()) *
                       static_cast<double>(source.frames().size());
  result.compute_seconds = report.wall_seconds;
  result.busy_fraction = report.busy_fraction();
  result.workers = workers.list.size();
  result.total_seconds = seconds_since(start);
  log().info("frames: {} in {:.3f} s ({:.2f} frames/s), decoding {:.3f} s, adding {:.3f} s",
             report.frames_computed, report.wall_seconds,
             static_cast<double>(report.frames_computed) / std::max(report.wall_seconds, 1e-9),
             report.decode_seconds, report.accumulate_seconds);
  return result;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> plane_share(std::int64_t nz, std::int64_t multiple, int rank,
                                                  int size) {
  multiple = std::max<std::int64_t>(multiple, 1);
  const std::int64_t units = (nz + multiple - 1) / multiple;  // the last may be short
  const auto bound = [&](int r) { return std::min(nz, units * r / std::max(size, 1) * multiple); };
  return {bound(rank), rank + 1 == size ? nz : bound(rank + 1)};
}

RunResult run_trajectory(const RunConfig& config, Workers& workers, ProgressSink* progress,
                         PlaneSharing& sharing) {
  const auto start = SteadyClock::now();
  const TrajectoryRequest& t = *config.trajectory;
  const bool leader = sharing.rank() == 0;
  std::optional<FrameSource> source;
  MapJob job;
  sharing.together([&] {
    source.emplace(t);
    job.in.input = t.files.front();
    job.in.system = source->first();
    job.in.grid = make_grid(job.in.system, config.grid);
  });
  job.in.read_seconds = seconds_since(start);
  job.label = t.files.front();
  const GridSpec& grid = job.in.grid;
  if (leader)
    log().info("grid: {} x {} x {} points, spacing {:.4g} Å, around the first frame's atoms",
               grid.nx(), grid.ny(), grid.nz(), grid.spacing[0]);
  if (config.null_output && sharing.size() == 1)
    return run_without_output(config, *source, grid, workers, progress, start);

  job.extra_settings = trajectory_settings(t, *source);
  const OutputPaths paths = output_paths(config, job.in.input);
  const std::string frames_path = (paths.h5.empty() ? paths.store : paths.h5) + ".frames.partial";
  io::ResumeKey key = resume_key(config, job.in.system, grid, workers.first());
  for (const auto& setting : job.extra_settings) key.settings.push_back(setting);
  const std::string file_key = key.input_sha256 + "\n" + io::settings_text(key);
  // --frame-maps: "<stem>.frames.h5" beside the first output, built under its partial name.
  const std::string maps_path = t.frame_maps
                                    ? std::filesystem::path(!paths.h5.empty()   ? paths.h5
                                                            : !paths.dx.empty() ? paths.dx
                                                                                : paths.mrc)
                                          .replace_extension(".frames.h5")
                                          .string()
                                    : std::string();
  const std::string maps_partial = maps_path.empty() ? "" : io::partial_path_for(maps_path);

  // --resume with the outputs complete: the one-map job skips them, without the frames.
  bool complete = false;
  io::PartialLock lock;
  std::optional<io::FrameAccumulatorFile> file;
  std::optional<io::FrameMapsFile> maps;
  sharing.together([&] {
    check_inputs_untouched(t, paths, frames_path);
    check_inputs_untouched(t, paths, maps_path);
    if (config.resume && !paths.h5.empty() && std::filesystem::exists(paths.h5)) {
      const io::ResumeKey done = io::read_completed_key(paths.h5);
      complete = done.input_sha256 == key.input_sha256 && done.settings == key.settings &&
                 (maps_path.empty() || std::filesystem::exists(maps_path));
    }
    if (complete || !leader || config.null_output) return;
    io::check_output_path(frames_path, /*force=*/true);
    check_free_space(frames_path, io::FrameAccumulatorFile::file_bytes(grid),
                     "the frame statistics");
    lock = io::PartialLock::acquire(frames_path, config.wait_lock);
    file.emplace(
        io::FrameAccumulatorFile::open(frames_path, grid, file_key, config.resume, config.force));
    if (!maps_path.empty()) {
      io::check_output_path(maps_path, config.force);
      check_free_space(maps_partial, io::FrameMapsFile::file_bytes(grid, source->frames().size()),
                       "the frame maps");
      maps.emplace(io::FrameMapsFile::open(maps_partial, grid, source->frames(),
                                           std::string(unit_name(config.physics.unit)), file_key,
                                           file->resumed(), config.force));
      if (file->resumed() && !maps->reused()) {  // the frames checkpointed have no maps
        log().warn("{} is missing or another run's: the frames are computed afresh", maps_partial);
        file.emplace(
            io::FrameAccumulatorFile::open(frames_path, grid, file_key, false, config.force));
      }
    }
    if (file->resumed()) log().info("resuming the frame statistics in {}", frames_path);
  });
  FrameEngineReport report;
  RunResult result;
  try {
    if (!complete) {
      sharing.together([&] {  // the other ranks open the file rank 0 made (or kept)
        if (leader || config.null_output) return;
        file.emplace(io::FrameAccumulatorFile::open(frames_path, grid, file_key, true, false,
                                                    /*create=*/false));
        if (!maps_path.empty())
          maps.emplace(io::FrameMapsFile::open_made(maps_partial, grid, source->frames().size()));
      });
      const SlabHint hint = combined_hint(workers);
      const auto [z_begin, z_end] =
          plane_share(grid.nz(), hint.plane_multiple, sharing.rank(), sharing.size());
      const std::size_t budget = memory_budget(config);
      const FramePlan plan =
          make_frame_plan(grid, z_begin, z_end, workers.list.size(), hint.plane_multiple, budget,
                          config.checkpoint_seconds);
      if (z_end > z_begin)
        log().info(
            "frames: planes {}..{} in blocks of {}, {} frame buffers, {} of host memory "
            "(budget {})",
            z_begin, z_end - 1, plan.block, plan.buffers,
            format_bytes(frame_plan_bytes(grid, plan)), format_bytes(budget));
      else
        log().info(
            "frames: no planes for this rank (more ranks than groups of {} planes); it reads the "
            "frames' times only",
            hint.plane_multiple);
      sharing.together([&] {
        report = run_frame_engine(*source, grid, config.physics, workers.list,
                                  config.null_output ? nullptr : &*file, plan,
                                  leader ? progress : nullptr, job.label, maps ? &*maps : nullptr);
      });
      log().info(
          "frames: {} computed, {} found in the checkpoints, in {:.3f} s ({:.2f} frames/s); "
          "decoding {:.3f} s, adding {:.3f} s, checkpoints {:.3f} s",
          report.frames_computed, report.frames_reused, report.wall_seconds,
          static_cast<double>(report.frames_computed) / std::max(report.wall_seconds, 1e-9),
          report.decode_seconds, report.accumulate_seconds, report.checkpoint_seconds);
    }

    sharing.together([&] {
      if (!leader) return;
      if (config.null_output) {
        result.input = job.in.input;
        return;
      }
      // The mean as the map of the one-map job, computed by a backend that reads it back.
      // (Complete outputs: the job finds them so and skips them.)
      Workers mean_workers;
      std::optional<io::MapExtras> extras;
      if (file) {
        mean_workers.owned.push_back(std::make_unique<MeanMapBackend>(
            *file, static_cast<std::int64_t>(source->frames().size()), workers.first()));
        mean_workers.list.push_back(mean_workers.owned.back().get());
        extras.emplace(trajectory_extras(config, *source, report, *file));
        job.extras = &*extras;
      }
      job.in.atoms_box = report.atoms_box;  // the box check covers every frame's atoms
      LocalExecutor executor;
      result = run_read_map(config, job, file ? mean_workers : workers, executor, nullptr);
      if (maps) {
        maps->commit(maps_path, config.force);
        result.outputs.push_back(maps_path);
      }
      if (file) {
        file->remove();
        lock.release();
      }
    });
  } catch (const Error& error) {
    // A bad frame, selection or setting cannot be resumed (the inputs or options must change,
    // which --resume refuses): nothing is kept. Interruptions and I/O failures keep the
    // checkpoints for --resume.
    const ExitCode code = error.exit_code();
    if (leader && (code == ExitCode::kInputError || code == ExitCode::kUsageError)) {
      if (file) file->remove();
      std::error_code ignored;
      if (!maps_partial.empty()) std::filesystem::remove(maps_partial, ignored);
    }
    throw;
  }
  result.frames = source->frames().size();
  result.frames_computed = report.frames_computed;
  result.slabs_computed = 0;  // the mean map's slabs are read back, not computed
  result.slabs_reused = 0;
  result.decode_seconds = report.decode_seconds;
  result.atoms = source->selected_atoms();
  result.evaluations = static_cast<double>(grid.points()) *
                       static_cast<double>(source->selected_atoms()) *
                       static_cast<double>(report.frames_computed);
  result.compute_seconds = report.wall_seconds;
  result.busy_fraction = report.busy_fraction();
  result.workers = workers.list.size();
  result.total_seconds = seconds_since(start);
  return result;
}

}  // namespace dcs::pipeline
