// The `dcs` command line (cli.hpp): the subcommand table, logging, and the map run.
#include "cli.hpp"

#include <unistd.h>

#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "bench_command.hpp"
#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "dcs/pipeline/mpi.hpp"
#include "dcs/version.hpp"
#include "listing.hpp"
#include "preview.hpp"
#include "progress.hpp"
#include "run_options.hpp"
#include "signals.hpp"
#include "summary.hpp"

#ifdef DCS_HAVE_MPI
#include "dcs/io/parallel_store.hpp"
#endif

namespace dcs::app {
namespace {

void setup_logging(int verbosity, bool quiet) {
  spdlog::logger& logger = log();  // the library's logger (stderr, created on first use)
  const pipeline::MpiInfo& mpi = pipeline::mpi_info();
  // Several MPI ranks: each line names its rank; only rank 0 says what goes well (-v: all).
  logger.set_pattern(mpi.size > 1 ? fmt::format("[dcs rank {}] %^%l%$: %v", mpi.rank) : "[dcs] %^%l%$: %v");
  spdlog::level::level_enum level = spdlog::level::info;
  if (quiet || (mpi.rank > 0 && verbosity == 0)) level = spdlog::level::warn;
  if (verbosity >= 1) level = spdlog::level::debug;
  if (verbosity >= 2) level = spdlog::level::trace;
  logger.set_level(level);
}

std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-_=./:,+@%") == std::string::npos)
    return arg;
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// The subcommands besides the map run.
struct Subcommands {
  CLI::App* kernels = nullptr;
  CLI::App* devices = nullptr;
  CLI::App* bench = nullptr;
  CLI::App* preview = nullptr;
  BenchCommand bench_options;
  PreviewCommand preview_options;
};

void add_subcommands(CLI::App& app, Subcommands& sub) {
  sub.kernels = app.add_subcommand("kernels", "List potential kernels and reductions, one line each");
  sub.devices = app.add_subcommand("devices", "List CUDA devices and the CPU");
  sub.bench = app.add_subcommand("bench", "Measure throughput (results under bench/results/)");
  BenchCommand& bench = sub.bench_options;
  sub.bench->add_flag("--cpu", bench.cpu, "CPU backends");
  sub.bench->add_flag("--potential", bench.potential, "CUDA potential kernels vs the rsqrt ceiling");
  sub.bench->add_flag("--reductions", bench.reductions, "CUDA reductions vs copy and CUB");
  sub.bench->add_option("--molecule", bench.molecule, "End-to-end split of a real run on this file")
      ->check(CLI::ExistingFile);
  sub.bench->add_option("--sizes", bench.options.grid_sizes, "Cubic grid edges (points)");
  sub.bench->add_option("--atom-counts", bench.options.atom_counts, "Atom counts");
  sub.bench->add_option("--kernel", bench.options.kernels, "Only these variants");
  sub.bench->add_option("--repetitions", bench.options.repetitions, "Timed repetitions (median)")
      ->check(CLI::PositiveNumber);
  sub.bench->add_option("--results-dir", bench.results_dir, "Where the Markdown results go")->capture_default_str();
  sub.bench->add_option("--device-ordinal", bench.options.device, "CUDA device");
  sub.bench->add_option("--threads,-j", bench.options.threads, "CPU threads (0: all)");
  sub.preview = app.add_subcommand(
      "preview", "Render slices of a map to PNG, coloured by |V| just outside the molecule "
                 "(python3 + matplotlib)");
  PreviewCommand& preview = sub.preview_options;
  sub.preview->add_option("map", preview.input, "dcs HDF5 map")->required()->check(CLI::ExistingFile);
  sub.preview->add_option("-o,--output", preview.output, "PNG path (default <map stem>.png)");
  sub.preview->add_option("--percentile", preview.percentile,
                          "Colour limits: ±this percentile of |V| (on the shell, or the map)")
      ->capture_default_str()->check(CLI::Range(1.0, 100.0));
  sub.preview->add_option("--view", preview.view, "surface: limits from the solvent-accessible "
                          "shell, atoms masked; centre: central slices, limits over the map")
      ->capture_default_str()->check(CLI::IsMember({"surface", "centre"}));
  sub.preview->add_option("--slice", preview.slices, "A plane to draw, e.g. z=12.5 (Å; repeatable; "
                          "default: the three through the centre)")->allow_extra_args(false);
  sub.preview->add_option("--probe", preview.probe, "Solvent probe radius (Å): the shell starts at "
                          "atom radius + probe")->capture_default_str()->check(CLI::Range(0.0, 100.0));
  sub.preview->add_option("--shell", preview.shell, "Shell width (Å)")
      ->capture_default_str()->check(CLI::Range(0.01, 100.0));
  sub.preview->add_flag("--force,-f", preview.force, "Overwrite the PNG");
}

/// The subcommand given, if any: its exit status.
std::optional<int> run_subcommand(Subcommands& sub, const std::string& command_line) {
  if (*sub.kernels) return list_kernels();
  if (*sub.devices) return list_devices();
  if (*sub.preview) return run_preview(sub.preview_options);
  if (*sub.bench) {
    sub.bench_options.command_line = command_line;
    sub.bench_options.options.threads = capped_threads(sub.bench_options.options.threads, "--threads");
    return run_bench(sub.bench_options);
  }
  return std::nullopt;
}

/// A map run (or a batch): the results printed, the exit status of the first failure.
int run_maps(const RunConfig& config, bool show_progress, bool quiet) {
  install_signal_handlers();
  ConsoleProgress progress(isatty(STDERR_FILENO) != 0, 10.0);
  const std::vector<RunResult> results = run(config, show_progress ? &progress : nullptr);
  int exit_code = 0;
  for (const RunResult& result : results) {
    if (!quiet || !result.error.empty()) print_summary(result);  // -q: failures only
    if (result.exit_code != 0 && exit_code == 0) exit_code = result.exit_code;
  }
  if (results.size() > 1) print_batch_summary(results, config.keep_going);
  return exit_status(exit_code);
}

/// The exit status of a failed command, after saying why.
int report_failure(const Error& error) {
#ifdef DCS_HAVE_MPI
  // Another rank's failure: rank 0 reports it, the rank where it happened said what it was.
  if (dynamic_cast<const io::RankFailure*>(&error) != nullptr && pipeline::mpi_info().rank != 0)
    return exit_status(static_cast<int>(error.exit_code()));
#endif
  log().error("{}", error.what());
  return exit_status(static_cast<int>(error.exit_code()));
}

}  // namespace

std::string quoted_command_line(int argc, char** argv) {
  std::string line;
  for (int index = 0; index < argc; ++index)
    line += (index ? " " : "") + shell_quote(argv[index]);
  return line;
}

int main_entry(int argc, char** argv, RunConfig* parse_only) {
  CLI::App app{"dcs: electrostatic potential maps by direct Coulomb summation.\n"
               "  dcs --atoms mol.pqr --grid 256          writes mol.h5 (kT/e at 298.15 K)\n"
               "  dcs --atoms mol.pqr --spacing 0.5 --dx mol.dx\n"
               "  dcs kernels | dcs devices | dcs bench | dcs preview mol.h5 -o mol.png",
               "dcs"};
  app.set_version_flag("--version", fmt::format("dcs {} (git {})", kVersion, kGitRevision));
  app.footer("Exit status: 0 success, 1 runtime failure (CUDA, I/O), 2 usage error, 3 bad input file,\n"
             "4 --validate above tolerance, 70 internal error (a bug), 130/143 interrupted.\n"
             "A failed run leaves no output file.");
  RunOptions options;
  add_run_options(app, options);
  bool no_progress = false, quiet = false;
  int verbosity = 0;
  app.add_flag("--verbose,-v", verbosity, "More log output (-vv: trace)")->group("Logging");
  app.add_flag("--quiet,-q", quiet, "Only warnings and errors")->group("Logging");
  app.add_flag("--no-progress", no_progress, "No progress line or progress log lines")->group("Logging");
  Subcommands sub;
  add_subcommands(app, sub);
  app.require_subcommand(0, 1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::ostringstream unprinted;  // parse_only: formatted (--help too) but not printed
    const int code = parse_only ? app.exit(error, unprinted, unprinted) : app.exit(error);
    return code == 0 ? 0 : static_cast<int>(ExitCode::kUsageError);
  }
  // MPI (the MPI build under mpirun/srun) starts before anything logs, for a map run only.
  struct MpiGuard {
    ~MpiGuard() { pipeline::mpi_stop(); }
  } mpi_guard;
  if (app.get_subcommands().empty()) {
    try {
      pipeline::mpi_start();
    } catch (const Error& error) {
      std::cerr << "dcs: " << error.what() << "\n";
      return static_cast<int>(ExitCode::kRuntimeError);
    }
  }
  setup_logging(verbosity, quiet);

  try {
    if (parse_only && !app.get_subcommands().empty()) return 0;
    if (const std::optional<int> status = run_subcommand(sub, quoted_command_line(argc, argv))) return *status;
    if (options.config.inputs.empty() && !pipeline::mpi_info().active) {
      std::cerr << "dcs: --atoms is required (see dcs --help)\n";
      return static_cast<int>(ExitCode::kUsageError);
    }
    RunConfig config;
    pipeline::on_every_rank([&] {
      if (options.config.inputs.empty()) throw UsageError("--atoms is required (see dcs --help)");
      config = make_run_config(app, options, quoted_command_line(argc, argv));
    });
    if (parse_only) {
      *parse_only = std::move(config);
      return 0;
    }
    return run_maps(config, !no_progress && !quiet, quiet);
  } catch (const Error& error) {
    return report_failure(error);
  } catch (const std::bad_alloc&) {
    log().error("out of memory");
    return static_cast<int>(ExitCode::kRuntimeError);
  } catch (const std::exception& error) {
    log().error("unexpected error: {}", error.what());
    return static_cast<int>(ExitCode::kRuntimeError);
  }
}

}  // namespace dcs::app
