#include "dcs/run.hpp"

#include <sched.h>
#include <sys/stat.h>
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
#include "dcs/io/colour_range.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/io/mrc.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/log.hpp"
#include "dcs/parallel.hpp"
#include "dcs/pipeline/engine.hpp"
#include "dcs/pipeline/mpi.hpp"
#include "dcs/pipeline/sinks.hpp"
#include "dcs/sysinfo.hpp"
#include "dcs/timer.hpp"
#include "dcs/version.hpp"

#ifdef DCS_HAVE_MPI
#include "dcs/io/parallel_store.hpp"
#include "mpi_support.hpp"
#endif

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
  // Which model(s) of the file (--models): maps of other models never mix on --resume.
  add("models", config.models == "average"
                    ? fmt::format("average of {}", system.model_count)
                    : fmt::format("{} (model {})", config.models, system.model));
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
                            double checkpoint_seconds, std::size_t all_workers = 0) {
  const std::size_t plane_bytes = grid.plane_points() * sizeof(float);
  const std::int64_t nz = grid.nz();
  auto round_up = [&](std::int64_t planes) {
    return std::max<std::int64_t>(1, (planes + multiple - 1) / multiple) * multiple;
  };
  std::int64_t step = round_up(static_cast<std::int64_t>(
      std::max<std::size_t>(1, kTargetSlabBytes / std::max<std::size_t>(plane_bytes, 1))));
  // Enough slabs for every worker to take several (and for progress and interrupts).
  // (all_workers: of every MPI rank sharing the map)
  const auto wanted_slabs = static_cast<std::int64_t>(
      std::max<std::size_t>(8, 4 * std::max(workers, all_workers)));
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
  std::string h5, dx, mrc;
  std::string store;  ///< the partial file: the .h5's, or a scratch beside the first output
};

/// `path` with ".model<N>" before its extension (a ".gz" after it counts as part of it):
/// out.h5 -> out.model3.h5, x.dx.gz -> x.model3.dx.gz.
std::string with_model_suffix(const std::string& path, long long model) {
  const std::filesystem::path whole(path);
  std::string name = whole.filename().string();
  std::size_t dot = name.size();
  if (name.ends_with(".gz") && name.size() > 3) dot = name.size() - 3;
  const std::size_t before = name.rfind('.', dot - 1);
  if (before != std::string::npos && before > 0) dot = before;
  name.insert(dot, fmt::format(".model{}", model));
  return (whole.parent_path() / name).string();
}

/// `model` >= 0 (--models each): every name gets ".model<N>" (with_model_suffix()).
OutputPaths output_paths(const RunConfig& config, const std::string& input, long long model = -1) {
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
  if (config.write_mrc) {
    // As the DX file: the path given, else beside the HDF5 output named after it, else
    // <stem>.mrc in --output-dir.
    paths.mrc = single && !config.mrc_path.empty() ? config.mrc_path
                : single && !config.output.empty()
                    ? default_output_path(config.output,
                                          std::filesystem::path(config.output).parent_path().string(),
                                          ".mrc")
                    : default_output_path(input, config.output_dir, ".mrc");
  }
  if (model >= 0) {
    if (!paths.h5.empty()) paths.h5 = with_model_suffix(paths.h5, model);
    if (!paths.dx.empty()) paths.dx = with_model_suffix(paths.dx, model);
    if (!paths.mrc.empty()) paths.mrc = with_model_suffix(paths.mrc, model);
  }
  paths.store = io::partial_path_for(!paths.h5.empty() ? paths.h5
                                     : !paths.dx.empty() ? paths.dx
                                                         : paths.mrc);
  return paths;
}

/// Refuses, before any work (exit 2), outputs that would overwrite each other or an input: in
/// every input's outputs (HDF5, OpenDX, MRC and the partial file) no two may be one file, none
/// may be any input of the run (not even with --force), and no two inputs may map to one output
/// (a/x.pqr and b/x.pqr.gz both write x.h5; checked over `all_inputs`, every shard's, so shards
/// never collide). Files are compared by resolved path (symbolic links in existing directories
/// followed, `.`/`..` removed) and, where they exist, by device and inode (hard links). --models
/// each adds ".model<N>" to every name of an input alike, so checking the inputs' names suffices.
void check_distinct_paths(const RunConfig& config, const std::vector<std::string>& all_inputs) {
  // Two inputs with one stem write the same files, whatever the extensions.
  std::map<std::string, std::string> claimed;  // <dir>/<stem> -> input
  for (const std::string& input : all_inputs) {
    const std::string path = std::filesystem::weakly_canonical(
        default_output_path(input, config.output_dir, "")).string();
    const auto [where, inserted] = claimed.emplace(path, input);
    if (!inserted)
      throw UsageError("inputs " + where->second + " and " + input + " would write the same " +
                       "output " + path + ".*; rename one or run them separately");
  }
  if (config.null_output) return;  // nothing is written

  struct Named {
    std::string what;  ///< "the HDF5 output", "the input", ...
    std::string path;  ///< as given
  };
  std::map<std::string, Named> by_path;                      // resolved path -> file
  std::map<std::pair<dev_t, ino_t>, Named> by_inode;         // existing files
  auto resolved = [](const std::string& path) {
    std::error_code ec;
    std::filesystem::path full = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
    return ec ? std::filesystem::absolute(path).lexically_normal().string() : full.string();
  };
  // Registers `file`; returns the file registered before it under the same identity, if any.
  auto claim = [&](const Named& file) -> std::optional<Named> {
    std::optional<Named> clash;
    const auto [at, fresh] = by_path.emplace(resolved(file.path), file);
    if (!fresh) clash = at->second;
    struct stat info {};
    if (::stat(file.path.c_str(), &info) == 0) {
      const auto [same, new_inode] = by_inode.emplace(std::make_pair(info.st_dev, info.st_ino), file);
      if (!new_inode && !clash) clash = same->second;
    }
    return clash;
  };
  for (const std::string& input : all_inputs) (void)claim({"the input", input});
  for (const std::string& input : config.inputs) {
    const OutputPaths paths = output_paths(config, input);
    const std::pair<const char*, const std::string*> outputs[] = {
        {"the HDF5 output", &paths.h5}, {"the OpenDX output", &paths.dx},
        {"the MRC output", &paths.mrc}, {"the partial file", &paths.store}};
    for (const auto& [what, path] : outputs) {
      if (path->empty()) continue;
      const std::optional<Named> clash = claim({what, *path});
      if (!clash) continue;
      if (clash->what == "the input")
        throw UsageError(fmt::format("{} {} is the input file {}: dcs never overwrites an input, "
                                     "not even with --force; write the map elsewhere", what,
                                     *path, clash->path));
      throw UsageError(fmt::format("{} {} and {} {} are the same file{}; give each output its own "
                                   "name", what, *path, clash->what, clash->path,
                                   config.inputs.size() > 1 ? fmt::format(" (input {})", input)
                                                            : std::string()));
    }
  }
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

/// One map to compute: an input file, or one model of it (--models each).
struct Job {
  /// The whole input (--models first, average): what a bare input path converts to.
  Job(std::string input_path, long long model_number = -1)  // NOLINT: implicit on purpose
      : input(std::move(input_path)), model(model_number) {}
  std::string input;
  long long model = -1;  ///< --models each: the MODEL number; -1: the input as a whole
};

/// The models of the input read last (--models each): its jobs run one after another, so the
/// file is read once for all its maps. Holds every model of that one file.
struct ModelCache {
  std::string input;
  std::vector<System> models;
  std::optional<GridSpec> common_grid;  ///< around every model's atoms (--model-grid common)
};

/// The maps of a run, in order: one job per input, or with --models each one per model of each
/// input (the files are read here to list their models; the first input's stay in `cache`). An
/// input that cannot be read becomes one job of model -1, whose run reports the error.
std::vector<Job> make_jobs(const RunConfig& config, ModelCache& cache) {
  std::vector<Job> jobs;
  for (const std::string& input : config.inputs) {
    if (config.models != "each") {
      jobs.emplace_back(input);
      continue;
    }
    std::vector<System> models;
    try {
      models = io::read_models(input, io::ModelCheck::kStructure,
                               io::ReadOptions{.charges_as_given = config.charges_as_given});
    } catch (const InputError&) {
      jobs.emplace_back(input);  // run_one reads it again and reports the error in its place
      continue;
    }
    log().info("{}: {} model(s), one map each", input, models.size());
    for (const System& model : models) jobs.emplace_back(input, model.model);
    if (cache.input.empty()) cache = ModelCache{input, std::move(models), std::nullopt};
  }
  return jobs;
}

/// One map, prepared: atoms read, grid placed, outputs decided and checked, memory planned.
struct Prepared {
  std::string input;
  long long model = -1;                ///< --models each: the model mapped
  std::vector<long long> averaged;     ///< --models average: the models averaged
  System system;
  GridSpec grid;
  double read_seconds = 0.0;
  OutputPaths paths;
  io::ResumeKey key;
  bool complete = false;         ///< --resume: the outputs exist and match; nothing to do
  bool resuming = false;         ///< --resume continues paths.store
  std::size_t budget = 0;        ///< host memory the run may hold
  pipeline::MapPlan plan;
  std::int64_t chunk_depth = 0;  ///< of a new store
};

/// Reads the atoms and places the grid (every MPI rank does this itself). --models: first reads
/// the first model; average merges every model with charges / M (io::average_models) and places
/// the grid around all of them; each takes model `model` (from `cache` when it holds the file)
/// on the common grid of all models unless --model-grid own.
void read_input(const RunConfig& config, const std::string& input, Prepared& job,
                long long model = -1, ModelCache* cache = nullptr) {
  job.input = input;
  job.model = model;
  const auto read_start = SteadyClock::now();
  std::optional<GridSpec> common_grid;
  const io::ReadOptions read_options{.charges_as_given = config.charges_as_given};
  if (config.models == "average") {
    const std::vector<System> models =
        io::read_models(input, io::ModelCheck::kSameAtoms, read_options);
    for (const System& m : models) job.averaged.push_back(m.model);
    job.system = io::average_models(models);
  } else if (config.models == "each") {
    ModelCache local;
    ModelCache& file = cache != nullptr ? *cache : local;
    if (file.input != input || file.models.empty())
      file = ModelCache{input, io::read_models(input, io::ModelCheck::kStructure, read_options),
                        std::nullopt};
    if (model < 0)
      throw UsageError(fmt::format("internal error: --models each: the models of {} were not "
                                   "listed as jobs", input));
    const auto found = std::find_if(file.models.begin(), file.models.end(),
                                    [&](const System& m) { return m.model == model; });
    if (found == file.models.end())
      throw InputError(input, 0, fmt::format("model {} is gone: the file changed while dcs ran", model));
    job.system = *found;
    if (config.common_model_grid && file.models.size() > 1) {
      if (!file.common_grid) file.common_grid = make_grid(io::average_models(file.models), config.grid);
      common_grid = file.common_grid;
    }
  } else {
    job.system = io::read_atoms(input, read_options);
  }
  job.read_seconds = seconds_since(read_start);
  const std::string which = config.models == "average"
                                ? fmt::format(" (mean of {} models)", job.system.model_count)
                            : config.models == "each" ? fmt::format(" model {}", model)
                                                      : std::string();
  log().info("{}{}: {} atoms, total charge {:+.4f} e", input, which, job.system.size(),
             job.system.total_charge());
  check_potential_bound(job.system, config.physics);  // |V| stays far inside float32 (dcs/limits.hpp)
  job.grid = common_grid ? *common_grid : make_grid(job.system, config.grid);
  log().info("grid: {}{}", job.grid.describe(),
             common_grid ? " (common to every model of the file)" : "");
}

/// What --models did for this map (for the file's attributes and the summary).
ModelInfo model_info(const RunConfig& config, const Prepared& job) {
  ModelInfo info;
  info.mode = config.models;
  info.model = job.system.model;
  info.count = job.system.model_count;
  info.averaged = job.averaged;
  return info;
}

/// How the key of a complete output differs from this run's: "with other settings (dielectric
/// was 1, now 2)", or "from another input" when the file's SHA-256 differs.
std::string key_differences(const io::ResumeKey& done, const io::ResumeKey& key) {
  if (done.input_sha256 != key.input_sha256) return "from another input";
  std::string text;
  for (const auto& [name, value] : key.settings) {
    const auto found = std::find_if(done.settings.begin(), done.settings.end(),
                                    [&key_name = name](const auto& entry) {  // clang < 16:
                                      return entry.first == key_name;  // no binding captures
                                    });
    const std::string was = found == done.settings.end() ? "unrecorded" : found->second;
    if (was != value) text += fmt::format("{}{} was {}, now {}", text.empty() ? "" : "; ", name, was, value);
  }
  return text.empty() ? "with other settings" : "with other settings (" + text + ")";
}

/// Decides the outputs (skipping complete ones under --resume), checks them, the memory plan
/// for `workers` and the free disk space; everything before any work is done.
void plan_outputs(const RunConfig& config, const Workers& workers, Prepared& job,
                  std::size_t all_workers = 0) {
  const GridSpec& grid = job.grid;
  job.paths = output_paths(config, job.input, job.model);
  const OutputPaths& paths = job.paths;
  job.key = resume_key(config, job.system, grid, *workers.list.front());

  // --resume: outputs that are complete (same input and settings) are not computed again.
  if (config.resume && !paths.h5.empty() && std::filesystem::exists(paths.h5) &&
      (paths.dx.empty() || std::filesystem::exists(paths.dx)) &&
      (paths.mrc.empty() || std::filesystem::exists(paths.mrc))) {
    const io::ResumeKey done = io::read_completed_key(paths.h5);
    if (done.input_sha256 == job.key.input_sha256 && done.settings == job.key.settings) {
      log().info("{}: {} is complete; skipped (--resume)", job.input, paths.h5);
      job.complete = true;
      return;
    }
    throw IoError(fmt::format("{} exists but was computed {}; use --force to replace it",
                              paths.h5, key_differences(done, job.key)));
  }
  if (!paths.h5.empty()) io::check_output_path(paths.h5, config.force);
  if (!paths.dx.empty()) io::check_output_path(paths.dx, config.force);
  if (!paths.mrc.empty()) io::check_output_path(paths.mrc, config.force);
  // The partial file is replaced (or resumed) freely, but never through a symbolic link or in
  // place of a device (check_output_path's rules).
  io::check_output_path(paths.store, /*force=*/true);

  // Memory: the slab buffers within the budget; disk: the outputs on their file systems.
  job.budget = memory_budget(config);
  const SlabHint hint = combined_hint(workers);
  job.resuming = config.resume && std::filesystem::exists(paths.store);
  std::size_t reserved = job.system.size() * 64;  // atoms in the backends and the store
  if (!paths.dx.empty()) reserved += pipeline::OpenDxSink::memory_for(grid, job.budget / 4);
  job.plan = make_plan(grid, workers.list.size(), hint.plane_multiple, hint.min_points, job.budget,
                       reserved, config.checkpoint_seconds, all_workers);
  // Compressed chunks are written whole, so slabs must end on chunk rows: a depth dividing the step.
  job.chunk_depth = config.compression > 0 ? std::gcd(job.plan.step, std::int64_t{16})
                                           : std::min<std::int64_t>({16, job.plan.step, grid.nz()});
  log().info("plan: {} worker(s), slabs of {} plane(s) ({}), {} buffers, {} of host memory for "
             "slabs (budget {})", workers.list.size(), job.plan.step,
             format_bytes(static_cast<std::size_t>(job.plan.step) * grid.plane_points() * sizeof(float)),
             job.plan.buffers, format_bytes(pipeline::plan_bytes(grid, job.plan)), format_bytes(job.budget));
  if (!job.resuming) {
    std::size_t disk = grid.points() * sizeof(float) + job.system.size() * 128 + (std::size_t{1} << 20);
    if (config.compression > 0) disk /= 4;  // a floor: compressed size is not known in advance
    check_free_space(paths.store, disk, fmt::format("the {}-point map", grid.points()));
  }
  if (!paths.dx.empty())
    check_free_space(paths.dx, config.dx_gzip || paths.dx.ends_with(".gz") ? grid.points() * 4
                                                                          : grid.points() * 14,
                     "the OpenDX file");
  if (!paths.mrc.empty())
    check_free_space(paths.mrc, grid.points() * sizeof(float) + io::kMrcHeaderBytes, "the MRC file");
}

/// The result of an input whose outputs were complete already.
RunResult skipped_result(const Prepared& job, SteadyClock::time_point start) {
  RunResult result;
  result.input = job.input;
  result.model = job.model;
  result.atoms = job.system.size();
  result.skipped = true;
  result.outputs = {job.paths.h5};
  if (!job.paths.dx.empty()) result.outputs.push_back(job.paths.dx);
  if (!job.paths.mrc.empty()) result.outputs.push_back(job.paths.mrc);
  result.total_seconds = seconds_since(start);
  return result;
}

/// The map's metadata before its values exist: grid, physics, provenance.
MapMetadata initial_metadata(const RunConfig& config, const Prepared& job, const Workers& workers) {
  MapMetadata meta;
  meta.grid = job.grid;
  meta.physics = config.physics;
  meta.coulomb_factor = coulomb_factor(config.physics);
  Provenance& prov = meta.provenance;
  const PotentialBackend& lead = *workers.list.front();
  prov.version = fmt::format("{} (git {})", kVersion, kGitRevision);
  prov.command_line = config.command_line;
  prov.input_path = std::filesystem::absolute(job.input).string();
  prov.input_sha256 = job.system.source_sha256;
  prov.backend = lead.name();
  prov.kernel = lead.kernel_name();
  prov.reduction = lead.reduction_name();
  for (std::size_t w = 0; w < workers.list.size(); ++w)
    prov.device += (w ? "; " : "") + workers.list[w]->device_name();
  prov.hostname = host_name();
  prov.created = utc_now_iso8601();
  prov.settings = io::settings_text(job.key);
  meta.models = model_info(config, job);
  return meta;
}

/// Opens the store: continues the partial file (--resume) or starts a new one.
io::MapStore open_store(const RunConfig& config, Prepared& job, const MapMetadata& meta) {
  if (job.resuming) {
    io::MapStore store = io::MapStore::open_partial(job.paths.store, meta, job.key);
    log().info("resuming {}: {} of {} planes are done", job.paths.store, store.planes_done(), job.grid.nz());
    if (store.gzip_level() > 0 && job.plan.step % store.chunk_depth() != 0)
      job.plan.step = std::max(store.chunk_depth(), job.plan.step / store.chunk_depth() * store.chunk_depth());
    return store;
  }
  if (std::filesystem::exists(job.paths.store))
    log().warn("replacing {} left by an earlier run (use --resume to continue such a file)",
               job.paths.store);
  io::MapStoreOptions options;
  options.gzip_level = config.compression;
  options.chunk_depth = job.chunk_depth;
  return io::MapStore::create(job.paths.store, meta, job.system, job.key, options);
}

/// The outputs besides the HDF5 file, streamed or read back by the pipeline.
std::vector<std::unique_ptr<MapSink>> make_sinks(const RunConfig& config, const Prepared& job) {
  std::vector<std::unique_ptr<MapSink>> sinks;
  if (!job.paths.dx.empty())
    sinks.push_back(std::make_unique<pipeline::OpenDxSink>(
        job.paths.dx, io::OpenDxOptions{.force = config.force, .gzip = config.dx_gzip}, job.budget / 4));
  if (!job.paths.mrc.empty())  // streamed: takes every slab in z order, holds none
    sinks.push_back(std::make_unique<io::MrcSink>(job.paths.mrc, config.force));
  // Watches the slabs for the viewers' colour range (MapMetadata::colour_range); complete_map()
  // reads the sampled planes it did not see. Its fixed 1 MiB of counts is not charged to
  // --memory-limit (which sizes the slab buffers; tests use limits of a few hundred KiB).
  sinks.push_back(std::make_unique<io::ColourRangeSink>());
  return sinks;
}

/// Begins every sink with the map's metadata; returns them as the engine takes them.
std::vector<MapSink*> begin_sinks(const std::vector<std::unique_ptr<MapSink>>& sinks,
                                  const MapMetadata& meta) {
  std::vector<MapSink*> list;
  for (const auto& sink : sinks) {
    sink->begin(meta);
    list.push_back(sink.get());
  }
  return list;
}

/// Everything after the engine: statistics, validation, the store finished, the sinks written,
/// every output committed (`store_finished` is set once the store is: from then on an
/// interruption leaves nothing to resume).
void complete_map(const RunConfig& config, Prepared& job, Workers& workers, io::MapStore& store,
                  std::vector<std::unique_ptr<MapSink>>& owned_sinks,
                  const pipeline::EngineReport& report, RunResult& result, bool& store_finished) {
  MapMetadata& meta = result.metadata;
  PotentialBackend& lead = *workers.list.front();
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
    meta.validation = validate_map(config, lead, job.system, job.grid, store, report.plane_stats, meta.stats);
    validate_seconds = seconds_since(validate_start);
    const Validation& v = meta.validation;
    log().info("validation: {} {} points, max |error| {:.3e} ({:.3e} of max|V|), RMS error "
               "{:.3e}, tolerance {:.1e}: {}", v.all_points ? "all" : "sampled", v.points,
               v.max_abs_error, v.max_rel_error, v.rms_error, v.tolerance,
               v.passed ? "passed" : "FAILED");
    if (!v.passed)
      throw ValidationError(fmt::format("{}: validation failed: max relative error {:.3e} "
                                        "exceeds the tolerance {:.1e}; nothing was written",
                                        job.input, v.max_rel_error, v.tolerance));
  }

  BackendTimings stages;
  for (PotentialBackend* w : workers.list) {
    const BackendTimings t = w->timings();
    stages.upload += t.upload;
    stages.kernels += t.kernels;
    stages.download += t.download;
    stages.statistics += t.statistics;
  }
  meta.provenance.timings = {{"read", job.read_seconds},
                             {"compute", result.compute_seconds},
                             {"upload", stages.upload},
                             {"kernels", stages.kernels},
                             {"download", stages.download},
                             {"statistics", stages.statistics},
                             {"write_while_computing", report.write_seconds},
                             {"validate", validate_seconds}};

  const auto finish_start = SteadyClock::now();
  stop_if_interrupted();
  StoreReader reader(store);
  for (auto& sink : owned_sinks)
    if (auto* colours = dynamic_cast<io::ColourRangeSink*>(sink.get())) {
      colours->complete(reader);  // the sampled planes a resumed run (or MPI) did not stream
      meta.colour_range = colours->range();
      log().info("colour range for viewers: ±{:.4g} {} ({:g}th percentile of |V|, {} values)",
                 meta.colour_range.high, unit_name(meta.physics.unit),
                 meta.colour_range.high_percentile, meta.colour_range.values);
    }
  store.finish(meta);
  store_finished = true;
  // The finished partial file is no longer resumable: from now on it is one of the run's
  // outputs in the making, which a second signal removes (io::remove_pending_temporaries()).
  io::PendingFile finished_store(job.paths.store);
  log().info("store finished in {:.3f} s", seconds_since(finish_start));
  for (auto& sink : owned_sinks) {
    stop_if_interrupted();
    sink->finish(meta, reader);
  }
  // Commit: everything made durable first (fsync, the slow part), then the renames back to back
  // in a CommitGroup, so that an interruption or a failure anywhere between the first rename
  // and the last (a signal: the check below; a second signal: the handler) removes the outputs
  // already renamed: a run's outputs appear together or not at all.
  stop_if_interrupted();
  const auto commit_start = SteadyClock::now();
  if (!job.paths.h5.empty()) store.sync();
  for (auto& sink : owned_sinks) sink->sync();
  stop_if_interrupted();
  const auto rename_start = SteadyClock::now();
  {
    io::CommitGroup group;
    if (!job.paths.h5.empty()) {
      finished_store.commit(job.paths.h5, config.force);
      result.outputs.push_back(job.paths.h5);
    }
    for (auto& sink : owned_sinks) {
      sink->commit();
      if (dynamic_cast<io::ColourRangeSink*>(sink.get()) == nullptr)  // it only watches
        result.outputs.push_back(sink->name());
    }
    stop_if_interrupted();  // throws: ~CommitGroup removes what was renamed
    group.seal();
  }
  if (job.paths.h5.empty()) store.discard();  // a scratch store (--no-hdf5)
  log().info("{} committed: synced in {:.3f} s, renamed together in {:.3f} s",
             fmt::join(result.outputs, ", "), seconds_since(commit_start) - seconds_since(rename_start),
             seconds_since(rename_start));
  result.write_seconds = report.write_seconds + seconds_since(finish_start);
}

/// The failure path of a map whose store exists: sinks aborted; an interrupted store that was
/// not finished yet is kept for --resume (and the interruption reported so), anything else
/// removed. Rethrows.
[[noreturn]] void abandon_map(const Prepared& job, io::MapStore& store,
                              std::vector<std::unique_ptr<MapSink>>& sinks, bool store_finished) {
  for (auto& sink : sinks) sink->abort();
  try {
    throw;
  } catch (const InterruptedError&) {
    if (store_finished) {  // nothing left to resume: the map was complete
      store.discard();
      throw;
    }
    store.close_keeping();
    log().warn("interrupted: the partial map is kept in {} ({} of {} planes done); run the same "
               "command with --resume to continue it", job.paths.store, store.planes_done(), job.grid.nz());
    throw InterruptedError(fmt::format("interrupted; no output was written (partial map kept in {})",
                                       job.paths.store));
  } catch (...) {
    store.discard();
    throw;
  }
}

RunResult run_one(const RunConfig& config, const Job& task, Workers& workers,
                  ProgressSink* progress, ModelCache* cache = nullptr) {
  const auto start = SteadyClock::now();
  const std::string& input = task.input;
  Prepared job;
  read_input(config, input, job, task.model, cache);
  if (config.null_output)
    return run_without_output(config, input, job.system, job.grid, workers, progress, start);
  plan_outputs(config, workers, job);
  if (job.complete) return skipped_result(job, start);

  RunResult result;
  result.input = input;
  result.model = task.model;
  result.atoms = job.system.size();
  result.metadata = initial_metadata(config, job, workers);
  io::MapStore store = open_store(config, job, result.metadata);
  log().info("store {} ready after {:.3f} s", job.paths.store, seconds_since(start) - job.read_seconds);
  std::vector<std::unique_ptr<MapSink>> sinks;
  bool store_finished = false;
  try {
    sinks = make_sinks(config, job);
    const std::vector<MapSink*> sink_list = begin_sinks(sinks, result.metadata);
    for (PotentialBackend* w : workers.list) w->prepare(job.system, job.grid, config.physics);
    result.evaluations = static_cast<double>(job.grid.points()) * static_cast<double>(job.system.size());
    const pipeline::EngineReport report = pipeline::run_engine(
        job.grid, workers.list, job.plan, &store, sink_list, progress,
        task.model >= 0 ? fmt::format("{} model {}", input, task.model) : input, job.system.size());
    result.compute_seconds = report.wall_seconds;
    result.busy_fraction = report.busy_fraction();
    result.workers = workers.list.size();
    result.slabs_computed = report.slabs_computed;
    result.slabs_reused = report.slabs_reused;
    complete_map(config, job, workers, store, sinks, report, result, store_finished);
  } catch (...) {
    abandon_map(job, store, sinks, store_finished);
  }
  result.total_seconds = seconds_since(start);
  return result;
}


/// The result of an input that failed with `error`.
RunResult failed_result(const std::string& input, const Error& error) {
  RunResult failed;
  failed.input = input;
  failed.error = error.what();
  failed.exit_code = static_cast<int>(error.exit_code());
  return failed;
}

/// The devices of this process when it is one of several MPI ranks on a node: with --device
/// auto or cuda, the GPU of its node-local rank; with a CPU backend, its share of the cores.
RunConfig per_rank_config(const RunConfig& config) {
  RunConfig mine = config;
  const pipeline::MpiInfo& mpi = pipeline::mpi_info();
  if (!mpi.active) return mine;
  // The CPUs this rank may run on: the launcher may have bound it (OpenMPI binds each of one or
  // two ranks to a single core by default), and threads beyond them only take turns.
  cpu_set_t allowed_set;
  CPU_ZERO(&allowed_set);
  const unsigned hardware = resolve_threads(0);
  const unsigned allowed = sched_getaffinity(0, sizeof allowed_set, &allowed_set) == 0
                               ? static_cast<unsigned>(CPU_COUNT(&allowed_set)) : hardware;
  if (allowed < hardware && allowed * static_cast<unsigned>(mpi.local_size) < hardware &&
      mpi.local_rank == 0)
    log().warn("the launcher bound each rank to {} of this node's {} CPUs, so {} rank(s) leave {} "
               "idle; start with `mpirun --bind-to none` (or --map-by ppr:<ranks>:node:PE=<cpus>) "
               "to use them", allowed, hardware, mpi.local_size,
               hardware - allowed * static_cast<unsigned>(mpi.local_size));
  if (mine.backend.threads == 0)
    mine.backend.threads = allowed < hardware
                               ? std::max(1u, allowed)
                               : std::max(1u, hardware / static_cast<unsigned>(mpi.local_size));
  if ((config.device == "auto" || config.device == "cuda") && cuda::cuda_available()) {
    const DeviceChoice choice = resolve_device(config.device, config.backend);
    if (choice.kind == BackendKind::Cuda) {
      const int gpus = static_cast<int>(choice.ordinals.size());
      const int ordinal = choice.ordinals[static_cast<std::size_t>(mpi.local_rank % gpus)];
      if (mpi.local_size > gpus && mpi.local_rank == gpus)
        log().warn("{} ranks on this node share {} GPU(s); give each rank its own GPU (one rank "
                   "per GPU) for full speed", mpi.local_size, gpus);
      mine.device = fmt::format("cuda:{}", ordinal);
    }
  }
  return mine;
}

#ifdef DCS_HAVE_MPI
// ---- MPI ranks ------------------------------------------------------------------------------
// One map across ranks (run_one_ranks) and many inputs across ranks (run_batch_ranks). Every
// step that can fail on one rank ends in io::agree(), so all ranks stop together and `mpirun`
// sees every rank exit; see dcs/io/parallel_store.hpp.

template <class T>
void broadcast(T& value) {
  MPI_Bcast(&value, static_cast<int>(sizeof(T)), MPI_BYTE, 0, MPI_COMM_WORLD);
}

/// The slabs of `step` planes not all of whose planes are done (identical on every rank).
std::vector<std::size_t> slabs_to_do(const GridSpec& grid, std::int64_t step,
                                     const std::vector<std::uint8_t>& done) {
  std::vector<std::size_t> todo;
  for (std::int64_t z = 0, s = 0; z < grid.nz(); z += step, ++s) {
    bool all = true;
    for (std::int64_t p = z; all && p < std::min(grid.nz(), z + step); ++p)
      all = done[static_cast<std::size_t>(p)] != 0;
    if (!all) todo.push_back(static_cast<std::size_t>(s));
  }
  return todo;
}

/// This rank's share of `todo` under static assignment: contiguous blocks, sizes differing by
/// at most one.
std::vector<std::size_t> static_block(const std::vector<std::size_t>& todo, int rank, int size) {
  const std::size_t n = todo.size(), ranks = static_cast<std::size_t>(size);
  const std::size_t r = static_cast<std::size_t>(rank);
  const std::size_t begin = r * (n / ranks) + std::min(r, n % ranks);
  const std::size_t end = begin + n / ranks + (r < n % ranks ? 1 : 0);
  return {todo.begin() + static_cast<std::ptrdiff_t>(begin), todo.begin() + static_cast<std::ptrdiff_t>(end)};
}

/// "rank 0: <a>; rank 1: <b>" of every rank's string (or the one string when all agree).
std::string per_rank(const std::vector<std::string>& values) {
  if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values.front(); }))
    return values.size() > 1 ? fmt::format("{} (each of {} ranks)", values.front(), values.size())
                             : values.front();
  std::string text;
  for (std::size_t r = 0; r < values.size(); ++r) text += fmt::format("{}rank {}: {}", r ? "; " : "", r, values[r]);
  return text;
}

RunResult run_one_ranks(const RunConfig& config, const Job& task, Workers& workers,
                        ProgressSink* progress, ModelCache* cache) {
  const std::string& input = task.input;
  const pipeline::MpiInfo& mpi = pipeline::mpi_info();
  const MPI_Comm world = MPI_COMM_WORLD;
  const auto start = SteadyClock::now();
  Prepared job;
  io::agree_on(world, [&] { read_input(config, input, job, task.model, cache); });
  const std::vector<std::string> sums = io::all_gather(world, job.system.source_sha256);
  for (int r = 1; r < mpi.size; ++r)
    if (sums[static_cast<std::size_t>(r)] != sums[0])
      throw InputError(input, 0, fmt::format("rank {} read other bytes than rank 0 (SHA-256 {} "
                                             "and {}): every rank must see the same file", r,
                                             sums[static_cast<std::size_t>(r)], sums[0]));
  if (config.null_output) throw UsageError("--null-output is not available with several MPI ranks");

  // Rank 0 decides the outputs and the plan and makes (or checks) the partial file; the other
  // ranks take its decisions.
  struct Decision {
    int complete = 0;
    int resuming = 0;
    std::int64_t step = 0;
    std::size_t buffers = 0;
  } decision;
  const std::size_t all_workers = workers.list.size() * static_cast<std::size_t>(mpi.size);
  io::agree_on(world, [&] {
    if (mpi.rank != 0) return;
    plan_outputs(config, workers, job, all_workers);
    if (!job.complete) {
      io::MapStore store = open_store(config, job, initial_metadata(config, job, workers));
      store.close_keeping();
    }
    decision = {job.complete ? 1 : 0, job.resuming ? 1 : 0, job.plan.step, job.plan.buffers};
  });
  broadcast(decision);
  if (mpi.rank != 0) {
    job.paths = output_paths(config, input);
    job.key = resume_key(config, job.system, job.grid, *workers.list.front());
    job.complete = decision.complete != 0;
    job.resuming = decision.resuming != 0;
    job.budget = memory_budget(config);
  }
  job.plan.step = decision.step;
  job.plan.buffers = decision.buffers;
  job.plan.checkpoint_seconds = config.checkpoint_seconds;
  if (job.complete) return skipped_result(job, start);
  if (mpi.rank == 0)
    log().info("{} ranks share the map: slabs of {} planes, {} assignment", mpi.size, job.plan.step,
               config.mpi_schedule);

  // Every rank: its slabs into the shared file.
  io::agree_on(world, [&] {
    for (PotentialBackend* w : workers.list) w->prepare(job.system, job.grid, config.physics);
  });
  std::optional<io::ParallelStore> store;
  io::agree_on(world, [&] { store.emplace(job.paths.store, job.grid, world, config.checkpoint_seconds); });
  const std::vector<std::size_t> todo = slabs_to_do(job.grid, job.plan.step, store->plane_done());
  if (mpi.rank == 0)
    log().info("{} of {} slabs to compute{}", todo.size(), (job.grid.nz() + job.plan.step - 1) / job.plan.step,
               todo.size() < static_cast<std::size_t>((job.grid.nz() + job.plan.step - 1) / job.plan.step)
                   ? " (the others are done in the partial file)" : "");
  std::optional<pipeline::Dispenser> dispenser;
  std::unique_ptr<pipeline::SlabSource> source;
  if (config.mpi_schedule == "dynamic") {
    dispenser.emplace(world, todo.size());
    source = std::make_unique<pipeline::DispensedSource>(*dispenser, todo);
  } else {
    source = std::make_unique<pipeline::ListSource>(static_block(todo, mpi.rank, mpi.size));
  }
  const double per_plane = static_cast<double>(job.grid.plane_points()) * static_cast<double>(job.system.size());
  if (mpi.rank == 0 && progress != nullptr) {
    progress->begin(input, per_plane * static_cast<double>(job.grid.nz()));
    const auto done_before = static_cast<double>(
        std::count(store->plane_done().begin(), store->plane_done().end(), std::uint8_t{1}));
    store->on_progress([&, done_before](std::int64_t planes) {
      progress->update(per_plane * (done_before + static_cast<double>(planes)));
    });
  }
  pipeline::EngineReport report;
  std::exception_ptr failure;
  try {
    report = pipeline::run_engine(job.grid, workers.list, job.plan, &*store, {}, nullptr, input,
                                  job.system.size(), source.get());
  } catch (...) {
    failure = std::current_exception();
    if (!store->settled()) store->announce(failure);
  }
  if (mpi.rank == 0 && progress != nullptr) progress->end();
  source.reset();
  dispenser.reset();
  std::exception_ptr closing;
  try {
    store->close();
  } catch (...) {
    closing = std::current_exception();
  }
  store.reset();
  if (failure) {
    // Rank 0 keeps the partial file of an interrupted run (for --resume) and removes any other.
    if (mpi.rank == 0) {
      try {
        std::rethrow_exception(failure);
      } catch (const InterruptedError&) {
        log().warn("interrupted: the partial map is kept in {}; run the same command with "
                   "--resume (with any number of ranks) to continue it", job.paths.store);
      } catch (...) {
        std::error_code ignored;
        std::filesystem::remove(job.paths.store, ignored);
      }
    }
    std::rethrow_exception(failure);
  }
  io::agree(world, closing);

  // What the ranks did, for the summary and the provenance.
  std::array<double, 2> seconds{report.wall_seconds, report.write_seconds};
  MPI_Allreduce(MPI_IN_PLACE, seconds.data(), 2, MPI_DOUBLE, MPI_MAX, world);
  double busy = report.busy_fraction();
  MPI_Allreduce(MPI_IN_PLACE, &busy, 1, MPI_DOUBLE, MPI_SUM, world);
  unsigned long long slabs = report.slabs_computed;
  MPI_Allreduce(MPI_IN_PLACE, &slabs, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, world);
  std::string devices;
  for (std::size_t w = 0; w < workers.list.size(); ++w)
    devices += (w ? ", " : "") + workers.list[w]->device_name();
  const std::string device_text = per_rank(io::all_gather(world, devices));
  std::vector<std::string> hosts = io::all_gather(world, host_name());
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());

  // Rank 0 finishes the map alone: statistics, validation, the other outputs, commit.
  RunResult result;
  result.input = input;
  result.atoms = job.system.size();
  result.evaluations = static_cast<double>(job.grid.points()) * static_cast<double>(job.system.size());
  result.compute_seconds = seconds[0];
  result.busy_fraction = busy / mpi.size;
  result.workers = all_workers;
  result.slabs_computed = slabs;
  io::agree_on(world, [&] {
    if (mpi.rank != 0) return;
    result.metadata = initial_metadata(config, job, workers);
    result.metadata.provenance.device = device_text;
    result.metadata.provenance.hostname = fmt::format("{}", fmt::join(hosts, ", "));
    io::MapStore map = io::MapStore::open_partial(job.paths.store, result.metadata, job.key);
    std::vector<std::unique_ptr<MapSink>> sinks;
    bool store_finished = false;
    try {
      sinks = make_sinks(config, job);
      const std::vector<MapSink*> sink_list = begin_sinks(sinks, result.metadata);
      // Every slab is done: the engine reads them back for the sinks that take slabs and
      // gathers the plane statistics in plane order.
      pipeline::EngineReport gathered = pipeline::run_engine(
          job.grid, workers.list, job.plan, &map, sink_list, nullptr, input, job.system.size());
      gathered.write_seconds = seconds[1];
      complete_map(config, job, workers, map, sinks, gathered, result, store_finished);
    } catch (...) {
      abandon_map(job, map, sinks, store_finished);
    }
  });
  result.total_seconds = seconds_since(start);
  return result;
}

/// Many maps across ranks (inputs, or models with --models each): each rank computes whole
/// maps with its own device, taking the next job (largest file first) when it is free. Rank 0
/// gets every job's result.
std::vector<RunResult> run_batch_ranks(const RunConfig& config, const std::vector<Job>& jobs,
                                       Workers& workers, ModelCache& cache) {
  const pipeline::MpiInfo& mpi = pipeline::mpi_info();
  const MPI_Comm world = MPI_COMM_WORLD;
  // Largest first (rank 0's view of the sizes, so every rank has the same order).
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (mpi.rank == 0) {
    std::vector<std::uintmax_t> sizes(order.size(), 0);
    for (std::size_t i = 0; i < order.size(); ++i) {
      std::error_code error;
      const std::uintmax_t size = std::filesystem::file_size(jobs[i].input, error);
      sizes[i] = error ? 0 : size;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  }
  MPI_Bcast(order.data(), static_cast<int>(order.size() * sizeof(std::size_t)), MPI_BYTE, 0, world);

  std::vector<RunResult> mine;
  std::exception_ptr interrupted;
  {
    pipeline::Dispenser dispenser(world, order.size());
    while (const std::optional<std::size_t> k = dispenser.next()) {
      const Job& job = jobs[order[*k]];
      const std::string& input = job.input;
      try {
        mine.push_back(run_one(config, job, workers, nullptr, &cache));
      } catch (const InterruptedError&) {
        interrupted = std::current_exception();
        dispenser.stop();
        break;
      } catch (const Error& error) {
        mine.push_back(failed_result(input, error));
        mine.back().model = job.model;
        log().error("{}", error.what());
        if (!config.keep_going) dispenser.stop();
      }
      mine.back().rank = mpi.rank;
    }
  }
  io::agree(world, interrupted);

  // Every rank's results to rank 0, one line each: rank, outcome, exit code, seconds, input,
  // outputs, error (tab-separated; tabs and newlines inside are replaced).
  auto clean = [](std::string text) {
    std::replace(text.begin(), text.end(), '\t', ' ');
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
  };
  std::string lines;
  for (const RunResult& r : mine)
    lines += fmt::format("{}\t{}\t{}\t{:.6f}\t{}\t{}\t{}\t{}\n", r.rank, r.skipped ? 1 : 0, r.exit_code,
                         r.total_seconds, r.model, clean(r.input), clean(fmt::format("{}", fmt::join(r.outputs, "\x1f"))),
                         clean(r.error));
  const std::vector<std::string> all = io::all_gather(world, lines);
  std::vector<RunResult> results;
  if (mpi.rank != 0) return results;
  std::map<std::pair<std::string, long long>, RunResult> by_job;
  for (const std::string& text : all) {
    std::size_t begin = 0;
    while (begin < text.size()) {
      const std::size_t end = text.find('\n', begin);
      std::vector<std::string> field;
      std::size_t f = begin;
      for (int n = 0; n < 7; ++n) {
        const std::size_t tab = text.find('\t', f);
        field.push_back(text.substr(f, tab - f));
        f = tab + 1;
      }
      field.push_back(text.substr(f, end - f));
      RunResult r;
      r.rank = std::stoi(field[0]);
      r.skipped = field[1] == "1";
      r.exit_code = std::stoi(field[2]);
      r.total_seconds = std::stod(field[3]);
      r.model = std::stoll(field[4]);
      r.input = field[5];
      for (std::size_t b = 0; !field[6].empty() && b <= field[6].size();) {
        const std::size_t sep = field[6].find('\x1f', b);
        r.outputs.push_back(field[6].substr(b, sep == std::string::npos ? std::string::npos : sep - b));
        b = sep == std::string::npos ? field[6].size() + 1 : sep + 1;
      }
      r.error = field[7];
      by_job[{r.input, r.model}] = std::move(r);
      begin = end + 1;
    }
  }
  for (const Job& job : jobs) {  // in the order given
    auto found = by_job.find({job.input, job.model});
    if (found != by_job.end()) {
      results.push_back(std::move(found->second));
    } else {
      RunResult skipped;
      skipped.input = job.input;
      skipped.model = job.model;
      skipped.attempted = false;
      results.push_back(std::move(skipped));
    }
  }
  return results;
}
#endif
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

std::vector<std::string> shard_inputs(const std::vector<std::string>& inputs, const std::string& shard) {
  long long index = 0, count = 0;
  if (shard == "slurm") {
    auto variable = [](const char* name, bool required) -> long long {
      const char* value = std::getenv(name);
      if (value == nullptr || *value == '\0') {
        if (!required) return -1;
        throw UsageError(fmt::format("--shard slurm: {} is not set (run it as a task of a Slurm job "
                                     "array: sbatch --array=...)", name));
      }
      char* end = nullptr;
      const long long number = std::strtoll(value, &end, 10);
      if (*end != '\0' || number < 0)
        throw UsageError(fmt::format("--shard slurm: {}='{}' is not a task number", name, value));
      return number;
    };
    const long long id = variable("SLURM_ARRAY_TASK_ID", true);
    count = variable("SLURM_ARRAY_TASK_COUNT", true);
    const long long first = std::max(0LL, variable("SLURM_ARRAY_TASK_MIN", false));
    const long long step = std::max(1LL, variable("SLURM_ARRAY_TASK_STEP", false));
    if (id < first || (id - first) % step != 0 || (id - first) / step >= count)
      throw UsageError(fmt::format("--shard slurm: task {} is not one of the {} tasks {}, {}+{}, ...",
                                   id, count, first, first, step));
    index = (id - first) / step;
  } else {
    char slash = 0;
    char extra = 0;
    if (std::sscanf(shard.c_str(), "%lld%c%lld%c", &index, &slash, &count, &extra) != 3 ||
        slash != '/' || count < 1 || index < 0 || index >= count)
      throw UsageError(fmt::format("--shard must be I/N with 0 <= I < N, or slurm; got '{}'", shard));
  }
  std::vector<std::uintmax_t> sizes(inputs.size(), 0);
  std::vector<std::size_t> order(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(inputs[i], error);
    sizes[i] = error ? 0 : size;
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  std::vector<bool> mine(inputs.size(), false);
  for (std::size_t k = static_cast<std::size_t>(index); k < order.size(); k += static_cast<std::size_t>(count))
    mine[order[k]] = true;
  std::vector<std::string> selected;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (mine[i]) selected.push_back(inputs[i]);
  log().info("--shard {}: share {} of {}: {} of {} inputs", shard, index, count, selected.size(), inputs.size());
  return selected;
}

std::vector<RunResult> run(const RunConfig& given, ProgressSink* progress) {
  if (given.inputs.empty()) throw UsageError("no input files (give --atoms FILE...)");
  RunConfig config = given;
  if (!config.shard.empty()) {
    if (!config.output.empty() || !config.dx_path.empty() || !config.mrc_path.empty())
      throw UsageError("--shard splits a batch whose outputs are named after each input: use "
                       "--output-dir instead of --output / a --dx or --mrc path");
    config.inputs = shard_inputs(given.inputs, given.shard);
    if (config.inputs.empty()) return {};
  }
  if (config.mpi_schedule != "static" && config.mpi_schedule != "dynamic")
    throw UsageError("--mpi-schedule must be static or dynamic, got '" + config.mpi_schedule + "'");
  if (config.inputs.size() > 1 &&
      (!config.output.empty() || !config.dx_path.empty() || !config.mrc_path.empty()))
    throw UsageError("with several inputs, outputs are named after each input: use --output-dir "
                     "instead of --output / a --dx or --mrc path");
  if (!config.write_hdf5 && !config.write_dx && !config.write_mrc)
    throw UsageError("nothing to write: --no-hdf5 without --dx or --mrc");
  if (config.models != "first" && config.models != "each" && config.models != "average")
    throw UsageError("--models must be first, each or average, got '" + config.models + "'");
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

  check_distinct_paths(config, given.inputs);

  const pipeline::MpiInfo& mpi = pipeline::mpi_info();
  const RunConfig rank_config = per_rank_config(config);
  Workers workers;
#ifdef DCS_HAVE_MPI
  if (mpi.active)
    io::agree_on(MPI_COMM_WORLD, [&] { workers = make_workers(rank_config); });
  else
#endif
    workers = make_workers(rank_config);
  log().info("backend: {} (kernel {}, reduction {}) on {}", workers.first().name(),
             workers.first().kernel_name(), workers.first().reduction_name(),
             workers.list.size() == 1 ? workers.first().device_name()
                                      : fmt::format("{} devices", workers.list.size()));
  for (std::size_t w = 0; workers.list.size() > 1 && w < workers.list.size(); ++w)
    log().info("  worker {}: {}", w, workers.list[w]->device_name());

  ModelCache cache;
  const std::vector<Job> jobs = make_jobs(config, cache);
#ifdef DCS_HAVE_MPI
  if (mpi.active) {
    // One map: every rank computes part of it; several: each rank whole maps.
    if (jobs.size() == 1) {
      RunResult result = run_one_ranks(rank_config, jobs.front(), workers, progress, &cache);
      if (mpi.rank != 0) return {};
      return {std::move(result)};
    }
    return run_batch_ranks(rank_config, jobs, workers, cache);
  }
#endif
  (void)mpi;
  std::vector<RunResult> results;
  const bool batch = jobs.size() > 1;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const std::string& input = jobs[i].input;
    try {
      results.push_back(run_one(rank_config, jobs[i], workers, progress, &cache));
    } catch (const InterruptedError&) {
      throw;
    } catch (const Error& error) {
      if (!batch) throw;
      log().error("{}", error.what());
      results.push_back(failed_result(input, error));
      results.back().model = jobs[i].model;
      if (config.keep_going) continue;
      for (std::size_t rest = i + 1; rest < jobs.size(); ++rest) {
        RunResult skipped;
        skipped.input = jobs[rest].input;
        skipped.model = jobs[rest].model;
        skipped.attempted = false;
        results.push_back(std::move(skipped));
      }
      break;
    }
  }
  return results;
}

}  // namespace dcs
