// run(): the top of the pipeline. Checks the configuration, selects this task's inputs, checks
// every output name, makes the workers, lists the maps and hands them to a driver: one map or a
// batch in this process (batch.cpp), or over MPI ranks (mpi/). docs/ARCHITECTURE.md has the map.
#include "dcs/run.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "batch.hpp"
#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "dcs/pipeline/mpi.hpp"
#include "devices.hpp"
#include "inputs.hpp"
#include "outputs.hpp"
#include "points/points_job.hpp"
#include "trajectory/trajectory_job.hpp"

#ifdef DCS_HAVE_MPI
#include "mpi/ranks.hpp"
#endif

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

/// One map averaged over a trajectory's frames (trajectory/), by this process or by MPI ranks.
std::vector<RunResult> run_trajectory_here(const RunConfig& config, const RunConfig& rank_config,
                                           ProgressSink* progress) {
  RunResult result;
#ifdef DCS_HAVE_MPI
  if (pipeline::mpi_info().active) {
    pipeline::Workers workers = pipeline::make_workers_on_ranks(rank_config);
    pipeline::check_same_run_on_ranks(config, workers);
    log_workers(workers);
    result = pipeline::run_trajectory_on_ranks(rank_config, workers, progress);
    if (pipeline::mpi_info().rank != 0) return {};
  } else  // NOLINT(readability/braces): the branch below is the build without MPI too
#endif
  {
    pipeline::Workers workers = pipeline::make_workers(rank_config);
    log_workers(workers);
    pipeline::PlaneSharing alone;
    result = pipeline::run_trajectory(rank_config, workers, progress, alone);
  }
  (void)config;
  if (progress != nullptr) progress->finished(result);
  return {std::move(result)};
}

/// The potential at points of one atom file (points/), by this process or by MPI ranks.
std::vector<RunResult> run_points_here(const RunConfig& config, const RunConfig& rank_config,
                                       ProgressSink* progress) {
  RunResult result;
#ifdef DCS_HAVE_MPI
  if (pipeline::mpi_info().active) {
    pipeline::Workers workers = pipeline::make_workers_on_ranks(rank_config);
    pipeline::check_same_run_on_ranks(config, workers);
    log_workers(workers);
    result = pipeline::run_points_on_ranks(rank_config, workers, progress);
    if (pipeline::mpi_info().rank != 0) return {};
  } else  // NOLINT(readability/braces): the branch below is the build without MPI too
#endif
  {
    pipeline::Workers workers = pipeline::make_workers(rank_config);
    log_workers(workers);
    pipeline::PointSharing alone;
    result = pipeline::run_points(rank_config, workers, progress, alone);
  }
  (void)config;
  if (progress != nullptr) progress->finished(result);
  return {std::move(result)};
}

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
  pipeline::on_every_rank([&] {
    check_config(given);
    if (config.trajectory || config.points) return pipeline::prepare_output_dir(config);
    if (config.shard) config.inputs = shard_inputs(given.inputs, *config.shard);
    if (config.inputs.empty()) return;
    pipeline::prepare_output_dir(config);
    pipeline::check_distinct_paths(config, given.inputs);
  });
  const RunConfig rank_config = pipeline::rank_local_config(config);
  if (config.trajectory) return run_trajectory_here(config, rank_config, progress);
  if (config.points) return run_points_here(config, rank_config, progress);
  if (config.inputs.empty()) return {};  // this shard has nothing to do

  pipeline::ModelCache cache;
#ifdef DCS_HAVE_MPI
  if (pipeline::mpi_info().active) {
    pipeline::Workers workers = pipeline::make_workers_on_ranks(rank_config);
    pipeline::check_same_run_on_ranks(config, workers);
    log_workers(workers);
    const std::vector<pipeline::Job> jobs = pipeline::make_jobs(config, cache);
    if (jobs.size() > 1) return pipeline::run_batch_on_ranks(rank_config, jobs, workers, cache);
    RunResult result =
        pipeline::run_map_on_ranks(rank_config, jobs.front(), workers, progress, &cache);
    if (pipeline::mpi_info().rank != 0) return {};
    return {std::move(result)};
  }
#endif
  pipeline::Workers workers = pipeline::make_workers(rank_config);
  log_workers(workers);
  const std::vector<pipeline::Job> jobs = pipeline::make_jobs(config, cache);
  return pipeline::run_batch(rank_config, jobs, workers, progress, cache);
}

}  // namespace dcs
