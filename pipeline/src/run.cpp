#include "dcs/run.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>
#include <random>

#include <fmt/format.h>

#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/log.hpp"
#include "dcs/parallel.hpp"
#include "dcs/pipeline/engine.hpp"
#include "dcs/pipeline/sinks.hpp"
#include "dcs/sysinfo.hpp"
#include "dcs/timer.hpp"
#include "dcs/version.hpp"

namespace dcs {
namespace {

/// Atom-point evaluations --validate spends in float64 by default (a few seconds on one core):
/// small grids are compared at every point, larger ones at a sample.
constexpr double kValidationBudget = 5e8;

/// Bytes of one slab buffer the plan aims for: large enough that a GPU launch and a write are
/// long compared with their overheads, small enough that several fit in a modest budget.
constexpr std::size_t kTargetSlabBytes = std::size_t{64} << 20;

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

/// Called between stages: a signal stops the run there (the partial map is kept, every other
/// output removed as the stack unwinds).
void stop_if_interrupted() {
  if (interrupt_requested()) throw InterruptedError("interrupted");
}

/// Every setting that changes the map's values, in a fixed order: what a partial file must
/// match to be resumed (and what a complete output must match to be skipped).
io::ResumeKey resume_key(const RunConfig& config, const System& system, const GridSpec& grid,
                         const PotentialBackend& backend) {
  io::ResumeKey key;
  key.input_sha256 = system.source_sha256;
  auto add = [&](const char* name, std::string value) { key.settings.emplace_back(name, std::move(value)); };
  add("grid.counts", fmt::format("{} {} {}", grid.nx(), grid.ny(), grid.nz()));
  add("grid.origin", fmt::format("{:.17g} {:.17g} {:.17g}", grid.origin[0], grid.origin[1], grid.origin[2]));
  add("grid.spacing", fmt::format("{:.17g} {:.17g} {:.17g}", grid.spacing[0], grid.spacing[1], grid.spacing[2]));
  add("units", std::string(unit_name(config.physics.unit)));
  add("temperature", fmt::format("{:.17g}", config.physics.temperature));
  add("dielectric", fmt::format("{:.17g}", config.physics.dielectric));
  add("min_distance", fmt::format("{:.17g}", config.physics.min_distance));
  add("atoms", std::to_string(system.size()));
  add("backend", backend.name());
  add("kernel", backend.kernel_name());
  add("reduction", backend.reduction_name());
  add("compression", std::to_string(config.compression));
  return key;
}

/// The memory the pipeline may hold: --memory-limit, else half of what is available now.
std::size_t memory_budget(const RunConfig& config) {
  if (config.memory_limit) return *config.memory_limit;
  const std::size_t available = available_memory_bytes();
  return available > 0 ? available / 2 : std::size_t{4} << 30;
}

/// Slab size and buffer count for `workers` within `budget` bytes (less `reserved` for the
/// sinks and the atoms). Slabs are multiples of `multiple` planes; a GPU wants at least
/// `min_points` per slab; several slabs per worker keep dynamic scheduling balanced.
pipeline::MapPlan make_plan(const GridSpec& grid, std::size_t workers, std::int64_t multiple,
                            std::size_t min_points, std::size_t budget, std::size_t reserved,
                            double checkpoint_seconds) {
  const std::size_t plane_bytes = grid.plane_points() * sizeof(float);
  const std::int64_t nz = grid.nz();
  auto round_up = [&](std::int64_t planes) {
    return std::max<std::int64_t>(1, (planes + multiple - 1) / multiple) * multiple;
  };
  std::int64_t step = round_up(static_cast<std::int64_t>(
      std::max<std::size_t>(1, kTargetSlabBytes / std::max<std::size_t>(plane_bytes, 1))));
  // Enough slabs for every worker to take several (and for progress and interrupts).
  const auto wanted_slabs = static_cast<std::int64_t>(std::max<std::size_t>(8, 4 * workers));
  step = std::min(step, round_up((nz + wanted_slabs - 1) / wanted_slabs));
  step = std::max(step, round_up(static_cast<std::int64_t>(
                            (min_points + grid.plane_points() - 1) / std::max<std::size_t>(grid.plane_points(), 1))));
  step = std::min(step, round_up(nz));

  pipeline::MapPlan plan;
  plan.checkpoint_seconds = checkpoint_seconds;
  const std::size_t usable = budget > reserved ? budget - reserved : 0;
  // Each worker computes into one buffer while the writer drains another and one waits.
  const std::size_t ideal = 2 * workers + 2, minimum = workers + 1;
  for (;;) {
    const std::size_t slab_bytes = static_cast<std::size_t>(std::min(step, nz)) * plane_bytes;
    const std::size_t fit = slab_bytes > 0 ? usable / slab_bytes : ideal;
    if (fit >= minimum) {
      plan.step = step;
      plan.buffers = std::min(ideal, fit);
      return plan;
    }
    if (step <= multiple) break;
    step = std::max<std::int64_t>(multiple, round_up(step / 2));
  }
  const std::size_t need = static_cast<std::size_t>(std::min<std::int64_t>(multiple, nz)) *
                               plane_bytes * minimum + reserved;
  throw UsageError(fmt::format(
      "--memory-limit {}: too small for this grid: {} worker(s) need at least {} slab buffers of "
      "{} plane(s) of {} each, plus {} for the outputs ({} in all)",
      format_bytes(budget), workers, minimum, std::min<std::int64_t>(multiple, nz),
      format_bytes(plane_bytes), format_bytes(reserved), format_bytes(need)));
}

/// Refuses a run whose outputs cannot fit on their file systems (checked before computing).
void check_free_space(const std::string& path, std::size_t bytes, const std::string& what) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  struct statvfs info {};
  if (::statvfs(dir.empty() ? "." : dir.c_str(), &info) != 0) return;  // unknown: the write will tell
  const std::size_t free_bytes = static_cast<std::size_t>(info.f_bavail) * info.f_frsize;
  if (bytes > free_bytes)
    throw IoError(fmt::format("{} needs {} but {} has only {} free; free some space or write "
                              "elsewhere (--output-dir)", what, format_bytes(bytes),
                              dir.empty() ? std::string(".") : dir.string(), format_bytes(free_bytes)));
}

/// Which grid points --validate compares, their values read back from the store.
Validation validate_map(const RunConfig& config, PotentialBackend& backend, const System& system,
                        const GridSpec& grid, io::MapStore& store,
                        const std::vector<StatsAccum>& plane_stats, const GridStats& stats) {
  Validation validation;
  validation.performed = true;
  const std::size_t plane = grid.plane_points();
  std::vector<float> buffer(plane);
  // The planes that hold the map's minimum and maximum, from the plane statistics.
  auto index_of = [&](bool minimum) {
    for (std::size_t z = 0; z < plane_stats.size(); ++z) {
      if ((minimum ? plane_stats[z].min : plane_stats[z].max) != (minimum ? stats.min : stats.max))
        continue;
      store.read_planes({static_cast<std::int64_t>(z), 1}, buffer.data());
      const auto it = minimum ? std::min_element(buffer.begin(), buffer.end())
                              : std::max_element(buffer.begin(), buffer.end());
      return z * plane + static_cast<std::size_t>(it - buffer.begin());
    }
    return std::size_t{0};
  };
  const std::size_t index_of_min = index_of(true), index_of_max = index_of(false);
  const std::vector<std::size_t> indices = validation_points(
      grid, system.size(), config.validate_points, kValidationBudget, index_of_min, index_of_max);
  std::vector<Vec3> points(indices.size());
  std::vector<float> values(indices.size());
  std::int64_t loaded = -1;
  for (std::size_t n = 0; n < indices.size(); ++n) {  // indices are sorted: one read per plane
    const std::size_t index = indices[n];
    const auto k = static_cast<std::int64_t>(index / plane);
    if (k != loaded) {
      store.read_planes({k, 1}, buffer.data());
      loaded = k;
    }
    const auto i = static_cast<std::int64_t>(index % static_cast<std::size_t>(grid.nx()));
    const auto j = static_cast<std::int64_t>((index % plane) / static_cast<std::size_t>(grid.nx()));
    points[n] = grid.point(i, j, k);
    values[n] = buffer[index % plane];
  }
  std::vector<double> reference(points.size());
  reference_potential(system, config.physics, points.data(), points.size(), reference.data(),
                      config.backend.threads);
  const DiffAccum diff = backend.difference(values.data(), reference.data(), values.size());
  validation.points = diff.count;
  validation.all_points = indices.size() == grid.points();
  validation.max_abs_error = diff.nonfinite > 0 ? INFINITY : diff.max_abs_diff;
  validation.rms_error = diff.count > 0 ? std::sqrt(diff.sum_sq_diff / static_cast<double>(diff.count)) : 0.0;
  validation.max_abs_reference = diff.max_abs_ref;
  const double scale = stats.max_abs() > 0.0 ? stats.max_abs() : 1.0;
  validation.max_rel_error = validation.max_abs_error / scale;
  validation.tolerance = config.tolerance.value_or(backend.tolerance());
  validation.passed = validation.max_rel_error <= validation.tolerance;
  return validation;
}

/// Adapts the store to the sinks' read-back interface.
class StoreReader final : public MapReader {
 public:
  explicit StoreReader(io::MapStore& store) : store_(store) {}
  void read_planes(const Slab& slab, float* out) override { store_.read_planes(slab, out); }
  void read_x_columns(std::int64_t x_begin, std::int64_t count, float* out) override {
    store_.read_x_columns(x_begin, count, out);
  }
  std::int64_t x_chunk() const override { return store_.x_chunk(); }

 private:
  io::MapStore& store_;
};

/// The devices of one run: one backend per GPU (or per CPU worker).
struct Workers {
  std::vector<std::unique_ptr<PotentialBackend>> owned;
  std::vector<PotentialBackend*> list;
  PotentialBackend& first() { return *owned.front(); }
};

/// What every worker's slabs must satisfy: plane counts in multiples of each one's
/// plane_multiple, at least the largest min_points.
SlabHint combined_hint(const Workers& workers) {
  SlabHint hint;
  for (const PotentialBackend* w : workers.list) {
    hint.plane_multiple = std::lcm(hint.plane_multiple, std::max<std::int64_t>(1, w->slab_hint().plane_multiple));
    hint.min_points = std::max(hint.min_points, w->slab_hint().min_points);
  }
  return hint;
}

Workers make_workers(const RunConfig& config) {
  const DeviceChoice choice = resolve_device(config.device, config.backend);
  Workers workers;
  if (choice.kind == BackendKind::Cuda) {
    for (const int ordinal : choice.ordinals) {
      BackendOptions options = config.backend;
      options.device = ordinal;
      workers.owned.push_back(make_backend(choice.kind, options));
    }
  } else {
    if (config.cpu_workers < 1 || config.cpu_workers > 64)
      throw UsageError(fmt::format("--cpu-workers must be 1..64, got {}", config.cpu_workers));
    const unsigned threads = resolve_threads(config.backend.threads);
    for (unsigned w = 0; w < config.cpu_workers; ++w) {
      BackendOptions options = config.backend;
      // Split the threads between the workers (each gets at least one).
      options.threads = std::max(1u, threads / config.cpu_workers + (w < threads % config.cpu_workers ? 1u : 0u));
      workers.owned.push_back(make_backend(choice.kind, options));
    }
  }
  for (auto& backend : workers.owned) workers.list.push_back(backend.get());
  return workers;
}

/// The outputs of one input, decided (and checked) before any work.
struct OutputPaths {
  std::string h5, dx;
  std::string store;  ///< the partial file: the .h5's, or a scratch beside the first output
};

OutputPaths output_paths(const RunConfig& config, const std::string& input) {
  const bool single = config.inputs.size() == 1;
  OutputPaths paths;
  if (config.write_hdf5)
    paths.h5 = single && !config.output.empty() ? config.output
                                                : default_output_path(input, config.output_dir, ".h5");
  if (config.write_dx) {
    if (single && !config.dx_path.empty()) {
      paths.dx = config.dx_path;
    } else {
      // Beside the HDF5 output and named after it when -o names one; else in --output-dir.
      const char* extension = config.dx_gzip ? ".dx.gz" : ".dx";
      paths.dx = single && !config.output.empty()
                     ? default_output_path(config.output,
                                           std::filesystem::path(config.output).parent_path().string(),
                                           extension)
                     : default_output_path(input, config.output_dir, extension);
    }
  }
  paths.store = io::partial_path_for(!paths.h5.empty() ? paths.h5 : paths.dx);
  return paths;
}

/// --null-output: the pipeline with every slab computed, reduced and handed to a sink that keeps
/// nothing (what the GPU and the host can do without the file system: the compute-only time).
RunResult run_without_output(const RunConfig& config, const std::string& input,
                             const System& system, const GridSpec& grid, Workers& workers,
                             ProgressSink* progress, SteadyClock::time_point start) {
  RunResult result;
  result.input = input;
  result.atoms = system.size();
  const SlabHint hint = combined_hint(workers);
  const pipeline::MapPlan plan = make_plan(grid, workers.list.size(), hint.plane_multiple, hint.min_points,
                                           memory_budget(config), system.size() * 64,
                                           config.checkpoint_seconds);
  for (PotentialBackend* w : workers.list) w->prepare(system, grid, config.physics);
  pipeline::NullSink sink;
  result.evaluations = static_cast<double>(grid.points()) * static_cast<double>(system.size());
  const pipeline::EngineReport report =
      pipeline::run_engine(grid, workers.list, plan, nullptr, {&sink}, progress, input, system.size());
  StatsAccum accum;
  for (const StatsAccum& plane : report.plane_stats) accum = StatsAccum::combine(accum, plane);
  MapMetadata& meta = result.metadata;
  meta.grid = grid;
  meta.physics = config.physics;
  meta.coulomb_factor = coulomb_factor(config.physics);
  meta.stats = finalize(accum);
  meta.provenance.backend = workers.first().name();
  meta.provenance.kernel = workers.first().kernel_name();
  for (std::size_t w = 0; w < workers.list.size(); ++w)
    meta.provenance.device += (w ? "; " : "") + workers.list[w]->device_name();
  result.compute_seconds = report.wall_seconds;
  result.busy_fraction = report.busy_fraction();
  result.workers = workers.list.size();
  result.slabs_computed = report.slabs_computed;
  result.total_seconds = seconds_since(start);
  return result;
}

RunResult run_one(const RunConfig& config, const std::string& input, Workers& workers,
                  ProgressSink* progress) {
  const auto start = SteadyClock::now();
  RunResult result;
  result.input = input;

  const auto read_start = SteadyClock::now();
  const System system = io::read_atoms(input);
  const double read_seconds = seconds_since(read_start);
  result.atoms = system.size();
  log().info("{}: {} atoms, total charge {:+.4f} e", input, system.size(), system.total_charge());

  check_potential_bound(system, config.physics);  // |V| stays far inside float32 (dcs/limits.hpp)
  const GridSpec grid = make_grid(system, config.grid);
  log().info("grid: {}", grid.describe());

  if (config.null_output) return run_without_output(config, input, system, grid, workers, progress, start);
  const OutputPaths paths = output_paths(config, input);
  PotentialBackend& lead = workers.first();
  const io::ResumeKey key = resume_key(config, system, grid, lead);

  // --resume: outputs that are complete (same input and settings) are not computed again.
  if (config.resume && !paths.h5.empty() && std::filesystem::exists(paths.h5) &&
      (paths.dx.empty() || std::filesystem::exists(paths.dx))) {
    const io::ResumeKey done = io::read_completed_key(paths.h5);
    if (done.input_sha256 == key.input_sha256 && done.settings == key.settings) {
      log().info("{}: {} is complete; skipped (--resume)", input, paths.h5);
      result.skipped = true;
      result.outputs = {paths.h5};
      if (!paths.dx.empty()) result.outputs.push_back(paths.dx);
      result.total_seconds = seconds_since(start);
      return result;
    }
    throw IoError(fmt::format("{} exists but was computed from another input or with other "
                              "settings; use --force to replace it", paths.h5));
  }
  if (!paths.h5.empty()) io::check_output_path(paths.h5, config.force);
  if (!paths.dx.empty()) io::check_output_path(paths.dx, config.force);

  // Memory: the slab buffers within the budget; disk: the outputs on their file systems.
  const std::size_t budget = memory_budget(config);
  const std::size_t map_bytes_total = grid.points() * sizeof(float);
  const SlabHint hint = combined_hint(workers);
  const bool resuming = config.resume && std::filesystem::exists(paths.store);
  std::int64_t chunk_depth = 0;  // decided by the partial file when resuming
  std::unique_ptr<pipeline::OpenDxSink> dx_sink;
  std::size_t reserved = system.size() * 64;  // atoms in the backends and the store
  if (!paths.dx.empty()) reserved += pipeline::OpenDxSink::memory_for(grid, budget / 4);
  pipeline::MapPlan plan = make_plan(grid, workers.list.size(), hint.plane_multiple, hint.min_points, budget,
                                     reserved, config.checkpoint_seconds);
  // Compressed chunks are written whole, so slabs must end on chunk rows: a depth dividing the step.
  chunk_depth = config.compression > 0 ? std::gcd(plan.step, std::int64_t{16})
                                       : std::min<std::int64_t>({16, plan.step, grid.nz()});
  log().info("plan: {} worker(s), slabs of {} plane(s) ({}), {} buffers, {} of host memory for "
             "slabs (budget {})", workers.list.size(), plan.step,
             format_bytes(static_cast<std::size_t>(plan.step) * grid.plane_points() * sizeof(float)),
             plan.buffers, format_bytes(pipeline::plan_bytes(grid, plan)), format_bytes(budget));
  if (!resuming) {
    std::size_t disk = map_bytes_total + system.size() * 128 + (std::size_t{1} << 20);
    if (config.compression > 0) disk /= 4;  // a floor: compressed size is not known in advance
    check_free_space(paths.store, disk, fmt::format("the {}-point map", grid.points()));
  }
  if (!paths.dx.empty())
    check_free_space(paths.dx, config.dx_gzip || paths.dx.ends_with(".gz") ? grid.points() * 4
                                                                          : grid.points() * 14,
                     "the OpenDX file");

  MapMetadata& meta = result.metadata;
  meta.grid = grid;
  meta.physics = config.physics;
  meta.coulomb_factor = coulomb_factor(config.physics);
  Provenance& prov = meta.provenance;
  prov.version = fmt::format("{} (git {})", kVersion, kGitRevision);
  prov.command_line = config.command_line;
  prov.input_path = std::filesystem::absolute(input).string();
  prov.input_sha256 = system.source_sha256;
  prov.backend = lead.name();
  prov.kernel = lead.kernel_name();
  prov.reduction = lead.reduction_name();
  for (std::size_t w = 0; w < workers.list.size(); ++w)
    prov.device += (w ? "; " : "") + workers.list[w]->device_name();
  prov.hostname = host_name();
  prov.created = utc_now_iso8601();
  prov.settings = io::settings_text(key);

  // The store: continue the partial file (--resume) or start a new one.
  std::optional<io::MapStore> store;
  if (resuming) {
    store = io::MapStore::open_partial(paths.store, meta, key);
    log().info("resuming {}: {} of {} planes are done", paths.store, store->planes_done(), grid.nz());
    if (store->gzip_level() > 0 && plan.step % store->chunk_depth() != 0)
      plan.step = std::max(store->chunk_depth(), plan.step / store->chunk_depth() * store->chunk_depth());
  } else {
    if (std::filesystem::exists(paths.store))
      log().warn("replacing {} left by an earlier run (use --resume to continue such a file)",
                 paths.store);
    io::MapStoreOptions options;
    options.gzip_level = config.compression;
    options.chunk_depth = chunk_depth;
    store = io::MapStore::create(paths.store, meta, system, key, options);
  }
  const double store_seconds = seconds_since(start) - read_seconds;
  log().info("store {} ready after {:.3f} s", paths.store, store_seconds);
  bool store_finished = false;
  std::vector<MapSink*> sinks;
  try {
    if (!paths.dx.empty()) {
      dx_sink = std::make_unique<pipeline::OpenDxSink>(
          paths.dx, io::OpenDxOptions{.force = config.force, .gzip = config.dx_gzip}, budget / 4);
      sinks.push_back(dx_sink.get());
    }
    for (MapSink* sink : sinks) sink->begin(meta);

    for (PotentialBackend* w : workers.list) w->prepare(system, grid, config.physics);
    result.evaluations = static_cast<double>(grid.points()) * static_cast<double>(system.size());
    const pipeline::EngineReport report = pipeline::run_engine(
        grid, workers.list, plan, &*store, sinks, progress, input, system.size());
    result.compute_seconds = report.wall_seconds;
    result.busy_fraction = report.busy_fraction();
    result.workers = workers.list.size();
    result.slabs_computed = report.slabs_computed;
    result.slabs_reused = report.slabs_reused;

    StatsAccum accum;
    for (const StatsAccum& plane : report.plane_stats) accum = StatsAccum::combine(accum, plane);
    meta.stats = finalize(accum);
    if (meta.stats.nonfinite > 0)
      throw Error(fmt::format("{} of {} map values are not finite (a bug: the distance clamp "
                              "should prevent this); nothing was written", meta.stats.nonfinite,
                              meta.stats.count));

    double validate_seconds = 0.0;
    if (config.validate) {
      stop_if_interrupted();
      const auto validate_start = SteadyClock::now();
      meta.validation = validate_map(config, lead, system, grid, *store, report.plane_stats, meta.stats);
      validate_seconds = seconds_since(validate_start);
      const Validation& v = meta.validation;
      log().info("validation: {} {} points, max |error| {:.3e} ({:.3e} of max|V|), RMS error "
                 "{:.3e}, tolerance {:.1e}: {}", v.all_points ? "all" : "sampled", v.points,
                 v.max_abs_error, v.max_rel_error, v.rms_error, v.tolerance,
                 v.passed ? "passed" : "FAILED");
      if (!v.passed)
        throw ValidationError(fmt::format("{}: validation failed: max relative error {:.3e} "
                                          "exceeds the tolerance {:.1e}; nothing was written",
                                          input, v.max_rel_error, v.tolerance));
    }

    BackendTimings stages;
    for (PotentialBackend* w : workers.list) {
      const BackendTimings t = w->timings();
      stages.upload += t.upload;
      stages.kernels += t.kernels;
      stages.download += t.download;
      stages.statistics += t.statistics;
    }
    prov.timings = {{"read", read_seconds},
                    {"compute", result.compute_seconds},
                    {"upload", stages.upload},
                    {"kernels", stages.kernels},
                    {"download", stages.download},
                    {"statistics", stages.statistics},
                    {"write_while_computing", report.write_seconds},
                    {"validate", validate_seconds}};

    const auto finish_start = SteadyClock::now();
    stop_if_interrupted();
    store->finish(meta);
    log().info("store finished in {:.3f} s", seconds_since(finish_start));
    store_finished = true;
    StoreReader reader(*store);
    for (MapSink* sink : sinks) {
      stop_if_interrupted();
      sink->finish(meta, reader);
    }
    stop_if_interrupted();
    const auto commit_start = SteadyClock::now();
    if (!paths.h5.empty()) {
      store->commit(paths.h5, config.force);
      log().info("{} committed (closed, fsync, renamed) in {:.3f} s", paths.h5, seconds_since(commit_start));
      result.outputs.push_back(paths.h5);
    } else {
      store->discard();
    }
    for (MapSink* sink : sinks) {
      sink->commit();
      result.outputs.push_back(sink->name());
    }
    result.write_seconds = report.write_seconds + seconds_since(finish_start);
  } catch (const InterruptedError&) {
    for (MapSink* sink : sinks) sink->abort();
    if (store_finished) {  // nothing left to resume: the map was complete
      store->discard();
      throw;
    }
    store->close_keeping();
    log().warn("interrupted: the partial map is kept in {} ({} of {} planes done); run the same "
               "command with --resume to continue it", paths.store, store->planes_done(), grid.nz());
    throw InterruptedError(fmt::format("interrupted; no output was written (partial map kept in {})",
                                       paths.store));
  } catch (...) {
    for (MapSink* sink : sinks) sink->abort();
    store->discard();
    throw;
  }
  result.total_seconds = seconds_since(start);
  return result;
}

}  // namespace

std::size_t parse_size(const std::string& text) {
  std::size_t pos = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw UsageError(fmt::format("'{}' is not a size (examples: 4096, 512M, 2G, 1.5GiB)", text));
  }
  std::string unit = text.substr(pos);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1.0;
  if (!unit.empty()) {
    const char prefix = unit.front();
    const std::string rest = unit.substr(1);
    const std::string units = "KMGT";
    const std::size_t power = units.find(prefix);
    if (unit == "B") {
      scale = 1.0;
    } else if (power == std::string::npos || !(rest.empty() || rest == "B" || rest == "IB")) {
      throw UsageError(fmt::format("'{}' is not a size: unknown unit '{}' (use K, M, G or T)", text,
                                   text.substr(pos)));
    } else {
      scale = std::pow(1024.0, static_cast<double>(power + 1));
    }
  }
  const double bytes = value * scale;
  if (!(bytes >= 1.0) || bytes > 1e18)
    throw UsageError(fmt::format("'{}' is not a usable size (1 byte to 1e18 bytes)", text));
  return static_cast<std::size_t>(bytes);
}

DeviceChoice resolve_device(const std::string& device, const BackendOptions& options) {
  if (device == "cpu") return {BackendKind::CpuFast, {0}};
  auto all_gpus = [] {
    std::vector<int> ordinals;
    for (const cuda::DeviceInfo& d : cuda::cuda_devices()) ordinals.push_back(d.ordinal);
    return ordinals;
  };
  if (device == "auto") {
    // A CPU kernel name selects the CPU, so --kernel simd-avx2 works without --device cpu.
    for (const VariantInfo& variant : cpu_variants())
      if (variant.kind == VariantKind::Potential && variant.name == options.kernel)
        return {BackendKind::CpuFast, {0}};
    if (cuda::cuda_available()) return {BackendKind::Cuda, all_gpus()};
    log().info("no usable GPU ({}); using the CPU", cuda::cuda_unavailable_reason());
    return {BackendKind::CpuFast, {0}};
  }
  if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
    std::vector<int> ordinals;
    if (device != "cuda") {  // "cuda:N[,M...]"; a bare "cuda:" is refused below
      std::string rest = device.substr(5);
      std::size_t begin = 0;
      do {
        const std::size_t comma = rest.find(',', begin);
        const std::string digits =
            rest.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
        if (digits.empty() || digits.size() > 4 ||
            !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
          throw UsageError("--device: '" + device + "' is not cuda:N or cuda:N,M,... with N a "
                           "device number");
        const int ordinal = std::stoi(digits);
        if (std::find(ordinals.begin(), ordinals.end(), ordinal) != ordinals.end())
          throw UsageError(fmt::format("--device {}: device {} is named twice", device, ordinal));
        ordinals.push_back(ordinal);
        begin = comma == std::string::npos ? rest.size() + 1 : comma + 1;
      } while (begin <= rest.size());
    }
    if (!cuda::cuda_available())
      throw UsageError("--device " + device + ": " + cuda::cuda_unavailable_reason());
    const auto devices = cuda::cuda_devices();
    if (ordinals.empty()) return {BackendKind::Cuda, all_gpus()};
    for (const int ordinal : ordinals)
      if (ordinal >= static_cast<int>(devices.size()))
        throw UsageError(fmt::format("--device {}: only {} CUDA device(s) visible", device, devices.size()));
    return {BackendKind::Cuda, ordinals};
  }
  throw UsageError("--device must be auto, cpu, cuda, cuda:N or cuda:N,M,..., got '" + device + "'");
}

std::unique_ptr<PotentialBackend> make_backend(BackendKind kind, const BackendOptions& options) {
  switch (kind) {
    case BackendKind::CpuReference:
      return make_cpu_reference_backend(options);
    case BackendKind::CpuFast:
      if (options.kernel == "reference") return make_cpu_reference_backend(options);
      return make_cpu_fast_backend(options);
    case BackendKind::Cuda:
      return cuda::make_cuda_backend(options);
  }
  throw UsageError("unknown backend");
}

std::string default_output_path(const std::string& input, const std::string& dir,
                                const std::string& extension) {
  std::filesystem::path name = std::filesystem::path(input).filename();
  if (name.extension() == ".gz") name.replace_extension();
  name.replace_extension();
  std::filesystem::path out = dir.empty() ? name : std::filesystem::path(dir) / name;
  return out.string() + extension;
}

std::vector<std::size_t> validation_points(const GridSpec& grid, std::size_t atoms,
                                           std::size_t requested, double budget,
                                           std::size_t index_of_min, std::size_t index_of_max) {
  const std::size_t total = grid.points();
  std::size_t wanted = requested;
  if (wanted == 0) {
    const double affordable = budget / static_cast<double>(std::max<std::size_t>(atoms, 1));
    wanted = static_cast<double>(total) <= affordable
                 ? total
                 : std::max<std::size_t>(4096, static_cast<std::size_t>(affordable));
  }
  std::vector<std::size_t> indices;
  if (wanted >= total) {
    indices.resize(total);
    for (std::size_t index = 0; index < total; ++index) indices[index] = index;
    return indices;
  }
  for (std::int64_t k : {std::int64_t{0}, grid.nz() - 1})
    for (std::int64_t j : {std::int64_t{0}, grid.ny() - 1})
      for (std::int64_t i : {std::int64_t{0}, grid.nx() - 1}) indices.push_back(grid.index(i, j, k));
  indices.push_back(index_of_min);
  indices.push_back(index_of_max);
  std::mt19937_64 generator(20261121);  // fixed: the same map is always checked at the same points
  std::uniform_int_distribution<std::size_t> pick(0, total - 1);
  while (indices.size() < wanted) indices.push_back(pick(generator));
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  return indices;
}

std::vector<RunResult> run(const RunConfig& config, ProgressSink* progress) {
  if (config.inputs.empty()) throw UsageError("no input files (give --atoms FILE...)");
  if (config.inputs.size() > 1 && (!config.output.empty() || !config.dx_path.empty()))
    throw UsageError("with several inputs, outputs are named after each input: use --output-dir "
                     "instead of --output / a --dx path");
  if (!config.write_hdf5 && !config.write_dx)
    throw UsageError("nothing to write: --no-hdf5 without --dx");
  if (config.compression < 0 || config.compression > 9)
    throw UsageError(fmt::format("--compress must be 0..9, got {}", config.compression));
  validate(config.physics);
  if (config.tolerance && !(*config.tolerance > 0.0))
    throw UsageError("--tolerance must be positive");
  if (!(config.checkpoint_seconds >= 0.0))
    throw UsageError("--checkpoint-interval must be zero or positive");
  if (!config.output_dir.empty()) {
    std::error_code error;
    if (!std::filesystem::exists(config.output_dir, error)) {
      std::filesystem::create_directories(config.output_dir, error);
      if (error)
        throw IoError(fmt::format("cannot create --output-dir {}: {}", config.output_dir,
                                  error.message()));
      log().info("created the output directory {}", config.output_dir);
    } else if (!std::filesystem::is_directory(config.output_dir, error)) {
      throw IoError("--output-dir " + config.output_dir + " is not a directory");
    }
  }

  // Batch: two inputs with one stem (a/x.pqr, b/x.pqr.gz) would write the same file.
  std::map<std::string, std::string> claimed;  // output path -> input
  for (const std::string& input : config.inputs) {
    const std::string path = std::filesystem::weakly_canonical(
        default_output_path(input, config.output_dir, "")).string();
    const auto [where, inserted] = claimed.emplace(path, input);
    if (!inserted)
      throw UsageError("inputs " + where->second + " and " + input + " would write the same " +
                       "output " + path + ".*; rename one or run them separately");
  }

  Workers workers = make_workers(config);
  log().info("backend: {} (kernel {}, reduction {}) on {}", workers.first().name(),
             workers.first().kernel_name(), workers.first().reduction_name(),
             workers.list.size() == 1 ? workers.first().device_name()
                                      : fmt::format("{} devices", workers.list.size()));
  for (std::size_t w = 0; workers.list.size() > 1 && w < workers.list.size(); ++w)
    log().info("  worker {}: {}", w, workers.list[w]->device_name());

  std::vector<RunResult> results;
  for (const std::string& input : config.inputs) {
    try {
      results.push_back(run_one(config, input, workers, progress));
    } catch (const InputError& error) {
      if (!config.keep_going) throw;
      log().error("{}", error.what());
      RunResult failed;
      failed.input = input;
      failed.error = error.what();
      failed.exit_code = static_cast<int>(error.exit_code());
      results.push_back(std::move(failed));
    }
  }
  return results;
}

}  // namespace dcs
