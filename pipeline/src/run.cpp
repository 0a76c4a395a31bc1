// run(): the top of the pipeline. Checks the configuration, selects this task's inputs, checks
// every output name, picks the executor (this process, or MPI ranks: executor.hpp) and the job
// kind from a table, makes the workers and runs the job with them. docs/ARCHITECTURE.md has
// the map.
#include "dcs/run.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <iterator>
#include <memory>

#include <fmt/format.h>

#include "batch.hpp"
#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "devices.hpp"
#include "executor.hpp"
#include "inputs.hpp"
#include "outputs.hpp"
#include "points/points_job.hpp"
#include "trajectory/trajectory_job.hpp"

namespace dcs {
namespace {

void log_workers(pipeline::Workers& workers) {
  log().info("backend: {} (kernel {}, reduction {}) on {}", workers.first().name(),
             workers.first().kernel_name(), workers.first().reduction_name(),
             workers.list.size() == 1 ? workers.first().device_name()
                                      : fmt::format("{} devices", workers.list.size()));
  for (std::size_t w = 0; workers.list.size() > 1 && w < workers.list.size(); ++w)
    log().info("  worker {}: {}", w, workers.list[w]->device_name());
}

/// What a job kind does once the workers exist (with the executor that spreads its work).
using JobRun =
    std::function<std::vector<RunResult>(pipeline::Executor&, pipeline::Workers&, ProgressSink*)>;

/// A job that is one result however many share it; the leader reports it.
template <class Job>
JobRun one_result(const RunConfig& rank_config, Job job) {
  return [&rank_config, job](pipeline::Executor& executor, pipeline::Workers& workers,
                             ProgressSink* progress) -> std::vector<RunResult> {
    RunResult result = job(rank_config, workers, progress, executor);
    if (!executor.leads()) return {};
    if (progress != nullptr) progress->finished(result);
    return {std::move(result)};
  };
}

/// The maps of atom files (map_job.cpp, batch.cpp): listed, and the first one's atoms read,
/// while the devices start. Nothing to do (an empty shard): no run.
JobRun start_maps(const RunConfig& config, const RunConfig& rank_config,
                  pipeline::Executor& chosen) {
  if (config.input.files.empty()) return {};
  auto cache = std::make_shared<pipeline::ModelCache>();
  auto jobs =
      std::make_shared<const std::vector<pipeline::Job>>(pipeline::make_jobs(config, *cache));
  if (jobs->size() == 1 || !chosen.on_ranks())  // a batch over ranks: job 0 may go to another
    pipeline::prefetch_first_atoms(config, *jobs, *cache);  // rank
  return [&rank_config, cache, jobs](pipeline::Executor& executor, pipeline::Workers& workers,
                                     ProgressSink* progress) -> std::vector<RunResult> {
    return pipeline::run_maps(rank_config, *jobs, workers, executor, progress, *cache);
  };
}

/// The job kinds: the first whose test takes the run starts it (before the workers exist).
/// gpu_workers: backends per GPU where --gpu-workers does not say. A trajectory's frames are
/// whole units, each prepared on the host and downloaded whole: a second worker a GPU runs its
/// kernels while the first prepares the next frame (the maps are the same either way).
struct JobKind {
  bool (*takes)(const RunConfig&);
  JobRun (*start)(const RunConfig& config, const RunConfig& rank_config, pipeline::Executor&);
  unsigned gpu_workers;
};

const JobKind kJobKinds[] = {
    // One map averaged over a trajectory's frames (trajectory/).
    {[](const RunConfig& c) { return c.trajectory.has_value(); },
     [](const RunConfig&, const RunConfig& rank_config, pipeline::Executor&) {
       return one_result(rank_config, pipeline::run_trajectory);
     },
     2},
    // The potential at points of one atom file (points/).
    {[](const RunConfig& c) { return c.points.has_value(); },
     [](const RunConfig&, const RunConfig& rank_config, pipeline::Executor&) {
       return one_result(rank_config, pipeline::run_points);
     },
     1},
    // Maps of atom files, one or a batch.
    {[](const RunConfig&) { return true; }, start_maps, 1},
};

}  // namespace

std::vector<RunResult> run_checked(const RunConfig& given, ProgressSink* progress);

std::vector<RunResult> run(const RunConfig& config, ProgressSink* progress) {
  try {
    return run_checked(config, progress);
  } catch (const std::filesystem::filesystem_error& error) {
    // A path the file system refuses (too long, a loop of links, ...): an I/O error naming it.
    throw IoError(fmt::format("{}: {}", error.path1().string(), error.code().message()));
  }
}

std::vector<RunResult> run_checked(const RunConfig& given, ProgressSink* progress) {
  RunConfig config = given;
  const std::unique_ptr<pipeline::Executor> executor = pipeline::make_executor();
  executor->together([&] {
    check_config(given);
    if (config.trajectory || config.points) return pipeline::prepare_output_dir(config.output);
    if (config.input.shard)
      config.input.files = shard_inputs(given.input.files, *config.input.shard);
    if (config.input.files.empty()) return;
    pipeline::prepare_output_dir(config.output);
    pipeline::check_distinct_paths(config, given.input.files);
  });
  const RunConfig rank_config = pipeline::rank_local_config(config);
  const JobKind& kind = *std::find_if(std::begin(kJobKinds), std::end(kJobKinds),
                                      [&](const JobKind& k) { return k.takes(config); });
  const JobRun job = kind.start(config, rank_config, *executor);
  if (!job) return {};  // this shard has nothing to do
  RunConfig worker_config = rank_config;
  if (worker_config.compute.gpu_workers == 0) worker_config.compute.gpu_workers = kind.gpu_workers;
  pipeline::Workers workers = pipeline::make_workers_with(*executor, worker_config);
  pipeline::check_same_run(*executor, config, workers);
  log_workers(workers);
  return job(*executor, workers, progress);
}

}  // namespace dcs
