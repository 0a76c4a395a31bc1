// Maps and values in memory for library callers (dcs/pipeline/in_memory.hpp): the same checks,
// workers, engine and points pieces as run(), with a sink that keeps the map instead of files.
#include "dcs/pipeline/in_memory.hpp"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "dcs/atom_checks.hpp"
#include "dcs/error.hpp"
#include "dcs/io/colour_range.hpp"
#include "dcs/limits.hpp"
#include "dcs/log.hpp"
#include "dcs/pipeline/engine.hpp"
#include "dcs/version.hpp"
#include "devices.hpp"
#include "executor.hpp"
#include "finish.hpp"
#include "map_job.hpp"
#include "points/point_set.hpp"
#include "points/points_job.hpp"
#include "slab_plan.hpp"

namespace dcs {
namespace {

/// Keeps every slab in one map buffer (the engine hands them over in z order).
class MemorySink final : public MapSink {
 public:
  MemorySink(const GridSpec& grid, float* map) : grid_(grid), map_(map) {}
  std::string name() const override { return "memory"; }
  void begin(const MapMetadata&) override {}
  void write_slab(const Slab& slab, const float* values, const StatsAccum*) override {
    const std::size_t plane = grid_.plane_points();
    std::memcpy(map_ + static_cast<std::size_t>(slab.z_begin) * plane, values,
                static_cast<std::size_t>(slab.z_count) * plane * sizeof(float));
  }
  void finish(const MapMetadata&, MapReader&) override {}
  void commit() override {}
  void abort() noexcept override {}

 private:
  GridSpec grid_;
  float* map_;
};

/// Planes of a map in memory (for sinks that complete from the map: the colour range).
class MemoryReader final : public MapReader {
 public:
  MemoryReader(const GridSpec& grid, const float* map) : grid_(grid), map_(map) {}
  void read_planes(const Slab& slab, float* out) override {
    const std::size_t plane = grid_.plane_points();
    std::memcpy(out, map_ + static_cast<std::size_t>(slab.z_begin) * plane,
                static_cast<std::size_t>(slab.z_count) * plane * sizeof(float));
  }
  void read_x_columns(std::int64_t x_begin, std::int64_t count, float* out) override {
    for (std::int64_t k = 0; k < grid_.nz(); ++k)
      for (std::int64_t j = 0; j < grid_.ny(); ++j)
        std::memcpy(out + (k * grid_.ny() + j) * count,
                    map_ + (k * grid_.ny() + j) * grid_.nx() + x_begin,
                    static_cast<std::size_t>(count) * sizeof(float));
  }
  std::int64_t x_chunk() const override { return grid_.nx(); }

 private:
  GridSpec grid_;
  const float* map_;
};

/// A map already in memory served as slabs to the one-map job, so that write_map() stores,
/// reduces and commits it exactly as a computed map (the trajectory's MeanMapSource does the
/// same for a mean). Its names are those of the run that computed the values.
class HostMapSource final : public MapSource {
 public:
  HostMapSource(const float* values, const Provenance& made_by)
      : values_(values), made_by_(made_by) {}
  std::string name() const override { return made_by_.backend; }
  std::string kernel_name() const override { return made_by_.kernel; }
  std::string reduction_name() const override { return made_by_.reduction; }
  std::string device_name() const override { return made_by_.device; }
  void prepare(const System&, const GridSpec& grid, const Physics&) override { grid_ = grid; }
  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override {
    const std::size_t plane = grid_.plane_points();
    for (std::int64_t k = 0; k < slab.z_count; ++k) {
      const float* from = values_ + static_cast<std::size_t>(slab.z_begin + k) * plane;
      std::memcpy(out + static_cast<std::size_t>(k) * plane, from, plane * sizeof(float));
      plane_stats[k] = cpu_statistics(from, plane);
    }
  }
  StatsAccum statistics(const float* values, std::size_t n) override {
    return cpu_statistics(values, n);
  }

 private:
  const float* values_;
  Provenance made_by_;
  GridSpec grid_;
};

/// The provenance of a computation by `workers` (no input file, no command line).
Provenance workers_provenance(pipeline::Workers& workers) {
  Provenance prov;
  prov.version = fmt::format("{} (git {})", kVersion, kGitRevision);
  prov.backend = workers.first().name();
  prov.kernel = workers.first().kernel_name();
  prov.reduction = workers.first().reduction_name();
  prov.device = workers.device_names("; ");
  return prov;
}

}  // namespace

struct WorkerCache::State {
  std::string key;  ///< what make_workers() depends on, as text
  pipeline::Workers workers;
};

WorkerCache::WorkerCache() : state_(std::make_unique<State>()) {}
WorkerCache::~WorkerCache() = default;

WorkerCache::State& cache_state(WorkerCache& cache) { return *cache.state_; }

namespace {

/// config's workers: the cache's when it holds them for the same device, backend options and
/// CPU worker count, else new ones (kept in the cache when there is one).
pipeline::Workers& workers_for(const RunConfig& config, WorkerCache* cache,
                               pipeline::Workers& fresh) {
  if (cache == nullptr) return fresh = pipeline::make_workers(config.compute, config.method);
  std::string ordinals;
  for (const int ordinal : config.compute.device.ordinals) ordinals += fmt::format("{},", ordinal);
  const BackendOptions& b = config.compute.backend;
  // The method too: Ewald and MSM workers wrap the direct sum (pipeline::make_workers).
  const std::string key = fmt::format(
      "{}|{}|{}|{}|{}|{}|{}|{}|{}|{:.17g}|{:.17g}", static_cast<int>(config.compute.device.kind),
      ordinals, b.kernel, b.reduction, b.device, b.threads, b.debug_sync,
      config.compute.cpu_workers, static_cast<int>(config.method.kind), config.method.ewald_error,
      config.method.msm_error);
  WorkerCache::State& state = cache_state(*cache);
  if (state.key != key || state.workers.list.empty()) {
    state.workers = pipeline::Workers{};  // the old backends go first (device memory)
    state.key.clear();
    state.workers = pipeline::make_workers(config.compute, config.method);
    state.key = key;
  }
  return state.workers;
}

}  // namespace

GridSpec place_grid(const RunConfig& config, const System& system, const std::string& source) {
  check_atoms(system, source);
  return make_grid(system, config.grid);
}

MemoryMap compute_map(const RunConfig& config, const System& system, const std::string& source,
                      ProgressSink* progress, WorkerCache* cache) {
  const GridSpec grid = place_grid(config, system, source);
  check_potential_bound(system, config.physics);
  check_fits_in_memory(map_bytes(grid), fmt::format("the {}-point map", grid.points()));
  log().info("{}: {} atoms, total charge {:+.4f} e", source, system.size(), system.total_charge());
  log().info("grid: {}", grid.describe());

  pipeline::Workers fresh;
  pipeline::Workers& workers = workers_for(config, cache, fresh);
  const SlabHint hint = pipeline::combined_hint(workers);
  const pipeline::MapPlan plan =
      pipeline::make_plan(grid, workers.list.size(), hint.plane_multiple, hint.min_points,
                          pipeline::memory_budget(config.compute), system.size() * 64,
                          config.output.checkpoint_seconds);
  MemoryMap map;
  map.values = allocate_plain_host(grid.points());
  pipeline::prepare_workers(workers.list, system, grid, config.physics);
  MemorySink sink(grid, map.values->data());
  const pipeline::EngineReport report = pipeline::run_engine(
      grid, workers.list, plan, nullptr, {&sink}, progress, source, system.size());
  MapMetadata& meta = map.metadata;
  meta.grid = grid;
  meta.physics = config.physics;
  meta.coulomb_factor = coulomb_factor(config.physics);
  meta.stats = finalize(pipeline::combined_stats(report.plane_stats));
  meta.provenance = workers_provenance(workers);
  meta.colour_range = colour_range_of(grid, map.values->data());
  map.compute_seconds = report.wall_seconds;
  return map;
}

ColourRange colour_range_of(const GridSpec& grid, const float* values) {
  MapMetadata meta;
  meta.grid = grid;
  io::ColourRangeSink sink;
  sink.begin(meta);
  sink.write_slab(Slab{0, grid.nz()}, values, nullptr);
  MemoryReader reader(grid, values);
  sink.complete(reader);
  return sink.range();
}

std::vector<float> compute_at_atoms(const RunConfig& config, const System& system,
                                    const std::string& source, ProgressSink* progress,
                                    WorkerCache* cache) {
  check_points_method(config.method, true);
  check_atoms(system, source);
  check_potential_bound(system, config.physics);
  PointsRequest request;
  request.source = PointsRequest::Source::kAtoms;
  const pipeline::PointSet set = pipeline::make_point_set(request, system);
  if (set.positions.empty()) return {};
  pipeline::Workers fresh;
  pipeline::Workers& workers = workers_for(config, cache, fresh);
  return pipeline::compute_points_here(system, config.physics, set.positions, set.skip, workers,
                                       progress);
}

std::vector<float> compute_points(const RunConfig& config, const System& system,
                                  const std::string& source, const std::vector<Vec3>& points,
                                  const std::string& points_source, ProgressSink* progress,
                                  WorkerCache* cache) {
  check_points_method(config.method, true);
  check_atoms(system, source);
  for (std::size_t i = 0; i < points.size(); ++i)
    for (const double c : points[i])
      if (!std::isfinite(c) || std::fabs(c) > limits::kMaxCoordinate)
        throw InputError(points_source, 0,
                         fmt::format("point {}: coordinate {} is not finite or beyond the limit "
                                     "of 1e6 Å",
                                     i + 1, c));
  check_potential_bound(system, config.physics);
  if (points.empty()) return {};
  pipeline::Workers fresh;
  pipeline::Workers& workers = workers_for(config, cache, fresh);
  return pipeline::compute_points_here(system, config.physics, points, {}, workers, progress);
}

void write_map(const RunConfig& given, const System& system, const GridSpec& grid,
               const float* values, const Provenance& made_by) {
  RunConfig config = given;
  config.input.files = {system.source_path.empty() ? std::string("memory") : system.source_path};
  config.output.resume = false;
  config.validation.enabled = false;
  config.output.null_output = false;
  check_config(config);
  pipeline::MapJob job;
  job.in.input = config.input.files.front();
  job.in.system = system;
  job.in.grid = grid;
  job.label = config.output.hdf5_path;
  pipeline::Workers workers;
  workers.add_source(std::make_unique<HostMapSource>(values, made_by));
  pipeline::LocalExecutor executor;
  pipeline::run_read_map(config, job, workers, executor, nullptr);
}

}  // namespace dcs
