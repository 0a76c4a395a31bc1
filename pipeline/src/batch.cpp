// Batches in this process (batch.hpp).
#include "batch.hpp"

#include "dcs/log.hpp"
#include "map_job.hpp"

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

std::vector<RunResult> run_batch(const RunConfig& config, const std::vector<Job>& jobs,
                                 Workers& workers, ProgressSink* progress, ModelCache& cache) {
  LocalExecutor here;
  std::vector<RunResult> results;
  const bool batch = jobs.size() > 1;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    try {
      results.push_back(run_map(config, jobs[i], workers, here, progress, &cache));
    } catch (const InterruptedError&) {
      throw;
    } catch (const Error& error) {
      if (!batch) throw;
      log().error("{}", error.what());
      results.push_back(failed_result(jobs[i], error));
      if (config.keep_going) continue;
      for (std::size_t rest = i + 1; rest < jobs.size(); ++rest) results.push_back(not_attempted(jobs[rest]));
      break;
    }
  }
  return results;
}

}  // namespace dcs::pipeline
