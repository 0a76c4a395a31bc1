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

/// A job that is one result however many share it: by this process's workers (`alone`), or
/// by MPI ranks (`on_ranks`), whose rank 0 reports it.
template <class Alone, class OnRanks>
std::vector<RunResult> run_one_result(const RunConfig& config, const RunConfig& rank_config,
                                      ProgressSink* progress, Alone alone,
                                      [[maybe_unused]] OnRanks on_ranks) {
  RunResult result;
#ifdef DCS_HAVE_MPI
  if (pipeline::mpi_info().active) {
    pipeline::Workers workers = pipeline::make_workers_on_ranks(rank_config);
    pipeline::check_same_run_on_ranks(config, workers);
    log_workers(workers);
    result = on_ranks(workers);
    if (pipeline::mpi_info().rank != 0) return {};
  } else  // NOLINT(readability/braces): the branch below is the build without MPI too
#endif
  {
    pipeline::Workers workers = pipeline::make_workers(rank_config);
    log_workers(workers);
    result = alone(workers);
  }
  (void)config;
  if (progress != nullptr) progress->finished(result);
  return {std::move(result)};
}

/// One map averaged over a trajectory's frames (trajectory/).
std::vector<RunResult> run_trajectory_here(const RunConfig& config, const RunConfig& rank_config,
                                           ProgressSink* progress) {
  return run_one_result(
      config, rank_config, progress,
      [&](pipeline::Workers& workers) {
        pipeline::PlaneSharing alone;
        return pipeline::run_trajectory(rank_config, workers, progress, alone);
      },
      [&](pipeline::Workers& workers) {
#ifdef DCS_HAVE_MPI
        return pipeline::run_trajectory_on_ranks(rank_config, workers, progress);
#else
        (void)workers;
        return RunResult{};
#endif
      });
}

/// The potential at points of one atom file (points/).
std::vector<RunResult> run_points_here(const RunConfig& config, const RunConfig& rank_config,
                                       ProgressSink* progress) {
  return run_one_result(
      config, rank_config, progress,
      [&](pipeline::Workers& workers) {
        pipeline::PointSharing alone;
        return pipeline::run_points(rank_config, workers, progress, alone);
      },
      [&](pipeline::Workers& workers) {
#ifdef DCS_HAVE_MPI
        return pipeline::run_points_on_ranks(rank_config, workers, progress);
#else
        (void)workers;
        return RunResult{};
#endif
      });
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

  // The jobs are listed and the first one's atoms read while the devices start.
  pipeline::ModelCache cache;
  const std::vector<pipeline::Job> jobs = pipeline::make_jobs(config, cache);
  if (jobs.size() == 1 || !pipeline::mpi_info().active)   // a batch over ranks: job 0 may go
    pipeline::prefetch_first_atoms(config, jobs, cache);  // to another rank

#ifdef DCS_HAVE_MPI
  if (pipeline::mpi_info().active) {
    pipeline::Workers workers = pipeline::make_workers_on_ranks(rank_config);
    pipeline::check_same_run_on_ranks(config, workers);
    log_workers(workers);
    if (jobs.size() > 1) return pipeline::run_batch_on_ranks(rank_config, jobs, workers, cache);
    RunResult result =
        pipeline::run_map_on_ranks(rank_config, jobs.front(), workers, progress, &cache);
    if (pipeline::mpi_info().rank != 0) return {};
    return {std::move(result)};
  }
#endif
  pipeline::Workers workers = pipeline::make_workers(rank_config);
  log_workers(workers);
  return pipeline::run_batch(rank_config, jobs, workers, progress, cache);
}

}  // namespace dcs
