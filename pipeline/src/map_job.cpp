// The one-map job (map_job.hpp): read, decide the outputs, compute, finish, commit.
#include "map_job.hpp"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <future>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/box_faces.hpp"
#include "dcs/io/colour_range.hpp"
#include "dcs/io/null_sink.hpp"
#include "dcs/log.hpp"
#include "dcs/sysinfo.hpp"
#include "dcs/timer.hpp"
#include "dcs/version.hpp"
#include "finish.hpp"
#include "msm_cost.hpp"
#include "output_formats.hpp"
#include "profile_sink.hpp"
#include "sample_sink.hpp"
#include "slab_plan.hpp"
#include "validation.hpp"

namespace dcs::pipeline {
namespace {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

/// How the key of a complete output differs from this run's: "with other settings (dielectric
/// was 1, now 2)", or "from another input" when the file's SHA-256 differs.
std::string key_differences(const io::ResumeKey& done, const io::ResumeKey& key) {
  if (done.input_sha256 != key.input_sha256) return "from another input";
  std::string text;
  for (const auto& [name, value] : key.settings) {
    const auto found = std::find_if(done.settings.begin(), done.settings.end(),
                                    [&key_name = name](const auto& entry) {  // clang < 16:
                                      return entry.first == key_name;        // no binding captures
                                    });
    const std::string was = found == done.settings.end() ? "unrecorded" : found->second;
    if (was != value)
      text += fmt::format("{}{} was {}, now {}", text.empty() ? "" : "; ", name, was, value);
  }
  return text.empty() ? "with other settings" : "with other settings (" + text + ")";
}

/// --resume: true when the outputs exist and were computed from this input with these
/// settings; throws IoError when the HDF5 output exists but differs. When it matches but
/// another output is missing, the map's outputs are written again (job.replaces_outputs).
bool outputs_complete(const RunConfig& config, MapJob& job) {
  const OutputPaths& paths = job.paths;
  if (!config.output.resume || paths.h5.empty() || !std::filesystem::exists(paths.h5)) return false;
  const io::ResumeKey done = io::read_completed_key(paths.h5);
  if (done.input_sha256 != job.key.input_sha256 || done.settings != job.key.settings)
    throw IoError(fmt::format("{} exists but was computed {}; use --force to replace it", paths.h5,
                              key_differences(done, job.key)));
  std::vector<std::string> others;
  for (const OutputFormat& format : output_formats())
    if (format.sink != nullptr) others.push_back(paths.*format.path);
  others.push_back(paths.profile);
  for (const std::string& other : others) {
    if (other.empty() || std::filesystem::exists(other)) continue;
    log().warn(
        "{} is complete but {} is missing (a run stopped between its renames): writing "
        "every output of the map again, together",
        paths.h5, other);
    job.replaces_outputs = true;
    return false;
  }
  return true;
}

}  // namespace

std::vector<DiskNeed> map_disk_needs(const RunConfig& config, const GridSpec& grid,
                                     const System& system, const OutputPaths& paths,
                                     std::int64_t chunk_depth, bool resuming) {
  std::vector<DiskNeed> needs;
  if (!resuming) {
    io::MapStoreOptions layout;
    layout.gzip_level = config.output.compression;
    layout.chunk_depth = chunk_depth;
    auto disk = io::store_file_bytes(grid, system, layout);
    if (config.output.compression > 0)
      disk /= 4;  // a floor: compressed size is not known in advance
    needs.push_back({paths.store, disk, fmt::format("the {}-point map", grid.points())});
  }
  for (const OutputFormat& format : output_formats())
    if (format.bytes != nullptr && !(paths.*format.path).empty())
      needs.push_back(
          {paths.*format.path, format.bytes(config.output, grid, paths.*format.path), format.file});
  return needs;
}

namespace {

/// The job's resume key: its fixed one, or made from its atoms, grid and extra settings.
io::ResumeKey job_key(const RunConfig& config, const MapJob& job, const MapSource& backend) {
  if (job.fixed_key) return *job.fixed_key;
  io::ResumeKey key = resume_key(config, job.in.system, job.in.grid, backend);
  for (const auto& setting : job.extra_settings) key.settings.push_back(setting);
  return key;
}

/// Decides the outputs (complete ones under --resume are skipped), checks them, the memory plan
/// for `workers` (of `all_workers` sharing the map) and the free disk space.
void plan_outputs(const RunConfig& config, const Workers& workers, MapJob& job,
                  std::size_t all_workers) {
  const GridSpec& grid = job.in.grid;
  job.paths = output_paths(config, job.in.input, job.in.model);
  const OutputPaths& paths = job.paths;
  // --profile's axis must be one of the grid's (UsageError otherwise), before any file.
  if (config.output.profile != ProfileAxis::kNone)
    (void)profile_grid_axis(config.output.profile, grid, job.in.system.cell);
  job.key = job_key(config, job, *workers.list.front());
  if (outputs_complete(config, job)) {
    log().info("{}: {} is complete; skipped (--resume)", job.in.input, paths.h5);
    job.complete = true;
    return;
  }
  for (const OutputFormat& format : output_formats())
    if (!(paths.*format.path).empty())
      io::check_output_path(paths.*format.path, config.output.force || job.replaces_outputs);
  if (!paths.profile.empty())
    io::check_output_path(paths.profile, config.output.force || job.replaces_outputs);
  // The partial file is replaced (or resumed) freely, but never through a symbolic link or in
  // place of a device (check_output_path's rules).
  io::check_output_path(paths.store, /*force=*/true);

  job.budget = memory_budget(config.compute);
  const SlabHint hint = combined_hint(workers);
  job.resuming = config.output.resume && std::filesystem::exists(paths.store);
  std::size_t reserved = job.in.system.size() * 64;  // atoms in the backends and the store
  for (const OutputFormat& format : output_formats())
    if (format.memory != nullptr && !(paths.*format.path).empty())
      reserved += format.memory(grid, job.budget);
  job.plan = make_plan(grid, workers.list.size(), hint.plane_multiple, hint.min_points, job.budget,
                       reserved, config.output.checkpoint_seconds, all_workers);
  // Compressed chunks are written whole, so slabs must end on chunk rows: a depth dividing the
  // step.
  job.chunk_depth = config.output.compression > 0
                        ? std::gcd(job.plan.step, std::int64_t{16})
                        : std::min<std::int64_t>({16, job.plan.step, grid.nz()});
  log().info(
      "plan: {} worker(s), slabs of {} plane(s) ({}), {} buffers, {} of host memory for "
      "slabs (budget {})",
      workers.list.size(), job.plan.step,
      format_bytes(static_cast<std::size_t>(job.plan.step) * grid.plane_points() * sizeof(float)),
      job.plan.buffers, format_bytes(plan_bytes(grid, job.plan)), format_bytes(job.budget));
  check_free_space(
      map_disk_needs(config, grid, job.in.system, job.paths, job.chunk_depth, job.resuming));
}

RunResult skipped_result(const MapJob& job, SteadyClock::time_point start) {
  RunResult result;
  result.input = job.in.input;
  result.model = job.in.model;
  result.count_atoms(job.in.system);
  result.skipped = true;
  result.outputs = {job.paths.h5};
  for (const OutputFormat& format : output_formats())
    if (format.sink != nullptr && !(job.paths.*format.path).empty())
      result.outputs.push_back(job.paths.*format.path);
  if (!job.paths.profile.empty()) result.outputs.push_back(job.paths.profile);
  result.total_seconds = seconds_since(start);
  return result;
}

/// The map's metadata before its values exist: grid, physics, provenance.
MapMetadata initial_metadata(const RunConfig& config, const MapJob& job, const Workers& workers) {
  MapMetadata meta;
  meta.grid = job.in.grid;
  meta.physics = config.physics;
  meta.coulomb_factor = coulomb_factor(config.physics);
  Provenance& prov = meta.provenance;
  const MapSource& lead = *workers.list.front();
  prov.version = fmt::format("{} (git {})", kVersion, kGitRevision);
  prov.command_line = config.command_line;
  // A file's path made absolute; atoms from memory (no source file) keep their label.
  prov.input_path = job.in.system.source_path.empty()
                        ? job.in.input
                        : std::filesystem::absolute(job.in.input).string();
  prov.input_sha256 = job.in.system.source_sha256;
  prov.backend = lead.name();
  prov.kernel = lead.kernel_name();
  prov.reduction = lead.reduction_name();
  prov.device = workers.device_names("; ");
  prov.hostname = host_name();
  prov.created = utc_now_iso8601();
  prov.settings = io::settings_text(job.key);
  meta.models = model_info(config, job.in);
  if (config.trajectory) meta.models.mode.clear();  // a mean over frames: no models of a file
  return meta;
}

/// Opens the store: continues the partial file (--resume, or the one the leader made for
/// ranks) or starts a new one. From here on the partial file is this run's (io::PartialLock):
/// another run on the same output is refused, or waited for (--wait-lock).
io::MapStore open_store(const RunConfig& config, MapJob& job, const MapMetadata& meta,
                        bool defer_atoms) {
  if (job.store_made)  // made (or verified on resume) by this run, its lock kept meanwhile
    return io::MapStore::open_partial(std::move(job.lock), meta, job.key, 0, /*verify=*/false);
  io::PartialLock lock = io::PartialLock::acquire(job.paths.store, config.output.wait_lock);
  if (job.resuming) {
    try {
      io::MapStore store = io::MapStore::open_partial(std::move(lock), meta, job.key);
      log().info("resuming {}: {} of {} planes are done", job.paths.store, store.planes_done(),
                 job.in.grid.nz());
      if (store.gzip_level() > 0 && job.plan.step % store.chunk_depth() != 0)
        job.plan.step = std::max(store.chunk_depth(),
                                 job.plan.step / store.chunk_depth() * store.chunk_depth());
      return store;
    } catch (const io::UnusablePartial& unusable) {  // dcs's, with nothing to resume
      log().warn("{}; starting afresh", unusable.what());
      job.resuming = false;
    }
  } else if (!lock.created() &&
             (config.output.force || lock.inspect().first != io::PartialKind::kForeign)) {
    log().warn("replacing {} left by an earlier run (use --resume to continue such a file)",
               job.paths.store);
  }
  io::MapStoreOptions options;
  options.gzip_level = config.output.compression;
  options.threads = config.compute.backend.threads;  // deflate on --threads (0: every core)
  options.defer_atoms = defer_atoms;
  options.chunk_depth = job.chunk_depth;
  options.force = config.output.force;
  return io::MapStore::create(std::move(lock), meta, job.in.system, job.key, options);
}

/// The outputs besides the HDF5 file, streamed or read back by the pipeline.
std::vector<std::unique_ptr<MapSink>> make_sinks(const RunConfig& config, const MapJob& job) {
  std::vector<std::unique_ptr<MapSink>> sinks;
  for (const OutputFormat& format : output_formats())
    if (format.sink != nullptr && !(job.paths.*format.path).empty())
      sinks.push_back(format.sink(config.output, job.paths.*format.path,
                                  config.output.force || job.replaces_outputs, job.budget));
  // Watches the slabs for the viewers' colour range; finish_map() reads the sampled planes it
  // did not see. Its fixed 1 MiB of counts is not charged to --memory-limit (which sizes the
  // slab buffers; tests use limits of a few hundred KiB).
  sinks.push_back(std::make_unique<io::ColourRangeSink>());
  // Watches the box faces (finish_map() warns when they are too close to the molecule); its
  // 1 MiB histogram is not charged either. A map written from memory may come without atoms.
  if (!job.in.system.atoms.empty()) {
    AtomBox box = job.in.atoms_box;
    box.include(job.in.system);
    sinks.push_back(
        std::make_unique<io::BoxFacesSink>(box.lo, box.hi, job.in.system.total_charge()));
  }
  // Keeps the values of --validate's or msm's check sample as they stream (a few thousand
  // points: not charged either), so that finish_map() does not read the map back for them.
  if (auto sample = streamed_sample(config, job.in.grid, job.in.system.size()))
    sinks.push_back(std::make_unique<SampleSink>(std::move(*sample)));
  if (job.extra_sinks)
    for (auto& sink : job.extra_sinks()) sinks.push_back(std::move(sink));
  if (!job.paths.profile.empty())  // the CSV of the profile finish_map() computes
    sinks.push_back(std::make_unique<ProfileSink>(job.paths.profile, job.in.input,
                                                  config.output.force || job.replaces_outputs));
  return sinks;
}

/// --null-output: every slab computed, reduced and handed to a sink that keeps nothing (what
/// the GPU and the host can do without the file system: the compute-only time). --validate and
/// msm's error check still run: their sample's values and the map's extremes are kept as the
/// slabs pass (SampleSink), since there is no map to read back.
RunResult run_without_output(const RunConfig& config, const MapInput& in, Workers& workers,
                             ProgressSink* progress, SteadyClock::time_point start) {
  RunResult result;
  result.input = in.input;
  result.count_atoms(in.system);
  const SlabHint hint = combined_hint(workers);
  const MapPlan plan = make_plan(in.grid, workers.list.size(), hint.plane_multiple, hint.min_points,
                                 memory_budget(config.compute), in.system.size() * 64,
                                 config.output.checkpoint_seconds);
  prepare_workers(workers.list, in.system, in.grid, config.physics);
  io::NullSink sink;
  std::vector<MapSink*> sinks{&sink};
  MapMetadata& meta = result.metadata;
  meta.grid = in.grid;
  std::optional<SampleSink> sample;
  if (config.validation.enabled || measures_method_error(config)) {
    // Every point of a small grid, as the file run compares, but at most kMostKept values: a
    // grid of few atoms and many points gets a sample.
    sample.emplace(sample_points(config, in.grid, in.system.size(), kMostKept),
                   /*keep_extremes=*/true);
    sample->begin(meta);
    sinks.push_back(&*sample);
  }
  result.evaluations =
      static_cast<double>(in.grid.points()) * static_cast<double>(in.system.size());
  const EngineReport report =
      run_engine(in.grid, workers.list, plan, nullptr, sinks, progress, in.input, in.system.size());
  meta.physics = config.physics;
  meta.coulomb_factor = coulomb_factor(config.physics);
  meta.stats = finalize(combined_stats(report.plane_stats));
  meta.method = method_info(config, in.system, in.grid, workers.on_gpu);
  refuse_nonfinite(meta.stats);  // as finish_map() does; the sample's extremes then exist
  if (sample) {
    PotentialBackend& lead = workers.lead();
    judge_sample(config, in.input, lead,
                 reference_sample(config, lead, in.system, in.grid, *sample), meta);
  }
  meta.provenance.backend = workers.first().name();
  meta.provenance.kernel = workers.first().kernel_name();
  meta.provenance.device = workers.device_names("; ");
  result.compute_seconds = report.wall_seconds;
  result.busy_fraction = report.busy_fraction();
  result.workers = workers.list.size();
  result.slabs_computed = report.slabs_computed;
  result.total_seconds = seconds_since(start);
  return result;
}

/// The leader's part: the store opened, every slab that is not in it computed (or, for a shared
/// map, read back) through the sinks, then statistics, validation and commit.
void finish_on_leader(const RunConfig& config, MapJob& job, Workers& workers,
                      const std::optional<SharedReport>& shared, ProgressSink* progress,
                      RunResult& result, std::future<void>& preparing) {
  result.metadata = initial_metadata(config, job, workers);
  if (shared) {
    result.metadata.provenance.device = shared->devices;
    result.metadata.provenance.hostname = shared->hosts;
  }
  // This process's engine writes the store: the atoms go in while its first slab computes.
  io::MapStore store = open_store(config, job, result.metadata, /*defer_atoms=*/true);
  if (!shared)
    log().info("store {} ready after {:.3f} s", job.paths.store,
               seconds_since(job.start) - job.in.read_seconds);
  std::vector<std::unique_ptr<MapSink>> sinks;
  bool store_finished = false;
  try {
    if (preparing.valid()) preparing.get();  // the workers' prepare(), rethrowing its error
    sinks = make_sinks(config, job);
    EngineReport report =
        run_engine(job.in.grid, workers.list, job.plan, &store, begin_sinks(sinks, result.metadata),
                   shared ? nullptr : progress, job.label, job.in.system.size());
    if (shared) {
      report.write_seconds = shared->write_seconds;
    } else {
      result.compute_seconds = report.wall_seconds;
      result.busy_fraction = report.busy_fraction();
      result.workers = workers.list.size();
      result.slabs_computed = report.slabs_computed;
      result.slabs_reused = report.slabs_reused;
    }
    finish_map(config, job, workers, store, sinks, report, result, store_finished);
  } catch (...) {
    abandon_map(job, store, sinks, store_finished);
  }
}

/// Participants must have read the same input (and --null-output writes nothing to share).
void check_agreement(Executor& executor, const RunConfig& config, const MapJob& job) {
  if (!executor.on_ranks()) return;
  const std::vector<std::string> sums = executor.gather(job.in.system.source_sha256);
  for (std::size_t r = 1; r < sums.size(); ++r)
    if (sums[r] != sums[0])
      throw InputError(job.in.input, 0,
                       fmt::format("rank {} read other bytes than rank 0 (SHA-256 {} "
                                   "and {}): every rank must see the same file",
                                   r, sums[r], sums[0]));
  if (config.output.null_output)
    throw UsageError("--null-output is not available with several MPI ranks");
}

/// The leader runs `leader_step` (plans the outputs, makes the store where ranks share it);
/// every participant then holds its decisions (complete, resuming, the plan).
void decide(Executor& executor, MapJob& job, const std::function<void()>& leader_step) {
  struct Decision {
    int complete = 0;
    int resuming = 0;
    std::int64_t step = 0;
    std::size_t buffers = 0;
    double checkpoint_seconds = 0.0;
  } decision;
  executor.on_leader([&] {
    leader_step();
    decision = {job.complete ? 1 : 0, job.resuming ? 1 : 0, job.plan.step, job.plan.buffers,
                job.plan.checkpoint_seconds};
  });
  executor.broadcast(&decision, sizeof decision);
  job.complete = decision.complete != 0;
  job.resuming = decision.resuming != 0;
  job.plan.step = decision.step;
  job.plan.buffers = decision.buffers;
  job.plan.checkpoint_seconds = decision.checkpoint_seconds;
}

}  // namespace

io::ResumeKey resume_key(const RunConfig& config, const System& system, const GridSpec& grid,
                         const MapSource& backend) {
  io::ResumeKey key;
  key.input_sha256 = system.source_sha256;
  auto add = [&](const char* name, std::string value) {
    key.settings.emplace_back(name, std::move(value));
  };
  add("grid.counts", fmt::format("{} {} {}", grid.nx(), grid.ny(), grid.nz()));
  add("grid.origin",
      fmt::format("{:.17g} {:.17g} {:.17g}", grid.origin[0], grid.origin[1], grid.origin[2]));
  add("grid.spacing",
      fmt::format("{:.17g} {:.17g} {:.17g}", grid.spacing[0], grid.spacing[1], grid.spacing[2]));
  if (grid.skewed())  // only then: the keys of axis-aligned maps stay as they were
    add("grid.axes", fmt::format("{:.17g} {:.17g} {:.17g}  {:.17g} {:.17g} {:.17g}  {:.17g} "
                                 "{:.17g} {:.17g}",
                                 (*grid.axes)[0][0], (*grid.axes)[0][1], (*grid.axes)[0][2],
                                 (*grid.axes)[1][0], (*grid.axes)[1][1], (*grid.axes)[1][2],
                                 (*grid.axes)[2][0], (*grid.axes)[2][1], (*grid.axes)[2][2]));
  if (config.output.profile != ProfileAxis::kNone)  // only then: other keys stay as they were
    add("profile", std::string(1, profile_axis_name(config.output.profile)));
  add("units", std::string(unit_name(config.physics.unit)));
  add("temperature", fmt::format("{:.17g}", config.physics.temperature));
  add("dielectric", fmt::format("{:.17g}", config.physics.dielectric));
  // The model: a partial file of another model (or preset constant) is never continued.
  add("dielectric_model", std::string(dielectric_model_name(config.physics.dielectric_model)));
  add("ionic_strength", fmt::format("{:.17g}", config.physics.ionic_strength));
  add("preset", config.physics.preset);
  add("coulomb_constant", fmt::format("{:.17g}", coulomb_constant(config.physics)));
  add("min_distance", fmt::format("{:.17g}", config.physics.min_distance));
  add("atoms", std::to_string(system.size()));
  // Which model(s) of the file: maps of other models never mix on --resume.
  add("models", config.input.models == ModelsMode::kAverage
                    ? fmt::format("average of {}", system.model_count)
                    : fmt::format("{} (model {})", to_string(config.input.models), system.model));
  add("backend", backend.name());
  add("kernel", backend.kernel_name());
  add("reduction", backend.reduction_name());
  add("compression", std::to_string(config.output.compression));
  // A periodic map depends on its cell and error target too (the backend's names do not say).
  if (config.method.kind == Method::kEwald)
    add("ewald",
        fmt::format("error {:.17g}, cell {:.17g} {:.17g}", config.method.ewald_error,
                    fmt::join(system.cell.lengths(), " "), fmt::join(system.cell.angles(), " ")));
  return key;
}

RunResult run_map(const RunConfig& config, const Job& task, Workers& workers, Executor& executor,
                  ProgressSink* progress, ModelCache* cache) {
  MapJob job;
  executor.together([&] { job.in = read_map_input(config, task, cache); });
  job.label = task.model >= 0 ? fmt::format("{} model {}", task.input, task.model) : task.input;
  return run_read_map(config, job, workers, executor, progress);
}

RunResult run_read_map(const RunConfig& config, MapJob& job, Workers& workers, Executor& executor,
                       ProgressSink* progress) {
  const auto start = job.start;
  check_agreement(executor, config, job);
  if (executor.leads()) warn_if_msm_slower(config, job.in.system, job.in.grid, workers.on_gpu);
  if (config.output.null_output)
    return run_without_output(config, job.in, workers, progress, start);

  decide(executor, job, [&] {
    plan_outputs(config, workers, job, executor.all_workers(workers.list.size()));
    if (!executor.on_ranks() || job.complete) return;
    job.lock =
        open_store(config, job, initial_metadata(config, job, workers), /*defer_atoms=*/false)
            .close_keeping_locked();
  });
  if (!executor.leads()) {  // the leader's decisions, and what follows from them here
    job.paths = output_paths(config, job.in.input, job.in.model);
    job.key = job_key(config, job, *workers.list.front());
    job.budget = memory_budget(config.compute);
  }
  if (job.complete) return skipped_result(job, start);
  job.store_made = executor.on_ranks();

  RunResult result;
  result.input = job.in.input;
  result.model = job.in.model;
  result.count_atoms(job.in.system);
  result.evaluations =
      static_cast<double>(job.in.grid.points()) * static_cast<double>(job.in.system.size());
  // The workers take the atoms while the leader opens the store (writing the atoms into it
  // takes ~0.2 s at 10^6 atoms); a map shared by ranks has them prepared first.
  std::future<void> preparing;
  executor.together([&] {
    const auto prepare = [&] {
      prepare_workers(workers.list, job.in.system, job.in.grid, config.physics);
      log().debug("atoms prepared on {} worker(s)", workers.list.size());
    };
    if (executor.on_ranks()) prepare();
    else preparing = std::async(std::launch::async, prepare);
  });
  const std::optional<SharedReport> shared =
      executor.compute_shared(config, job, workers, progress);
  if (shared) {
    result.compute_seconds = shared->compute_seconds;
    result.busy_fraction = shared->busy_fraction;
    result.workers = shared->workers;
    result.slabs_computed = shared->slabs_computed;
  }
  executor.on_leader(
      [&] { finish_on_leader(config, job, workers, shared, progress, result, preparing); });
  result.total_seconds = seconds_since(start);
  return result;
}

}  // namespace dcs::pipeline
