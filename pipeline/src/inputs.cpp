// Inputs: jobs, shards, reading one map's atoms (inputs.hpp).
#include "inputs.hpp"
#include "periodic_config.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <future>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/log.hpp"
#include "dcs/physics.hpp"
#include "dcs/timer.hpp"

namespace dcs {
namespace {

/// A SLURM_ARRAY_TASK_* variable: -1 when unset and not required.
long long slurm_variable(const char* name, bool required) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    if (!required) return -1;
    throw UsageError(
        fmt::format("--shard slurm: {} is not set (run it as a task of a Slurm job "
                    "array: sbatch --array=...)",
                    name));
  }
  char* end = nullptr;
  const long long number = std::strtoll(value, &end, 10);
  if (*end != '\0' || number < 0)
    throw UsageError(fmt::format("--shard slurm: {}='{}' is not a task number", name, value));
  return number;
}

/// This task's share from the Slurm job array's variables.
Shard slurm_shard() {
  const long long id = slurm_variable("SLURM_ARRAY_TASK_ID", true);
  const long long count = slurm_variable("SLURM_ARRAY_TASK_COUNT", true);
  const long long first = std::max(0LL, slurm_variable("SLURM_ARRAY_TASK_MIN", false));
  const long long step = std::max(1LL, slurm_variable("SLURM_ARRAY_TASK_STEP", false));
  if (id < first || (id - first) % step != 0 || (id - first) / step >= count)
    throw UsageError(fmt::format("--shard slurm: task {} is not one of the {} tasks {}, {}+{}, ...",
                                 id, count, first, first, step));
  return {false, (id - first) / step, count};
}

}  // namespace

Shard resolve_shard(const Shard& given) { return given.from_slurm ? slurm_shard() : given; }

std::vector<std::string> shard_inputs(const std::vector<std::string>& inputs, const Shard& given) {
  const Shard shard = resolve_shard(given);
  std::vector<std::uintmax_t> sizes(inputs.size(), 0);
  std::vector<std::size_t> order(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(inputs[i], error);
    sizes[i] = error ? 0 : size;
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  std::vector<bool> mine(inputs.size(), false);
  for (std::size_t k = static_cast<std::size_t>(shard.index); k < order.size();
       k += static_cast<std::size_t>(shard.count))
    mine[order[k]] = true;
  std::vector<std::string> selected;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (mine[i]) selected.push_back(inputs[i]);
  log().info("--shard {}: share {} of {}: {} of {} inputs", to_string(given), shard.index,
             shard.count, selected.size(), inputs.size());
  return selected;
}

}  // namespace dcs

namespace dcs::pipeline {
namespace {

io::ReadOptions read_options(const RunConfig& config) {
  // The parallel reader takes --threads (a rank: its share of the node), as the CPU backends do.
  return io::ReadOptions{.charges_as_given = config.input.charges_as_given,
                         .threads = config.compute.backend.threads};
}

}  // namespace

std::vector<Job> make_jobs(const RunConfig& config, ModelCache& cache) {
  std::vector<Job> jobs;
  for (const std::string& input : config.input.files) {
    if (config.input.models != ModelsMode::kEach) {
      jobs.emplace_back(input);
      continue;
    }
    std::vector<System> models;
    try {
      models = io::read_models(input, io::ModelCheck::kStructure, read_options(config));
    } catch (const InputError&) {
      jobs.emplace_back(input);  // its run reads it again and reports the error in its place
      continue;
    }
    log().info("{}: {} model(s), one map each", input, models.size());
    for (const System& model : models) jobs.emplace_back(input, model.model);
    if (cache.input.empty()) {
      cache.input = input;
      cache.models = std::move(models);
    }
  }
  return jobs;
}

void prefetch_first_atoms(const RunConfig& config, const std::vector<Job>& jobs,
                          ModelCache& cache) {
  if (config.input.models != ModelsMode::kFirst || jobs.empty()) return;
  // Regular files only: a FIFO's or a device's open() may wait forever, and a signal wakes
  // only the thread it lands on, so those are read on the caller's thread as before.
  std::error_code error;
  if (!std::filesystem::is_regular_file(jobs.front().input, error)) return;
  cache.prefetched_input = jobs.front().input;
  cache.prefetched =
      std::async(std::launch::async, [input = jobs.front().input, options = read_options(config)] {
        return io::read_atoms(input, options);
      });
}

namespace {

/// The first model of `job`'s file: the prefetched atoms when they are this file's.
System read_first_model(const RunConfig& config, const Job& job, ModelCache* cache) {
  if (cache != nullptr && cache->prefetched.valid() && cache->prefetched_input == job.input) {
    std::future<System> prefetched = std::move(cache->prefetched);
    return prefetched.get();  // rethrows the read's error here, in the map's place
  }
  return io::read_atoms(job.input, read_options(config));
}

/// --models each: the job's model, from `cache` when it holds the file, and the grid common to
/// every model of the file (unless --model-grid own).
System read_model(const RunConfig& config, const Job& job, ModelCache* cache,
                  std::optional<GridSpec>& common_grid) {
  ModelCache local;
  ModelCache& file = cache != nullptr ? *cache : local;
  if (file.input != job.input || file.models.empty()) {
    file.models = io::read_models(job.input, io::ModelCheck::kStructure, read_options(config));
    file.input = job.input;
    file.common_grid.reset();
  }
  if (job.model < 0)
    throw InternalError(
        fmt::format("--models each: the models of {} were not listed as jobs", job.input));
  const auto found = std::find_if(file.models.begin(), file.models.end(),
                                  [&](const System& m) { return m.model == job.model; });
  if (found == file.models.end())
    throw InputError(job.input, 0,
                     fmt::format("model {} is gone: the file changed while dcs ran", job.model));
  if (config.input.common_model_grid && file.models.size() > 1) {
    if (!file.common_grid)
      file.common_grid = make_grid(io::average_models(file.models), config.grid);
    common_grid = file.common_grid;
  }
  return *found;
}

}  // namespace

MapInput read_map_input(const RunConfig& config, const Job& job, ModelCache* cache) {
  MapInput map;
  map.input = job.input;
  map.model = job.model;
  const auto read_start = SteadyClock::now();
  std::optional<GridSpec> common_grid;
  switch (config.input.models) {
    case ModelsMode::kAverage: {
      const std::vector<System> models =
          io::read_models(job.input, io::ModelCheck::kSameAtoms, read_options(config));
      for (const System& m : models) map.averaged.push_back(m.model);
      map.system = io::average_models(models);
      break;
    }
    case ModelsMode::kEach: map.system = read_model(config, job, cache, common_grid); break;
    case ModelsMode::kFirst: map.system = read_first_model(config, job, cache); break;
  }
  apply_cell(config, job.input, map.system);
  map.read_seconds = seconds_since(read_start);
  const std::string which = config.input.models == ModelsMode::kAverage
                                ? fmt::format(" (mean of {} models)", map.system.model_count)
                            : config.input.models == ModelsMode::kEach
                                ? fmt::format(" model {}", job.model)
                                : std::string();
  log().info("{}{}: {} atoms, total charge {:+.4f} e", job.input, which, map.system.size(),
             map.system.total_charge());
  check_potential_bound(map.system,
                        config.physics);  // |V| stays far inside float32 (dcs/limits.hpp)
  map.grid = common_grid ? *common_grid : make_grid(map.system, config.grid);
  log().info("grid: {}{}", map.grid.describe(),
             common_grid ? " (common to every model of the file)" : "");
  return map;
}

ModelInfo model_info(const RunConfig& config, const MapInput& input) {
  ModelInfo info;
  info.mode = std::string(to_string(config.input.models));
  info.model = input.system.model;
  info.count = input.system.model_count;
  info.averaged = input.averaged;
  return info;
}

}  // namespace dcs::pipeline
