// Batches in this process (batch.hpp).
#include "batch.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "dcs/log.hpp"
#include "map_job.hpp"
#include "outputs.hpp"

namespace dcs::pipeline {

RunResult failed_result(const Job& job, const Error& error) {
  RunResult failed;
  failed.input = job.input;
  failed.model = job.model;
  failed.error = error.what();
  failed.exit_code = static_cast<int>(error.exit_code());
  return failed;
}

RunResult not_attempted(const Job& job) {
  RunResult skipped;
  skipped.input = job.input;
  skipped.model = job.model;
  skipped.attempted = false;
  return skipped;
}

namespace {

/// The interruption of map `index` of a batch, saying what the maps before it left.
InterruptedError batch_interrupted(const RunConfig& config, const std::vector<Job>& jobs,
                                   std::size_t index) {
  const Job& job = jobs[index];
  const std::string label =
      job.model >= 0 ? fmt::format("{} (model {})", job.input, job.model) : job.input;
  const std::string partial = output_paths(config, job.input, job.model).store;
  std::error_code error;
  const std::string kept = std::filesystem::exists(partial, error)
                               ? fmt::format(" (its partial map is kept in {})", partial)
                               : std::string();
  return InterruptedError(fmt::format(
      "interrupted at map {} of {}, {}{}; the outputs of the {} map(s) before it are complete; run "
      "the same command with --resume to do the rest",
      index + 1, jobs.size(), label, kept, index));
}

}  // namespace

std::vector<RunResult> run_batch(const RunConfig& config, const std::vector<Job>& jobs,
                                 Workers& workers, ProgressSink* progress, ModelCache& cache) {
  LocalExecutor here;
  std::vector<RunResult> results;
  const bool batch = jobs.size() > 1;
  auto done = [&](RunResult result) {  // told as each map finishes
    results.push_back(std::move(result));
    if (progress) progress->finished(results.back());
  };
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    try {
      done(run_map(config, jobs[i], workers, here, progress, &cache));
    } catch (const InterruptedError&) {
      if (!batch) throw;
      throw batch_interrupted(config, jobs, i);
    } catch (const Error& error) {
      if (!batch) throw;
      log().error("{}", error.what());
      done(failed_result(jobs[i], error));
      if (config.input.keep_going) continue;
      for (std::size_t rest = i + 1; rest < jobs.size(); ++rest) done(not_attempted(jobs[rest]));
      break;
    }
  }
  return results;
}

}  // namespace dcs::pipeline
