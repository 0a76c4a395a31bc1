#include "dcs/run.hpp"

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
#include "dcs/io/hdf5.hpp"
#include "dcs/io/opendx.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/log.hpp"
#include "dcs/timer.hpp"
#include "dcs/version.hpp"

namespace dcs {
namespace {

std::atomic<bool> g_interrupt{false};

using Clock = std::chrono::steady_clock;

/// Atom-point evaluations --validate spends in float64 by default (a few seconds on one core):
/// small grids are compared at every point, larger ones at a sample.
constexpr double kValidationBudget = 5e8;

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

/// z-planes per compute() call: about 1/64 of the grid, for regular progress and a prompt
/// answer to an interrupt, but as large as the backend's hint asks.
std::int64_t planes_per_slab(const GridSpec& grid, const SlabHint& hint) {
  const auto plane = static_cast<std::int64_t>(grid.plane_points());
  const auto min_points = static_cast<std::int64_t>(hint.min_points);
  std::int64_t planes = std::max<std::int64_t>(grid.nz() / 64, (min_points + plane - 1) / plane);
  const std::int64_t multiple = std::max<std::int64_t>(1, hint.plane_multiple);
  planes = std::max<std::int64_t>(1, (planes + multiple - 1) / multiple) * multiple;
  return std::min(grid.nz(), planes);
}

/// Called between slabs and between output files: a signal stops the run there, and the
/// stack unwinding removes whatever this run wrote (OutputSet, atomic temporaries).
void stop_if_interrupted() {
  if (interrupt_requested()) throw InterruptedError("interrupted; no output was written");
}

class OutputSet {
 public:
  // Removes what this run wrote when it did not finish: a failed run leaves nothing behind.
  ~OutputSet() {
    if (committed_) return;
    for (const std::string& path : written_) {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  }
  void add(const std::string& path) { written_.push_back(path); }
  void commit() { committed_ = true; }
  const std::vector<std::string>& paths() const { return written_; }

 private:
  std::vector<std::string> written_;
  bool committed_ = false;
};

Validation validate_map(const RunConfig& config, PotentialBackend& backend, const System& system,
                        const GridSpec& grid, const std::vector<float>& map,
                        const GridStats& stats) {
  Validation validation;
  validation.performed = true;
  std::size_t index_of_min = 0, index_of_max = 0;
  for (std::size_t index = 0; index < map.size(); ++index) {
    if (map[index] < map[index_of_min]) index_of_min = index;
    if (map[index] > map[index_of_max]) index_of_max = index;
  }
  const std::vector<std::size_t> indices = validation_points(
      grid, system.size(), config.validate_points, kValidationBudget, index_of_min, index_of_max);
  std::vector<Vec3> points(indices.size());
  std::vector<float> values(indices.size());
  for (std::size_t n = 0; n < indices.size(); ++n) {
    const std::size_t index = indices[n];
    const auto i = static_cast<std::int64_t>(index % static_cast<std::size_t>(grid.nx()));
    const auto j = static_cast<std::int64_t>((index / static_cast<std::size_t>(grid.nx())) %
                                             static_cast<std::size_t>(grid.ny()));
    const auto k = static_cast<std::int64_t>(index / grid.plane_points());
    points[n] = grid.point(i, j, k);
    values[n] = map[index];
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

RunResult run_one(const RunConfig& config, const std::string& input, PotentialBackend& backend,
                  ProgressSink* progress) {
  const auto start = Clock::now();
  RunResult result;
  result.input = input;

  const auto read_start = Clock::now();
  const System system = io::read_atoms(input);
  const double read_seconds = seconds_since(read_start);
  result.atoms = system.size();
  log().info("{}: {} atoms, total charge {:+.4f} e", input, system.size(), system.total_charge());

  const GridSpec grid = make_grid(system, config.grid);
  log().info("grid: {}", grid.describe());
  check_fits_in_memory(map_bytes(grid), fmt::format("the {}-point map", grid.points()));

  // Decide every output path and refuse existing ones before spending time on the map.
  const bool single = config.inputs.size() == 1;
  std::string h5_path, dx_path;
  if (config.write_hdf5) {
    h5_path = single && !config.output.empty() ? config.output
                                               : default_output_path(input, config.output_dir, ".h5");
    io::check_output_path(h5_path, config.force);
  }
  if (config.write_dx) {
    dx_path = single && !config.dx_path.empty()
                  ? config.dx_path
                  : default_output_path(input, config.output_dir, config.dx_gzip ? ".dx.gz" : ".dx");
    io::check_output_path(dx_path, config.force);
  }

  MapMetadata& meta = result.metadata;
  meta.grid = grid;
  meta.physics = config.physics;
  meta.coulomb_factor = coulomb_factor(config.physics);

  backend.prepare(system, grid, config.physics);  // restarts backend.timings()
  std::vector<float> map(grid.points());
  result.evaluations = static_cast<double>(grid.points()) * static_cast<double>(system.size());
  if (progress) progress->begin(input, result.evaluations);
  const auto compute_start = Clock::now();
  StatsAccum accum;
  const std::int64_t step = planes_per_slab(grid, backend.slab_hint());
  for (std::int64_t z = 0; z < grid.nz(); z += step) {
    stop_if_interrupted();
    const Slab slab{z, std::min(step, grid.nz() - z)};
    accum = StatsAccum::combine(accum, backend.compute(slab, map.data() + static_cast<std::size_t>(z) * grid.plane_points()));
    if (progress)
      progress->update(static_cast<double>(grid.plane_points()) * static_cast<double>(z + slab.z_count) *
                       static_cast<double>(system.size()));
  }
  result.compute_seconds = seconds_since(compute_start);
  if (progress) progress->end();
  meta.stats = finalize(accum);
  if (meta.stats.nonfinite > 0)
    throw Error(fmt::format("{} of {} map values are not finite (a bug: the distance clamp "
                            "should prevent this); nothing was written", meta.stats.nonfinite,
                            meta.stats.count));

  double validate_seconds = 0.0;
  if (config.validate) {
    const auto validate_start = Clock::now();
    meta.validation = validate_map(config, backend, system, grid, map, meta.stats);
    validate_seconds = seconds_since(validate_start);
    const Validation& v = meta.validation;
    log().info("validation: {} {} points, max |error| {:.3e} ({:.3e} of max|V|), RMS error {:.3e}, "
               "tolerance {:.1e}: {}", v.all_points ? "all" : "sampled", v.points, v.max_abs_error,
               v.max_rel_error, v.rms_error, v.tolerance, v.passed ? "passed" : "FAILED");
    if (!v.passed)
      throw ValidationError(fmt::format("{}: validation failed: max relative error {:.3e} exceeds "
                                        "the tolerance {:.1e}; nothing was written", input,
                                        v.max_rel_error, v.tolerance));
  }

  const BackendTimings stages = backend.timings();
  Provenance& prov = meta.provenance;
  prov.version = fmt::format("{} (git {})", kVersion, kGitRevision);
  prov.command_line = config.command_line;
  prov.input_path = std::filesystem::absolute(input).string();
  prov.input_sha256 = system.source_sha256;
  prov.backend = backend.name();
  prov.kernel = backend.kernel_name();
  prov.reduction = backend.reduction_name();
  prov.device = backend.device_name();
  prov.hostname = host_name();
  prov.created = utc_now_iso8601();
  prov.timings = {{"read", read_seconds},
                  {"compute", result.compute_seconds},
                  {"upload", stages.upload},
                  {"kernels", stages.kernels},
                  {"download", stages.download},
                  {"statistics", stages.statistics},
                  {"validate", validate_seconds}};

  const auto write_start = Clock::now();
  OutputSet outputs;
  stop_if_interrupted();
  if (config.write_hdf5) {
    // The files store the stages finished before writing; the write time is in RunResult.
    io::write_hdf5(h5_path, map.data(), meta, system,
                   io::Hdf5Options{.force = config.force, .gzip_level = config.compression});
    outputs.add(h5_path);
  }
  if (config.write_dx) {
    stop_if_interrupted();
    io::write_opendx(dx_path, map.data(), meta, io::OpenDxOptions{.force = config.force, .gzip = config.dx_gzip});
    outputs.add(dx_path);
  }
  stop_if_interrupted();
  outputs.commit();
  result.write_seconds = seconds_since(write_start);
  result.outputs = outputs.paths();
  result.total_seconds = seconds_since(start);
  return result;
}

}  // namespace

void request_interrupt() noexcept { g_interrupt.store(true); }
bool interrupt_requested() noexcept { return g_interrupt.load(); }

DeviceChoice resolve_device(const std::string& device, const BackendOptions& options) {
  if (device == "cpu") return {BackendKind::CpuFast, 0};
  if (device == "auto") {
    // A CPU kernel name selects the CPU, so --kernel simd-avx2 works without --device cpu.
    for (const VariantInfo& variant : cpu_variants())
      if (variant.kind == VariantKind::Potential && variant.name == options.kernel)
        return {BackendKind::CpuFast, 0};
    if (cuda::cuda_available()) return {BackendKind::Cuda, options.device};
    log().info("no usable GPU ({}); using the CPU", cuda::cuda_unavailable_reason());
    return {BackendKind::CpuFast, 0};
  }
  if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
    int ordinal = 0;
    if (device != "cuda") {  // "cuda:N"; a bare "cuda:" is refused below
      const std::string digits = device.substr(5);
      if (digits.empty() || digits.size() > 4 ||
          !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw UsageError("--device: '" + device + "' is not cuda:N with N a device number");
      ordinal = std::stoi(digits);
    }
    if (!cuda::cuda_available())
      throw UsageError("--device " + device + ": " + cuda::cuda_unavailable_reason());
    const auto devices = cuda::cuda_devices();
    if (ordinal >= static_cast<int>(devices.size()))
      throw UsageError(fmt::format("--device {}: only {} CUDA device(s) visible", device, devices.size()));
    return {BackendKind::Cuda, ordinal};
  }
  throw UsageError("--device must be auto, cpu, cuda or cuda:N, got '" + device + "'");
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
  if (!config.output_dir.empty() && !std::filesystem::is_directory(config.output_dir))
    throw IoError("--output-dir " + config.output_dir + " is not a directory");

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

  const DeviceChoice choice = resolve_device(config.device, config.backend);
  BackendOptions options = config.backend;
  options.device = choice.ordinal;
  std::unique_ptr<PotentialBackend> backend = make_backend(choice.kind, options);
  log().info("backend: {} (kernel {}, reduction {}) on {}", backend->name(), backend->kernel_name(),
             backend->reduction_name(), backend->device_name());

  std::vector<RunResult> results;
  for (const std::string& input : config.inputs) {
    try {
      results.push_back(run_one(config, input, *backend, progress));
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
