// A batch over MPI ranks (ranks.hpp): each rank computes whole maps with its own devices, taking
// the next job (largest input first) when it is free; rank 0 gathers every job's result.
#include <mpi.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "../batch.hpp"
#include "../map_job.hpp"
#include "dcs/io/rank_agreement.hpp"
#include "dcs/log.hpp"
#include "dcs/pipeline/mpi.hpp"
#include "mpi_support.hpp"
#include "ranks.hpp"

namespace dcs::pipeline {
namespace {

/// The jobs, largest input first (rank 0's view of the sizes, so every rank has the same order).
std::vector<std::size_t> largest_first(const std::vector<Job>& jobs, MPI_Comm world) {
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (mpi_info().rank == 0) {
    std::vector<std::uintmax_t> sizes(order.size(), 0);
    for (std::size_t i = 0; i < order.size(); ++i) {
      std::error_code error;
      const std::uintmax_t size = std::filesystem::file_size(jobs[i].input, error);
      sizes[i] = error ? 0 : size;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  }
  MPI_Bcast(order.data(), static_cast<int>(order.size() * sizeof(std::size_t)), MPI_BYTE, 0, world);
  return order;
}

/// This rank's share: jobs from the dispenser until none is left (or a failure stops the batch).
std::vector<RunResult> run_my_jobs(const RunConfig& config, const std::vector<Job>& jobs,
                                   Workers& workers, ModelCache& cache, MPI_Comm world) {
  const std::vector<std::size_t> order = largest_first(jobs, world);
  LocalExecutor here;
  std::vector<RunResult> mine;
  std::exception_ptr interrupted;
  {
    Dispenser dispenser(world, order.size());
    while (const std::optional<std::size_t> k = dispenser.next()) {
      const Job& job = jobs[order[*k]];
      try {
        mine.push_back(run_map(config, job, workers, here, nullptr, &cache));
      } catch (const InterruptedError&) {
        interrupted = std::current_exception();
        dispenser.stop();
        break;
      } catch (const Error& error) {
        mine.push_back(failed_result(job, error));
        log().error("{}", error.what());
        if (!config.input.keep_going) dispenser.stop();
      }
      mine.back().rank = mpi_info().rank;
    }
  }
  io::agree(world, interrupted);
  return mine;
}

std::string clean(std::string text) {
  std::replace(text.begin(), text.end(), '\t', ' ');
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

/// One line per result: rank, outcome, exit code, seconds, model, input, outputs, error
/// (tab-separated; tabs and newlines inside are replaced, outputs joined by \x1f).
std::string to_lines(const std::vector<RunResult>& results) {
  std::string lines;
  for (const RunResult& r : results)
    lines += fmt::format("{}\t{}\t{}\t{:.6f}\t{}\t{}\t{}\t{}\n", r.rank, r.skipped ? 1 : 0,
                         r.exit_code, r.total_seconds, r.model, clean(r.input),
                         clean(fmt::format("{}", fmt::join(r.outputs, "\x1f"))), clean(r.error));
  return lines;
}

RunResult from_line(const std::string& line) {
  std::vector<std::string> field;
  std::size_t f = 0;
  for (int n = 0; n < 7; ++n) {
    const std::size_t tab = line.find('\t', f);
    field.push_back(line.substr(f, tab - f));
    f = tab + 1;
  }
  field.push_back(line.substr(f));
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
  return r;
}

}  // namespace

std::vector<RunResult> run_batch_on_ranks(const RunConfig& config, const std::vector<Job>& jobs,
                                          Workers& workers, ModelCache& cache) {
  const MPI_Comm world = MPI_COMM_WORLD;
  const std::vector<std::string> all =
      io::all_gather(world, to_lines(run_my_jobs(config, jobs, workers, cache, world)));
  std::vector<RunResult> results;
  if (mpi_info().rank != 0) return results;
  std::map<std::pair<std::string, long long>, RunResult> by_job;
  for (const std::string& text : all)
    for (std::size_t begin = 0; begin < text.size();) {
      const std::size_t end = text.find('\n', begin);
      RunResult r = from_line(text.substr(begin, end - begin));
      by_job[{r.input, r.model}] = std::move(r);
      begin = end + 1;
    }
  for (const Job& job : jobs) {  // in the order given
    auto found = by_job.find({job.input, job.model});
    results.push_back(found != by_job.end() ? std::move(found->second) : not_attempted(job));
  }
  return results;
}

}  // namespace dcs::pipeline
