#include "bench_command.hpp"

#include <unistd.h>

#include <cctype>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/cuda_bench.hpp"
#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "dcs/parallel.hpp"
#include "dcs/run.hpp"
#include "dcs/version.hpp"

namespace dcs::app {
namespace {

std::string today_utc(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[40];
  std::strftime(buffer, sizeof buffer, format, &tm);
  return buffer;
}

std::string slug(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown" : out;
}

/// The end-to-end split of one real run: read, transfer, kernels, statistics, write.
BenchTable end_to_end(const BenchCommand& command) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("dcs-bench-{}", getpid());
  std::filesystem::create_directories(dir);
  RunConfig config;
  config.input.files = {command.molecule};
  config.output.dir = dir.string();
  const std::int64_t n =
      command.options.grid_sizes.empty() ? 256 : command.options.grid_sizes.front();
  config.grid.counts = {{n, n, n}};
  config.output.force = true;
  BenchTable table;
  table.name = "end_to_end";
  table.columns = {"stage", "seconds", "share"};
  std::vector<RunResult> results;
  try {
    results = run(config);
  } catch (...) {
    std::filesystem::remove_all(dir);
    throw;
  }
  std::filesystem::remove_all(dir);
  const RunResult& r = results.front();
  table.title = fmt::format("End-to-end run: {} ({} atoms), {}^3 grid, backend {} / {} on {}",
                            command.molecule, r.atoms, n, r.metadata.provenance.backend,
                            r.metadata.provenance.kernel, r.metadata.provenance.device);
  for (const auto& [stage, seconds] : r.metadata.provenance.timings)
    table.rows.push_back({stage, fmt::format("{:.4f}", seconds),
                          fmt::format("{:.1f}%", 100.0 * seconds / r.total_seconds)});
  table.rows.push_back({"write", fmt::format("{:.4f}", r.write_seconds),
                        fmt::format("{:.1f}%", 100.0 * r.write_seconds / r.total_seconds)});
  table.rows.push_back({"total (wall)", fmt::format("{:.4f}", r.total_seconds), "100%"});
  table.notes.push_back(
      "compute = upload + kernels + statistics + download (+ host overhead); "
      "the stages are measured inside the backend with events or clocks.");
  return table;
}

}  // namespace

int run_bench(const BenchCommand& command) {
  const bool gpu = cuda::cuda_available();
  BenchCommand c = command;
  if (!c.cpu && !c.potential && !c.reductions && c.molecule.empty()) {
    c.cpu = !gpu;
    c.potential = c.reductions = gpu;
  }
  if ((c.potential || c.reductions) && !gpu)
    throw UsageError("dcs bench --potential/--reductions need a GPU: " +
                     cuda::cuda_unavailable_reason());

  std::vector<BenchTable> tables;
  if (c.cpu)
    for (auto& t : benchmark_cpu_backends(c.options)) tables.push_back(std::move(t));
  if (c.potential)
    for (auto& t : cuda::benchmark_potential_kernels(c.options)) tables.push_back(std::move(t));
  if (c.reductions)
    for (auto& t : cuda::benchmark_reductions(c.options)) tables.push_back(std::move(t));
  if (!c.molecule.empty()) tables.push_back(end_to_end(c));

  std::string device =
      gpu && (c.potential || c.reductions || !c.molecule.empty())
          ? cuda::cuda_devices().at(static_cast<std::size_t>(c.options.device)).name
          : cpu_model_name();
  std::string report = fmt::format(
      "# dcs bench, {}\n\n- device: {}\n- cpu: {} ({} hardware threads)\n- date: {}\n- dcs: {} "
      "(git {})\n"
      "- command: `{}`\n\n",
      today_utc("%Y-%m-%d"), device, cpu_model_name(), resolve_threads(0),
      today_utc("%Y-%m-%dT%H:%M:%SZ"), kVersion, kGitRevision, c.command_line);
  for (const BenchTable& table : tables) report += to_markdown(table);
  fmt::print("{}", report);

  if (!c.results_dir.empty()) {
    std::filesystem::create_directories(c.results_dir);
    std::string what = c.cpu ? "cpu" : "";
    if (c.potential) what += std::string(what.empty() ? "" : "-") + "potential";
    if (c.reductions) what += std::string(what.empty() ? "" : "-") + "reductions";
    if (!c.molecule.empty()) what += std::string(what.empty() ? "" : "-") + "end-to-end";
    const auto path = std::filesystem::path(c.results_dir) /
                      fmt::format("{}_{}_{}.md", today_utc("%Y-%m-%d"), slug(device), what);
    std::ofstream out(path);
    out << report;
    if (!out) throw IoError("cannot write " + path.string());
    log().info("results written to {}", path.string());
  }
  return 0;
}

}  // namespace dcs::app
