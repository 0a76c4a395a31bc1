// The maps of a run (batch.hpp).
#include "batch.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <numeric>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "map_job.hpp"
#include "outputs.hpp"

namespace dcs::pipeline {
namespace {

/// A job's result and its place among the jobs given.
struct Done {
  std::size_t job = 0;
  RunResult result;
};

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

/// The interruption of job `index`, saying what was left: its partial map, and which outputs
/// are complete (alone: the `done` maps before it; over ranks: those the ranks finished).
InterruptedError batch_interrupted(const RunConfig& config, const std::vector<Job>& jobs,
                                   std::size_t index, std::size_t done, bool on_ranks) {
  const Job& job = jobs[index];
  const std::string label =
      job.model >= 0 ? fmt::format("{} (model {})", job.input, job.model) : job.input;
  const std::string partial = output_paths(config, job.input, job.model).store;
  std::error_code error;
  const std::string kept = std::filesystem::exists(partial, error)
                               ? fmt::format(" (its partial map is kept in {})", partial)
                               : std::string();
  const std::string before =
      on_ranks ? "the maps the ranks finished" : fmt::format("the {} map(s) before it", done);
  return InterruptedError(fmt::format(
      "interrupted at map {} of {}, {}{}; the outputs of {} are complete; run the same command "
      "with --resume to do the rest",
      index + 1, jobs.size(), label, kept, before));
}

/// The order the jobs are dealt in: as given alone; over ranks the largest input first (rank
/// 0's view of the sizes, so every rank has the same order), so the last maps dealt are short.
std::vector<std::size_t> dealing_order(const std::vector<Job>& jobs, Executor& executor) {
  std::vector<std::size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (!executor.on_ranks()) return order;
  if (executor.leads()) {
    std::vector<std::uintmax_t> sizes(order.size(), 0);
    for (std::size_t i = 0; i < order.size(); ++i) {
      std::error_code error;
      const std::uintmax_t size = std::filesystem::file_size(jobs[i].input, error);
      sizes[i] = error ? 0 : size;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  }
  executor.broadcast(order.data(), order.size() * sizeof(std::size_t));
  return order;
}

std::string clean(std::string text) {
  std::replace(text.begin(), text.end(), '\t', ' ');
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

/// One line per result: job, rank, outcome, exit code, seconds, model, input, outputs, error
/// (tab-separated; tabs and newlines inside are replaced, outputs joined by \x1f).
std::string to_lines(const std::vector<Done>& done) {
  std::string lines;
  for (const auto& [job, r] : done)
    lines += fmt::format("{}\t{}\t{}\t{}\t{:.6f}\t{}\t{}\t{}\t{}\n", job, r.rank, r.skipped ? 1 : 0,
                         r.exit_code, r.total_seconds, r.model, clean(r.input),
                         clean(fmt::format("{}", fmt::join(r.outputs, "\x1f"))), clean(r.error));
  return lines;
}

Done from_line(const std::string& line) {
  std::vector<std::string> field;
  std::size_t f = 0;
  for (int n = 0; n < 8; ++n) {
    const std::size_t tab = line.find('\t', f);
    field.push_back(line.substr(f, tab - f));
    f = tab + 1;
  }
  field.push_back(line.substr(f));
  Done done;
  done.job = std::stoull(field[0]);
  RunResult& r = done.result;
  r.rank = std::stoi(field[1]);
  r.skipped = field[2] == "1";
  r.exit_code = std::stoi(field[3]);
  r.total_seconds = std::stod(field[4]);
  r.model = std::stoll(field[5]);
  r.input = field[6];
  for (std::size_t b = 0; !field[7].empty() && b <= field[7].size();) {
    const std::size_t sep = field[7].find('\x1f', b);
    r.outputs.push_back(field[7].substr(b, sep == std::string::npos ? std::string::npos : sep - b));
    b = sep == std::string::npos ? field[7].size() + 1 : sep + 1;
  }
  r.error = field[8];
  return done;
}

/// Collective: every participant's results on the leader (as lines over ranks, whole alone).
std::vector<Done> gather_results(Executor& executor, std::vector<Done> mine) {
  if (!executor.on_ranks()) return mine;
  std::vector<Done> all;
  for (const std::string& text : executor.gather(to_lines(mine)))
    for (std::size_t begin = 0; begin < text.size();) {
      const std::size_t end = text.find('\n', begin);
      all.push_back(from_line(text.substr(begin, end - begin)));
      begin = end + 1;
    }
  return all;
}

/// A batch: this participant's maps, dealt until none is left or a failure stops the dealing.
std::vector<Done> run_dealt(const RunConfig& config, const std::vector<Job>& jobs, Workers& workers,
                            Executor& executor, ProgressSink* told, ModelCache& cache) {
  const std::vector<std::size_t> order = dealing_order(jobs, executor);
  LocalExecutor alone;  // each map is computed whole by this participant's workers
  std::vector<Done> mine;
  std::exception_ptr interrupted;
  {
    const std::unique_ptr<Dealer> dealer = executor.deal(order.size());
    while (const std::optional<std::size_t> k = dealer->next()) {
      const std::size_t i = order[*k];
      try {
        mine.push_back({i, run_map(config, jobs[i], workers, alone, told, &cache)});
      } catch (const InterruptedError&) {
        interrupted = std::make_exception_ptr(
            batch_interrupted(config, jobs, i, mine.size(), executor.on_ranks()));
        dealer->stop();
        break;
      } catch (const Error& error) {
        log().error("{}", error.what());
        mine.push_back({i, failed_result(jobs[i], error)});
        if (!config.input.keep_going) dealer->stop();
      }
      if (executor.on_ranks()) mine.back().result.rank = executor.rank();
      if (told != nullptr) told->finished(mine.back().result);
    }
  }
  executor.together([&] {
    if (interrupted) std::rethrow_exception(interrupted);
  });
  return mine;
}

}  // namespace

std::vector<RunResult> run_maps(const RunConfig& config, const std::vector<Job>& jobs,
                                Workers& workers, Executor& executor, ProgressSink* progress,
                                ModelCache& cache) {
  ProgressSink* told = executor.on_ranks() ? nullptr : progress;  // ranks print at the end
  if (jobs.size() == 1) {  // one map, shared by every participant
    RunResult result = run_map(config, jobs.front(), workers, executor, progress, &cache);
    if (!executor.leads()) return {};
    if (told != nullptr) told->finished(result);
    return {std::move(result)};
  }
  std::vector<Done> all =
      gather_results(executor, run_dealt(config, jobs, workers, executor, told, cache));
  if (!executor.leads()) return {};
  std::vector<std::optional<RunResult>> by_job(jobs.size());
  for (Done& done : all) by_job[done.job] = std::move(done.result);
  std::vector<RunResult> results;
  for (std::size_t i = 0; i < jobs.size(); ++i) {  // in the order given
    if (by_job[i]) {
      results.push_back(std::move(*by_job[i]));
      continue;
    }
    results.push_back(not_attempted(jobs[i]));
    if (told != nullptr) told->finished(results.back());
  }
  return results;
}

}  // namespace dcs::pipeline
