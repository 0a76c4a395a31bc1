// The trajectory job (trajectory_job.hpp).
#include "trajectory_job.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "../map_job.hpp"
#include "../output_formats.hpp"
#include "../outputs.hpp"
#include "../profile_sink.hpp"
#include "../slab_plan.hpp"
#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/checksum.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/log.hpp"
#include "dcs/timer.hpp"
#include "frame_checks.hpp"
#include "frame_engine.hpp"
#include "frame_profiles.hpp"
#include "frame_source.hpp"
#include "mean_map_source.hpp"
#include "structure_sink.hpp"

namespace dcs::pipeline {
namespace {

/// Selections longer than this are recorded by size and SHA-256 in the settings and
/// attributes (HDF5 attributes and the frame statistics' key stay small); the whole text goes
/// to a dataset of the /trajectory group.
constexpr std::size_t kLongSelection = 1024;

/// A selection as the settings and attributes record it: its text, "all"/"none" when empty, or
/// for a long one its size and checksum.
std::string selection_setting(const std::string& text, const char* empty, const char* option) {
  if (text.empty()) return empty;
  if (text.size() <= kLongSelection) return text;
  return fmt::format("{} bytes, SHA-256 {} (the text: /trajectory/{}_text)", text.size(),
                     io::sha256_hex(text), option);
}

/// What the map's values depend on beyond an atom file's settings.
std::vector<std::pair<std::string, std::string>> trajectory_settings(const TrajectoryRequest& t,
                                                                     const FrameSource& source) {
  return {{"topology", std::filesystem::path(t.topology).filename().string()},
          {"frames", fmt::format("{} of {} ({})", source.frames().size(),
                                 source.frames().empty() ? 0 : source.frames().back() + 1,
                                 to_string(t.frames))},
          {"select", selection_setting(t.select, "all", "select")},
          {"align", selection_setting(t.align, "none", "align")},
          {"pbc", source.makes_whole() ? "whole" : "none"},
          {"center", selection_setting(t.center, "none", "center")},
          {"statistic", "mean over frames"},
          // Every input file's checksum (the key's input_sha256 is the first trajectory file's).
          {"inputs_sha256", source.inputs_sha256()}};
}

/// The files a trajectory run writes, named for the checks.
struct TrajectoryFiles {
  OutputPaths paths;
  std::string frames;        ///< the frame statistics, "<output>.frames.partial"
  std::string maps;          ///< --frame-maps: "<stem>.frames.h5" beside the first output
  std::string maps_partial;  ///< where the frame maps are built
  std::string structure;     ///< "<stem>.pqr" beside the first output: the fitted first frame
  std::string profiles;      ///< --profile: the frames' plane sums, "<output>.profile.partial"
  std::string profiles_csv;  ///< --profile: each frame's profile, "<stem>.profile_frames.csv"
};

TrajectoryFiles trajectory_files(const RunConfig& config) {
  TrajectoryFiles f;
  f.paths = output_paths(config, config.trajectory->files.front());
  f.frames = (f.paths.h5.empty() ? f.paths.store : f.paths.h5) + ".frames.partial";
  if (!f.paths.profile.empty()) {
    f.profiles = (f.paths.h5.empty() ? f.paths.store : f.paths.h5) + ".profile.partial";
    f.profiles_csv = profile_frames_csv_path(f.paths.profile);
  }
  const std::string& first = f.paths.first();
  std::string stem = first;
  for (const char* ext : {".gz", ".h5", ".hdf", ".hdf5", ".dx", ".mrc"})
    if (stem.ends_with(ext)) stem.resize(stem.size() - std::string_view(ext).size());
  // <stem>.pqr, unless that is an input (a PQR topology named like the trajectory).
  const auto same = [](const std::string& a, const std::string& b) {
    return std::filesystem::absolute(a).lexically_normal() ==
           std::filesystem::absolute(b).lexically_normal();
  };
  const TrajectoryRequest& t = *config.trajectory;
  f.structure = stem + ".pqr";
  bool taken = same(f.structure, t.topology);
  for (const std::string& file : t.files) taken = taken || same(f.structure, file);
  if (taken) f.structure = stem + ".fitted.pqr";
  if (config.trajectory->frame_maps) {
    f.maps = std::filesystem::path(first).replace_extension(".frames.h5").string();
    f.maps_partial = io::partial_path_for(f.maps);
  }
  return f;
}

/// Before any work: no two of the run's files are one, and none is an input (the trajectory's
/// files are never overwritten, not even with --force).
void check_trajectory_files(const TrajectoryRequest& t, const TrajectoryFiles& f) {
  std::vector<std::string> inputs = t.files;
  inputs.push_back(t.topology);
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const OutputFormat& format : output_formats())
    outputs.emplace_back(format.what, f.paths.*format.path);
  outputs.insert(outputs.end(), {{"the profile CSV", f.paths.profile},
                                 {"the per-frame profiles' CSV", f.profiles_csv},
                                 {"the per-frame plane sums", f.profiles},
                                 {"the partial file", f.paths.store},
                                 {"the frame statistics", f.frames},
                                 {"the frame maps", f.maps},
                                 {"the frame maps' partial file", f.maps_partial},
                                 {"the structure", f.structure}});
  check_distinct_files(inputs, outputs);
}

/// The key of the frame statistics and frame maps: one "name = value" line per input file (its
/// checksum and size: a changed file is named on --resume) and the map's settings.
std::string frames_key(const io::ResumeKey& key, const TrajectoryRequest& t,
                       const FrameSource& source) {
  std::string text;
  for (std::size_t i = 0; i < source.file_sha256().size(); ++i) {
    const std::string& path = i == 0 ? t.topology : t.files[i - 1];
    std::error_code error;
    const std::uintmax_t bytes = std::filesystem::file_size(path, error);
    text += fmt::format("{} {} = SHA-256 {}, {} bytes\n",
                        i == 0 ? "topology" : fmt::format("trajectory file {}", i),
                        std::filesystem::path(path).filename().string(), source.file_sha256()[i],
                        error ? 0 : bytes);
  }
  return text + io::settings_text(key);
}

/// Bytes `path` still needs to reach `bytes` (an existing partial file's allocated blocks
/// count as written).
std::uint64_t still_needed(const std::string& path, std::uint64_t bytes) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return bytes;
  const auto allocated = static_cast<std::uint64_t>(info.st_blocks) * 512;
  return bytes - std::min(bytes, allocated);
}

/// Before the frames: everything the run writes (the frame statistics, the frame maps, the
/// map's store, DX and MRC) must fit together on each file system.
void check_trajectory_disk(const RunConfig& config, const TrajectoryFiles& f, const MapJob& job,
                           std::size_t key_bytes, std::size_t frames) {
  const GridSpec& grid = job.in.grid;
  std::vector<DiskNeed> needs{
      {f.frames, still_needed(f.frames, io::FrameAccumulatorFile::file_bytes(grid, key_bytes)),
       "the frame statistics"}};
  if (!f.profiles.empty())
    needs.push_back(
        {f.profiles,
         still_needed(f.profiles, profile_frames_bytes(config.output.profile, grid,
                                                       job.in.system.cell, frames, key_bytes)),
         "the per-frame plane sums"});
  if (!f.maps.empty())
    needs.push_back({f.maps_partial,
                     still_needed(f.maps_partial, io::FrameMapsFile::file_bytes(grid, frames)),
                     "the frame maps"});
  for (DiskNeed& need : map_disk_needs(config, grid, job.in.system, f.paths, 0, false))
    needs.push_back(std::move(need));
  check_free_space(needs);
}

/// Every rank must read the same bytes: the first file whose checksum differs from rank 0's is
/// named with the rank (InputError).
void check_same_files(const TrajectoryRequest& t, const FrameSource& source, Executor& executor) {
  std::string mine;
  for (const std::string& sha : source.file_sha256()) mine += sha + "\n";
  const std::vector<std::string> all = executor.gather(mine);
  for (std::size_t rank = 1; rank < all.size(); ++rank) {
    if (all[rank] == all.front()) continue;
    std::size_t theirs_at = 0, first_at = 0;
    for (std::size_t i = 0; i < source.file_sha256().size(); ++i) {
      const auto line = [](const std::string& text, std::size_t& at) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        std::string sha = text.substr(at, end - at);
        at = end + 1;
        return sha;
      };
      const std::string theirs = line(all[rank], theirs_at), first = line(all.front(), first_at);
      if (theirs == first) continue;
      const std::string& path = i == 0 ? t.topology : t.files[i - 1];
      throw InputError(path, 0,
                       fmt::format("rank {} read other bytes than rank 0 (SHA-256 {} and {}): "
                                   "every rank must see the same files",
                                   rank, theirs.substr(0, 16), first.substr(0, 16)));
    }
  }
}

/// The /trajectory group: the spread, minimum and maximum grids (read back from `file`), the
/// frames and what they came from.
io::MapExtras trajectory_extras(const RunConfig& config, const FrameSource& source,
                                const FrameEngineReport& report, const FrameChecks& checks,
                                io::FrameAccumulatorFile& file, const std::string& structure) {
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
  io::ExtraTable dimensions{"dimensions", 6, {}};
  std::vector<std::int64_t> long_bonds, outside_grid;
  for (const FrameFacts& facts : report.facts) {
    dimensions.values.insert(dimensions.values.end(), facts.dimensions.begin(),
                             facts.dimensions.end());
    long_bonds.push_back(facts.long_bonds);
    outside_grid.push_back(facts.outside_grid);
  }
  extras.tables.push_back(std::move(dimensions));
  extras.integers.push_back({"long_bonds", std::move(long_bonds)});
  extras.integers.push_back({"atoms_outside_grid", std::move(outside_grid)});
  std::vector<std::string> files{std::filesystem::absolute(t.topology).string()};
  for (const std::string& f : t.files) files.push_back(std::filesystem::absolute(f).string());
  extras.texts.push_back({"files", files});
  extras.texts.push_back({"sha256", source.file_sha256()});
  if (t.select.size() > kLongSelection) extras.texts.push_back({"select_text", {t.select}});
  if (t.align.size() > kLongSelection) extras.texts.push_back({"align_text", {t.align}});
  if (t.center.size() > kLongSelection) extras.texts.push_back({"center_text", {t.center}});
  extras.attributes = {
      {"description",
       "/potential is the mean over the frames listed in frames (0-based indices into the "
       "trajectory files, read in order); stdev, min and max are per point over the same frames"},
      {"topology", std::filesystem::absolute(t.topology).string()},
      {"select", selection_setting(t.select, "all", "select")},
      {"align", selection_setting(t.align, "none", "align")},
      {"frames_option", to_string(t.frames)},
      {"fit_rmsd_description",
       "Å: RMSD of each frame's --align atoms after the least-squares fit onto the first listed "
       "frame's (0 without --align)"},
      {"dimensions_description",
       "each frame's unit cell as MDAnalysis reports dimensions: a, b, c (Å), alpha, beta, gamma "
       "(degrees); zeros where the frame and the topology have none"},
      {"pbc", source.makes_whole() ? "whole: molecules made whole along the topology's bonds"
                                   : "none: positions as stored"},
      {"center", selection_setting(t.center, "none", "center")},
      {"long_bonds_description",
       "bonds of each frame still at least half the cell's shortest width long after making "
       "molecules whole"},
      {"atoms_outside_grid_description",
       "mapped atoms of each frame outside the grid's box after fitting"},
      {"frames_with_long_bonds", std::to_string(checks.long_bond_frames.size())},
      {"frames_with_atoms_outside_grid", std::to_string(checks.outside_grid_frames.size())},
      {"fit_rmsd_outlier_threshold", fmt::format("{:.6g}", checks.fit_outlier_threshold)},
      {"fit_rmsd_outliers", std::to_string(checks.fit_outlier_frames.size())},
      {"structure", structure},
      {"structure_description",
       "PQR of the mapped atoms in the first frame mapped, as fitted (the map's frame), with the "
       "topology's charges: what a viewer loads with the map"}};
  return extras;
}

/// A periodic map that follows the cell (FrameSource::grid_follows_cell()) of frames whose
/// cells differ (NPT): the mean of their cell vectors, the cell the map is stored with; none for
/// one cell throughout, or a grid of fixed points.
std::optional<UnitCell> varying_cell_mean(const FrameSource& source,
                                          const FrameEngineReport& report) {
  if (!source.grid_follows_cell() || report.facts.empty()) return std::nullopt;
  bool varies = false;
  Mat3 sum{};
  for (const FrameFacts& facts : report.facts) {
    varies = varies || facts.dimensions != report.facts.front().dimensions;
    const UnitCell cell = UnitCell::from_lengths_angles(
        {facts.dimensions[0], facts.dimensions[1], facts.dimensions[2]},
        {facts.dimensions[3], facts.dimensions[4], facts.dimensions[5]});
    for (std::size_t a = 0; a < 3; ++a)
      for (std::size_t c = 0; c < 3; ++c) sum[a][c] += cell.vectors()[a][c];
  }
  if (!varies) return std::nullopt;
  const auto dot = [](const Vec3& u, const Vec3& v) {
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
  };
  const auto n = static_cast<double>(report.facts.size());
  Vec3 lengths{}, angles{};
  Mat3 mean{};
  for (std::size_t a = 0; a < 3; ++a)
    for (std::size_t c = 0; c < 3; ++c) mean[a][c] = sum[a][c] / n;
  for (std::size_t a = 0; a < 3; ++a) lengths[a] = std::sqrt(dot(mean[a], mean[a]));
  constexpr double kDegrees = 180.0 / 3.14159265358979323846;
  for (std::size_t a = 0; a < 3; ++a) {
    const Vec3& u = mean[(a + 1) % 3];
    const Vec3& v = mean[(a + 2) % 3];
    angles[a] = std::acos(std::clamp(dot(u, v) / (lengths[(a + 1) % 3] * lengths[(a + 2) % 3]),
                                     -1.0, 1.0)) *
                kDegrees;
  }
  return UnitCell::from_lengths_angles(lengths, angles);
}

/// What a changing cell did to the map, for the log, the summary and the file.
std::string varying_cell_note(const UnitCell& mean, const FrameEngineReport& report) {
  double smallest = std::numeric_limits<double>::infinity(), largest = 0.0;
  for (const FrameFacts& facts : report.facts) {
    const double volume = UnitCell::from_lengths_angles(
                              {facts.dimensions[0], facts.dimensions[1], facts.dimensions[2]},
                              {facts.dimensions[3], facts.dimensions[4], facts.dimensions[5]})
                              .volume();
    smallest = std::min(smallest, volume);
    largest = std::max(largest, volume);
  }
  return fmt::format(
      "the cell changes over the frames (volume {:.6g} to {:.6g} A^3): each frame was sampled at "
      "the same fractional coordinates of its own cell, and the map, a mean in fractional "
      "space, is stored with the mean cell ({})",
      smallest, largest, mean.describe());
}

/// --null-output: every frame computed and added in memory, nothing written (benchmarks).
RunResult run_without_output(const RunConfig& config, FrameSource& source, const GridSpec& grid,
                             Workers& workers, ProgressSink* progress,
                             SteadyClock::time_point start) {
  const SlabHint hint = combined_hint(workers);
  FramePlan plan = make_frame_plan(grid, 0, grid.nz(), workers.list.size(), hint.plane_multiple,
                                   memory_budget(config.compute), config.output.checkpoint_seconds);
  plan.decoders = decode_threads_for(config.trajectory->decode_threads, source.selected_atoms(),
                                     memory_budget(config.compute));
  const FrameEngineReport report =
      run_frame_engine(source, grid, config.physics, workers.list, nullptr, plan, progress,
                       config.trajectory->files.front());
  RunResult result;
  result.input = config.trajectory->files.front();
  result.atoms = source.selected_atoms();
  result.frames = source.frames().size();
  result.frames_computed = report.frames_computed;
  result.decode_seconds = report.decode_seconds;
  result.decode_threads = report.decode_threads;
  result.metadata.grid = grid;
  result.metadata.physics = config.physics;
  result.evaluations = static_cast<double>(grid.points()) *
                       static_cast<double>(source.selected_atoms()) *
                       static_cast<double>(source.frames().size());
  result.compute_seconds = report.wall_seconds;
  result.busy_fraction = report.busy_fraction();
  result.workers = workers.list.size();
  result.total_seconds = seconds_since(start);
  log().info(
      "frames: {} in {:.3f} s ({:.2f} frames/s), decoding {:.3f} s on {} thread(s), adding "
      "{:.3f} s",
      report.frames_computed, report.wall_seconds,
      static_cast<double>(report.frames_computed) / std::max(report.wall_seconds, 1e-9),
      report.decode_seconds, report.decode_threads, report.accumulate_seconds);
  return result;
}

/// Rank 0, after the disk check: the frame statistics (made, or kept under --resume) and the
/// frame maps' and the plane sums' partial files (kept only together with the statistics, and
/// verified against them).
void open_frame_files(const RunConfig& config, const TrajectoryFiles& f, const MapJob& job,
                      const std::string& key, const FrameSource& source, io::PartialLock& lock,
                      std::optional<io::FrameAccumulatorFile>& file,
                      std::optional<io::FrameMapsFile>& maps,
                      std::optional<io::ProfileFramesFile>& profiles) {
  const GridSpec& grid = job.in.grid;
  io::check_output_path(f.frames, /*force=*/true);
  if (!f.maps.empty()) io::check_output_path(f.maps, config.output.force);
  if (!f.profiles_csv.empty()) io::check_output_path(f.profiles_csv, config.output.force);
  io::check_output_path(f.structure, config.output.force);
  check_trajectory_disk(config, f, job, key.size(), source.frames().size());
  lock = io::PartialLock::acquire(f.frames, config.output.wait_lock);
  file.emplace(io::FrameAccumulatorFile::open(f.frames, grid, key, config.output.resume,
                                              config.output.force));
  if (!f.maps.empty()) {
    maps.emplace(io::FrameMapsFile::open(f.maps_partial, grid, source.frames(),
                                         std::string(unit_name(config.physics.unit)), key,
                                         file->resumed(), config.output.force));
    if (file->resumed() && !maps->reused()) {  // the frames checkpointed have no maps
      log().warn("{} is missing or another run's: the frames are computed afresh", f.maps_partial);
      // open() keeps a file of the same key whatever `resume` says: its planes are dropped.
      file->forget_all();
    } else if (file->resumed()) {
      maps->verify(*file);  // planes whose kept maps do not give their statistics: again
    }
  }
  if (!f.profiles.empty())
    profiles.emplace(open_profile_frames(f.profiles, config.output.profile, grid,
                                         job.in.system.cell, source.frames().size(), key, *file,
                                         config.output.force));
  if (file->resumed()) log().info("resuming the frame statistics in {}", f.frames);
}

/// One trajectory run's state between its stages (run_trajectory() below).
struct TrajectoryRun {
  TrajectoryRun(const RunConfig& c, Workers& w, Executor& e, ProgressSink* p)
      : config(c),
        t(*c.trajectory),
        workers(w),
        executor(e),
        progress(p),
        files(trajectory_files(c)) {}
  const RunConfig& config;
  const TrajectoryRequest& t;
  Workers& workers;
  Executor& executor;
  ProgressSink* progress;
  TrajectoryFiles files;
  std::optional<FrameSource> source;
  MapJob job;
  std::string file_key;   ///< of the frame statistics and frame maps
  io::ResumeKey key;      ///< of the map, named before the frames (the first frame's cell)
  std::string cell_note;  ///< a changing cell (NPT): what the map is; empty otherwise
  bool complete = false;  ///< --resume: the outputs exist and match
  io::PartialLock lock;
  std::optional<io::FrameAccumulatorFile> file;
  std::optional<io::FrameMapsFile> maps;
  std::optional<io::ProfileFramesFile> profiles;
  FrameEngineReport report;
  RunResult result;
};

/// Every participant: the files named and checked, the topology and frames opened, the grid
/// placed around the first frame; the participants' files compared.
void open_source(TrajectoryRun& run, SteadyClock::time_point start) {
  const RunConfig& config = run.config;
  MapJob& job = run.job;
  run.executor.together([&] {
    if (!config.output.null_output) check_trajectory_files(run.t, run.files);
    run.source.emplace(run.t);
    job.in.input = run.t.files.front();
    job.in.system = run.source->first();
    job.in.grid = make_grid(job.in.system, config.grid);
    run.source->set_grid(job.in.grid);
  });
  run.executor.together([&] { check_same_files(run.t, *run.source, run.executor); });
  job.in.read_seconds = seconds_since(start);
  job.label = run.t.files.front();
  const GridSpec& grid = job.in.grid;
  if (run.executor.leads())
    log().info("grid: {} x {} x {} points, spacing {:.4g} Å, around the first frame's atoms",
               grid.nx(), grid.ny(), grid.nz(), grid.spacing[0]);
}

/// The keys; --resume with the outputs complete: the one-map job skips them, without the
/// frames. Otherwise the leader opens (or keeps) the frame statistics and frame maps.
void open_statistics(TrajectoryRun& run) {
  const RunConfig& config = run.config;
  MapJob& job = run.job;
  job.extra_settings = trajectory_settings(run.t, *run.source);
  io::ResumeKey& key = run.key;
  key = resume_key(config, job.in.system, job.in.grid, run.workers.first());
  for (const auto& setting : job.extra_settings) key.settings.push_back(setting);
  run.file_key = frames_key(key, run.t, *run.source);
  const OutputPaths& paths = run.files.paths;
  run.executor.together([&] {
    if (config.output.resume && !paths.h5.empty() && std::filesystem::exists(paths.h5)) {
      const io::ResumeKey done = io::read_completed_key(paths.h5);
      run.complete =
          done.input_sha256 == key.input_sha256 && done.settings == key.settings &&
          (run.files.maps.empty() || std::filesystem::exists(run.files.maps)) &&
          (run.files.profiles_csv.empty() || std::filesystem::exists(run.files.profiles_csv)) &&
          std::filesystem::exists(run.files.structure);
    }
    if (run.complete || !run.executor.leads() || config.output.null_output) return;
    open_frame_files(config, run.files, job, run.file_key, *run.source, run.lock, run.file,
                     run.maps, run.profiles);
  });
}

/// Every participant adds every frame to its own planes (Executor::planes()) of the frame
/// statistics the leader made.
void add_frames(TrajectoryRun& run) {
  const RunConfig& config = run.config;
  const GridSpec& grid = run.job.in.grid;
  const bool leader = run.executor.leads();
  run.executor.together([&] {  // the other ranks open the file rank 0 made (or kept)
    if (leader || config.output.null_output) return;
    run.file.emplace(io::FrameAccumulatorFile::open(run.files.frames, grid, run.file_key, true,
                                                    false, /*create=*/false));
    if (!run.files.maps.empty())
      run.maps.emplace(
          io::FrameMapsFile::open_made(run.files.maps_partial, grid, run.source->frames().size()));
    if (!run.files.profiles.empty())
      run.profiles.emplace(open_made_profile_frames(run.files.profiles, config.output.profile, grid,
                                                    run.job.in.system.cell,
                                                    run.source->frames().size(), run.file_key));
  });
  const SlabHint hint = combined_hint(run.workers);
  const auto [z_begin, z_end] = run.executor.planes(grid.nz(), hint.plane_multiple);
  const std::size_t budget = memory_budget(config.compute);
  FramePlan plan = make_frame_plan(grid, z_begin, z_end, run.workers.list.size(),
                                   hint.plane_multiple, budget, config.output.checkpoint_seconds);
  plan.decoders = decode_threads_for(run.t.decode_threads, run.source->selected_atoms(), budget);
  if (z_end > z_begin)
    log().info(
        "frames: planes {}..{} in blocks of {}, {} frame buffers, {} of host memory "
        "(budget {}), {} decoding thread(s)",
        z_begin, z_end - 1, plan.block, plan.buffers, format_bytes(frame_plan_bytes(grid, plan)),
        format_bytes(budget), plan.decoders);
  else
    log().info(
        "frames: no planes for this rank (more ranks than groups of {} planes); it reads the "
        "frames' times only",
        hint.plane_multiple);
  FrameEngineReport& report = run.report;
  run.executor.together([&] {
    report = run_frame_engine(
        *run.source, grid, config.physics, run.workers.list,
        config.output.null_output ? nullptr : &*run.file, plan, leader ? run.progress : nullptr,
        run.job.label, {run.maps ? &*run.maps : nullptr, run.profiles ? &*run.profiles : nullptr});
  });
  log().info(
      "frames: {} computed, {} found in the checkpoints, in {:.3f} s ({:.2f} frames/s); "
      "decoding {:.3f} s on {} thread(s), adding {:.3f} s, checkpoints {:.3f} s",
      report.frames_computed, report.frames_reused, report.wall_seconds,
      static_cast<double>(report.frames_computed) / std::max(report.wall_seconds, 1e-9),
      report.decode_seconds, report.decode_threads, report.accumulate_seconds,
      report.checkpoint_seconds);
}

/// The leader: the mean as the map of the one-map job, computed by a backend that reads it
/// back (complete outputs: the job finds them so and skips them); then the frame maps
/// committed and the statistics removed.
void make_mean_map(TrajectoryRun& run) {
  const RunConfig& config = run.config;
  MapJob& job = run.job;
  if (config.output.null_output) {
    run.result.input = job.in.input;
    return;
  }
  Workers mean_workers;
  mean_workers.on_gpu = run.workers.on_gpu;
  std::optional<io::MapExtras> extras;
  if (run.file) {
    run.file->reread();  // the planes other ranks added since this process last read them
    mean_workers.add_source(std::make_unique<MeanMapSource>(
        *run.file, static_cast<std::int64_t>(run.source->frames().size()), run.workers.first()));
    const FrameChecks checks =
        judge_frames(run.report, run.source->frames(), run.t.files.front(), run.t.strict);
    extras.emplace(
        trajectory_extras(config, *run.source, run.report, checks, *run.file, run.files.structure));
    job.extras = &*extras;
    job.extra_sinks = [&run] {
      std::vector<std::unique_ptr<MapSink>> sinks;
      sinks.push_back(std::make_unique<StructureSink>(run.files.structure, run.source->first(),
                                                      run.t.topology, run.config.output.force));
      if (run.profiles)
        sinks.push_back(std::make_unique<ProfileFramesSink>(
            run.files.profiles_csv, run.t.files.front(), run.config.output.force,
            run.source->frames(), run.report.times_ps));
      return sinks;
    };
    if (run.profiles)
      job.frame_profiles = frame_profiles(*run.profiles, job.in.grid, run.source->frames().size());
  }
  job.in.atoms_box = run.report.atoms_box;  // the box check covers every frame's atoms
  job.fixed_key = run.key;  // named before the frames: a changing cell moves the grid below
  if (const std::optional<UnitCell> mean = varying_cell_mean(*run.source, run.report)) {
    run.cell_note = varying_cell_note(*mean, run.report);
    log().info("{}", run.cell_note);
    GridRequest request;
    request.counts = job.in.grid.counts;
    request.cell_box = true;
    request.map_axes = MapAxes::kCell;
    job.in.grid = make_cell_grid(*mean, request);
    job.in.system.cell = *mean;
    if (extras) extras->attributes.emplace_back("cell", run.cell_note);
  }
  LocalExecutor alone;  // the statistics file is complete: the mean map is the leader's
  run.result = run_read_map(config, job, run.file ? mean_workers : run.workers, alone, nullptr);
  if (run.maps) {
    run.maps->commit(run.files.maps, config.output.force);
    run.result.outputs.push_back(run.files.maps);
  }
  if (run.profiles) run.profiles->remove();
  if (run.file) {
    run.file->remove();
    run.lock.release();
  }
}

/// What the run did, for the summary (the mean map's slabs are read back, not computed).
void fill_result(TrajectoryRun& run, SteadyClock::time_point start) {
  RunResult& result = run.result;
  const FrameSource& source = *run.source;
  result.frames = source.frames().size();
  result.frames_computed = run.report.frames_computed;
  result.slabs_computed = 0;
  result.slabs_reused = 0;
  result.decode_seconds = run.report.decode_seconds;
  result.decode_threads = run.report.decode_threads;
  result.cell_note = run.cell_note;
  result.atoms = source.selected_atoms();
  result.evaluations = static_cast<double>(run.job.in.grid.points()) *
                       static_cast<double>(source.selected_atoms()) *
                       static_cast<double>(run.report.frames_computed);
  result.compute_seconds = run.report.wall_seconds;
  result.busy_fraction = run.report.busy_fraction();
  result.workers = run.workers.list.size();
  result.total_seconds = seconds_since(start);
}

}  // namespace

RunResult run_trajectory(const RunConfig& config, Workers& workers, ProgressSink* progress,
                         Executor& executor) {
  const auto start = SteadyClock::now();
  TrajectoryRun run(config, workers, executor, progress);
  open_source(run, start);
  if (config.output.null_output && executor.size() == 1)
    return run_without_output(config, *run.source, run.job.in.grid, workers, progress, start);
  open_statistics(run);
  try {
    if (!run.complete) add_frames(run);
    executor.on_leader([&] { make_mean_map(run); });
  } catch (const Error& error) {
    // A bad frame, selection or setting cannot be resumed (the inputs or options must change,
    // which --resume refuses): nothing is kept. Interruptions and I/O failures keep the
    // checkpoints for --resume.
    const ExitCode code = error.exit_code();
    if (executor.leads() && (code == ExitCode::kInputError || code == ExitCode::kUsageError)) {
      if (run.file) run.file->remove();
      if (run.profiles) run.profiles->remove();
      std::error_code ignored;
      if (!run.files.maps_partial.empty()) std::filesystem::remove(run.files.maps_partial, ignored);
    }
    throw;
  }
  fill_result(run, start);
  return run.result;
}

}  // namespace dcs::pipeline
