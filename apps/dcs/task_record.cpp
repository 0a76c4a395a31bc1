// Task records of a job array (task_record.hpp).
#include "task_record.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"

namespace dcs::app {
namespace {

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string unescaped(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char next = text[++i];
    out += next == 't' ? '\t' : next == 'n' ? '\n' : next;
  }
  return out;
}

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, '\t');) fields.push_back(unescaped(field));
  if (!line.empty() && line.back() == '\t') fields.emplace_back();
  return fields;
}

const char* status_of(const RunResult& r) {
  if (!r.attempted) return "not-attempted";
  if (!r.error.empty()) return "failed";
  return r.skipped ? "skipped" : "written";
}

/// One task's record as read back.
struct Task {
  long long index = 0, count = 0;
  bool interrupted = false;
  std::map<std::string, std::size_t> counts;  ///< by status
  std::vector<std::string> failures;          ///< "input: error"
};

Task read_task(const std::filesystem::path& path, long long index, long long count) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string(), 0, "cannot read this task record");
  Task task;
  task.index = index;
  task.count = count;
  std::string line;
  std::uint64_t number = 1;
  if (!std::getline(in, line) || !line.starts_with(fmt::format("# dcs task {}/{} ", index, count)))
    throw InputError(path.string(), 1, "not a dcs task record (no '# dcs task I/N' line)");
  task.interrupted = line.ends_with(" interrupted");
  while (std::getline(in, line)) {
    ++number;
    const std::vector<std::string> f = fields_of(line);
    static const std::vector<std::string> statuses{"written", "skipped", "failed", "not-attempted"};
    if (f.size() != 6 || std::find(statuses.begin(), statuses.end(), f[0]) == statuses.end())
      throw InputError(path.string(), number,
                       "expected status, input, model, outputs, seconds and "
                       "error separated by tabs");
    ++task.counts[f[0]];
    if (f[0] == "failed")
      task.failures.push_back(f[2] == "-1" ? fmt::format("{}: {}", f[1], f[5])
                                           : fmt::format("{} (model {}): {}", f[1], f[2], f[5]));
  }
  return task;
}

std::string counts_text(std::map<std::string, std::size_t> c) {
  return fmt::format("{} written, {} complete already, {} failed, {} not attempted", c["written"],
                     c["skipped"], c["failed"], c["not-attempted"]);
}

}  // namespace

std::string task_record_path(const std::string& dir, const Shard& shard) {
  const std::string name = fmt::format("dcs-task-{}-of-{}.tsv", shard.index, shard.count);
  return dir.empty() ? name : (std::filesystem::path(dir) / name).string();
}

void write_task_record(const std::string& dir, const Shard& shard,
                       const std::vector<RunResult>& results, bool interrupted) {
  std::string text = fmt::format("# dcs task {}/{} {}\n", shard.index, shard.count,
                                 interrupted ? "interrupted" : "complete");
  for (const RunResult& r : results)
    text += fmt::format("{}\t{}\t{}\t{}\t{:.3f}\t{}\n", status_of(r), escaped(r.input), r.model,
                        escaped(fmt::format("{}", fmt::join(r.outputs, ","))), r.total_seconds,
                        escaped(r.error));
  std::error_code error;  // a task without inputs has not made the directory yet
  if (!dir.empty()) std::filesystem::create_directories(dir, error);
  io::AtomicFile file(task_record_path(dir, shard), true);
  file.write(text.data(), text.size());
  file.commit();
}

int summarise_task_records(const std::string& dir) {
  const std::regex name(R"(dcs-task-(\d+)-of-(\d+)\.tsv)");
  std::map<long long, Task> tasks;
  long long count = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    std::smatch match;
    const std::string file = entry.path().filename().string();
    if (!std::regex_match(file, match, name)) continue;
    const long long index = std::stoll(match[1]), of = std::stoll(match[2]);
    if (count != 0 && of != count)
      throw UsageError(
          fmt::format("{}: task records of arrays of {} and {} tasks; keep one "
                      "array's records in a directory",
                      dir, count, of));
    count = of;
    tasks[index] = read_task(entry.path(), index, of);
  }
  if (error) throw UsageError(fmt::format("no task records in {}: {}", dir, error.message()));
  if (tasks.empty())
    throw UsageError(
        fmt::format("no task records (dcs-task-<I>-of-<N>.tsv) in {}: they are "
                    "written by dcs --shard into its --output-dir",
                    dir));
  std::map<std::string, std::size_t> total;
  std::vector<long long> missing;
  std::size_t interrupted = 0;
  for (long long index = 0; index < count; ++index) {
    const auto found = tasks.find(index);
    if (found == tasks.end()) {
      missing.push_back(index);
      continue;
    }
    Task& task = found->second;
    interrupted += task.interrupted ? 1 : 0;
    for (const auto& [status, n] : task.counts) total[status] += n;
    fmt::print("task {}/{}{}: {}\n", index, count, task.interrupted ? " (interrupted)" : "",
               counts_text(task.counts));
    for (const std::string& failure : task.failures) fmt::print("  failed: {}\n", failure);
  }
  if (!missing.empty()) fmt::print("tasks that have not reported: {}\n", fmt::join(missing, ", "));
  fmt::print("batch-summary: {} of {} tasks reported{}: {}\n",
             count - static_cast<long long>(missing.size()), count,
             interrupted > 0 ? fmt::format(" ({} interrupted)", interrupted) : std::string(),
             counts_text(total));
  const bool complete =
      missing.empty() && interrupted == 0 && total["failed"] == 0 && total["not-attempted"] == 0;
  return complete ? 0 : 1;
}

}  // namespace dcs::app
