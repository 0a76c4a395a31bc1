// The `dcs` command line (cli.hpp): the subcommand table, logging, and the map run.
#include "cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "bench_command.hpp"
#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "dcs/pipeline/mpi.hpp"
#include "dcs/spelling.hpp"
#include "dcs/version.hpp"
#include "listing.hpp"
#include "preview.hpp"
#include "progress_line.hpp"
#include "run_options.hpp"
#include "signals.hpp"
#include "summary.hpp"
#include "task_record.hpp"

#ifdef DCS_HAVE_MPI
#include "dcs/io/rank_agreement.hpp"
#endif

namespace dcs::app {
namespace {

/// When this program's static objects were made: the process start, less dynamic linking.
const spdlog::log_clock::time_point kProgramStart = spdlog::log_clock::now();

/// The %* flag: seconds since the program started ("+0.123 s"), so that -vv shows where the
/// time before the first slab and after the last goes (reading, devices, store, release).
class ElapsedFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const double seconds = std::chrono::duration<double>(msg.time - start_).count();
    const std::string text = fmt::format("+{:.3f} s ", seconds);
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<ElapsedFlag>(*this);
  }

 private:
  spdlog::log_clock::time_point start_ = kProgramStart;
};

void setup_logging(int verbosity, bool quiet) {
  spdlog::logger& logger = log();  // the library's logger (stderr, created on first use)
  const pipeline::MpiInfo& mpi = pipeline::mpi_info();
  // Several MPI ranks: each line names its rank; only rank 0 says what goes well (-v: all).
  // -vv: every line also says when it was written.
  const std::string when = verbosity >= 2 ? "%*" : "";
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<ElapsedFlag>('*').set_pattern(
      mpi.size > 1 ? fmt::format("[dcs rank {}] {}%^%l%$: %v", mpi.rank, when)
                   : fmt::format("[dcs] {}%^%l%$: %v", when));
  logger.set_formatter(std::move(formatter));
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

/// The name among `names` closest to `given`, if it is close enough to be a typo of it.
std::optional<std::string> closest(const std::string& given,
                                   const std::vector<std::string>& names) {
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, given.size() / 4) + 1;
  for (const std::string& name : names)
    if (const std::size_t d = edit_distance(given, name); d < best_distance) {
      best = name;
      best_distance = d;
    }
  return best;
}

/// The option of `app` named `token` ("--grid", "-g"), if any.
const CLI::Option* find_option(const CLI::App& app, const std::string& token) {
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames())
      if (token == "--" + name) return option;
    for (const std::string& name : option->get_snames())
      if (token == "-" + name) return option;
  }
  return nullptr;
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  return names;
}

/// An option that needs a value followed by another option or by nothing: CLI11 takes the
/// option as the value ("--atoms --grid 9" reads a file "--grid"), or says it cannot convert it.
/// (A file named like an option goes after "--".)
std::optional<std::string> missing_value(const CLI::App& app,
                                         const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const CLI::Option* option = find_option(app, args[i]);
    if (option == nullptr || option->get_expected_min() < 1) continue;
    if (i + 1 == args.size()) return fmt::format("{} needs a value (nothing followed it)", args[i]);
    if (find_option(app, args[i + 1]) != nullptr)
      return fmt::format("{} needs a value (got the option {})", args[i], args[i + 1]);
  }
  return std::nullopt;
}

/// A message a person understands for CLI11's parse error, or none to keep CLI11's own: a
/// missing value, a value of the wrong type, an unknown option or command (with the closest
/// name), a file name without --atoms.
std::optional<std::string> explain(const CLI::App& app, const CLI::ParseError& error,
                                   const std::vector<std::string>& args) {
  if (std::optional<std::string> message = missing_value(app, args)) return message;
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    const std::string what = error.what(), prefix = "Could not convert: ";  // "<option> = <value>"
    const std::size_t equals = what.find(" = ");
    if (!what.starts_with(prefix) || equals == std::string::npos) return std::nullopt;
    const std::string name = what.substr(prefix.size(), equals - prefix.size());
    const CLI::Option* option = find_option(app, name);
    const std::string type = option ? option->get_type_name() : std::string();
    const char* kind = type.starts_with("INT") || type.starts_with("UINT") ? "a whole number"
                       : type.starts_with("FLOAT")                         ? "a number"
                                                                           : "another value";
    return fmt::format("{} needs {}, got '{}'", name, kind, what.substr(equals + 3));
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error) == nullptr) return std::nullopt;
  const std::vector<std::string> extras = app.remaining();  // the first of them as given
  const auto first = std::find_first_of(args.begin(), args.end(), extras.begin(), extras.end());
  if (first == args.end()) return std::nullopt;
  const std::string& extra = *first;
  if (extra.starts_with("-")) {
    const std::string name = extra.substr(0, extra.find('='));
    const std::optional<std::string> typo = closest(name, option_names(app));
    return typo ? fmt::format("unknown option {}; did you mean {}?", name, *typo)
                : fmt::format("unknown option {} (dcs --help lists them)", name);
  }
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    commands.push_back(sub->get_name());
  if (!args.empty() && args.front() == extra)
    if (const std::optional<std::string> typo = closest(extra, commands))
      return fmt::format("unknown command {}; did you mean dcs {}?", extra, *typo);
  return fmt::format("{}: a file name needs --atoms before it (dcs --atoms {} ...)", extra, extra);
}

/// Exit status 2 after a usage message (not printed when only parsing).
int usage_error(const std::string& message, bool quiet) {
  if (!quiet) std::cerr << "dcs: " << message << "\nRun with --help for more information.\n";
  return static_cast<int>(ExitCode::kUsageError);
}

/// The arguments of a map run split at its first "--": what follows are atom files, whatever
/// their names begin with ("dcs --grid 9 -- -dash.pqr"; an --atoms just before the "--" is
/// dropped). A subcommand's arguments are left whole.
std::vector<std::string> split_atom_files(std::vector<std::string>& args, const CLI::App& app) {
  std::vector<std::string> files;
  if (!args.empty() &&
      !app.get_subcommands([&](const CLI::App* sub) { return sub->get_name() == args.front(); })
           .empty())
    return files;
  const auto dash = std::find(args.begin(), args.end(), "--");
  if (dash == args.end()) return files;
  files.assign(dash + 1, args.end());
  auto end = dash;
  if (end != args.begin() && (*(end - 1) == "--atoms" || *(end - 1) == "-a")) --end;
  args.erase(end, args.end());
  return files;
}

/// The subcommands besides the map run.
struct Subcommands {
  CLI::App* kernels = nullptr;
  CLI::App* devices = nullptr;
  CLI::App* bench = nullptr;
  CLI::App* preview = nullptr;
  CLI::App* batch_summary = nullptr;
  std::string batch_summary_dir;
  BenchCommand bench_options;
  PreviewCommand preview_options;
};

void add_subcommands(CLI::App& app, Subcommands& sub) {
  sub.kernels =
      app.add_subcommand("kernels", "List potential kernels and reductions, one line each");
  sub.devices = app.add_subcommand("devices", "List CUDA devices and the CPU");
  sub.bench = app.add_subcommand("bench", "Measure throughput (results under bench/results/)");
  BenchCommand& bench = sub.bench_options;
  sub.bench->add_flag("--cpu", bench.cpu, "CPU backends");
  sub.bench->add_flag("--potential", bench.potential,
                      "CUDA potential kernels vs the rsqrt ceiling");
  sub.bench->add_flag("--reductions", bench.reductions, "CUDA reductions vs copy and CUB");
  sub.bench->add_option("--molecule", bench.molecule, "End-to-end split of a real run on this file")
      ->check(CLI::ExistingFile);
  sub.bench->add_option("--sizes", bench.options.grid_sizes, "Cubic grid edges (points)");
  sub.bench->add_option("--atom-counts", bench.options.atom_counts, "Atom counts");
  sub.bench->add_option("--kernel", bench.options.kernels, "Only these variants");
  sub.bench
      ->add_option("--models", bench.options.models,
                   "Physics models: the CPU fast kernels of each on the grid and at points "
                   "against the model's port limit (--cpu); the GPU kernels' models "
                   "(--potential)")
      ->check(CLI::IsMember({"coulomb", "screened", "distance"}));
  sub.bench->add_option("--repetitions", bench.options.repetitions, "Timed repetitions (median)")
      ->check(CLI::PositiveNumber);
  sub.bench->add_option("--results-dir", bench.results_dir, "Where the Markdown results go")
      ->capture_default_str();
  sub.bench->add_option("--device-ordinal", bench.options.device, "CUDA device");
  sub.bench->add_option("--threads,-j", bench.options.threads, "CPU threads (0: all)");
  sub.batch_summary = app.add_subcommand(
      "batch-summary", "Add up the task records a job array's tasks (--shard) left in DIR");
  sub.batch_summary->add_option("dir", sub.batch_summary_dir, "The tasks' --output-dir")
      ->required();
  sub.preview =
      app.add_subcommand("preview",
                         "Render slices of a map to PNG, coloured over the map's colour range "
                         "(python3 + matplotlib)");
  PreviewCommand& preview = sub.preview_options;
  sub.preview->add_option("map", preview.input, "dcs HDF5 map")
      ->required()
      ->check(CLI::ExistingFile);
  sub.preview->add_option("-o,--output", preview.output, "PNG path (default <map stem>.png)");
  sub.preview
      ->add_option("--percentile", preview.percentile,
                   "Colour limits: ±this percentile of |V| on the solvent-accessible shell (or "
                   "the map) instead of the file's colour range (default 99 with --probe/--shell)")
      ->check(CLI::Range(1.0, 100.0));
  sub.preview
      ->add_option("--view", preview.view,
                   "surface: the atoms' interior masked; centre: central slices, unmasked")
      ->capture_default_str()
      ->check(CLI::IsMember({"surface", "centre"}));
  sub.preview
      ->add_option("--slice", preview.slices,
                   "A plane to draw, e.g. z=12.5 (Å; repeatable; "
                   "default: the three through the centre)")
      ->allow_extra_args(false);
  sub.preview
      ->add_option("--probe", preview.probe,
                   "Solvent probe radius (Å): the shell starts at "
                   "atom radius + probe (default 1.4)")
      ->check(CLI::Range(0.0, 100.0));
  sub.preview->add_option("--shell", preview.shell, "Shell width (Å, default 1)")
      ->check(CLI::Range(0.01, 100.0));
  sub.preview->add_flag("--force,-f", preview.force, "Overwrite the PNG");
}

/// The subcommand given, if any: its exit status.
std::optional<int> run_subcommand(Subcommands& sub, const std::string& command_line) {
  if (*sub.kernels) return list_kernels();
  if (*sub.devices) return list_devices();
  if (*sub.preview) return run_preview(sub.preview_options);
  if (*sub.batch_summary) return summarise_task_records(sub.batch_summary_dir);
  if (*sub.bench) {
    sub.bench_options.command_line = command_line;
    sub.bench_options.options.threads =
        capped_threads(sub.bench_options.options.threads, "--threads");
    return run_bench(sub.bench_options);
  }
  return std::nullopt;
}

/// A map run (or a batch): each map's summary printed as it finishes, the exit status of the
/// first failure. An interrupted batch says what it completed before the error is reported.
int run_maps(const RunConfig& config, bool show_progress, bool quiet) {
  install_signal_handlers();
  ConsoleProgress progress(isatty(STDERR_FILENO) != 0, 10.0);
  SummaryPrinter printer(show_progress ? &progress : nullptr, quiet);
  std::vector<RunResult> results;
  // A task of a job array (--shard) leaves its record for `dcs batch-summary`.
  auto record = [&](const std::vector<RunResult>& done, bool interrupted) {
    if (config.input.shard && pipeline::mpi_info().rank == 0)
      write_task_record(config.output.dir, resolve_shard(*config.input.shard), done, interrupted);
  };
  try {
    results = run(config, &printer);
  } catch (const InterruptedError&) {
    if (!printer.results().empty()) print_interrupted_batch(printer.results());
    try {
      record(printer.results(), true);
    } catch (const Error& error) {  // the interruption stays the run's status
      log().error("{}", error.what());
    }
    throw;
  }
  log().debug("run over, devices released");
  record(results, false);
  int exit_code = 0;
  for (const RunResult& result : results) {
    // Printed as it finished, except by MPI ranks (rank 0 prints them all at the end).
    if (printer.results().empty() && (!quiet || !result.error.empty()))
      print_guarded([&] { print_summary(result); });  // -q: failures only
    if (result.exit_code != 0 && exit_code == 0) exit_code = result.exit_code;
  }
  if (results.size() > 1)
    print_guarded([&] { print_batch_summary(results, config.input.keep_going); });
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
  for (int index = 0; index < argc; ++index) line += (index ? " " : "") + shell_quote(argv[index]);
  return line;
}

int main_entry(int argc, char** argv, RunConfig* parse_only) {
  CLI::App app{
      "dcs: electrostatic potential maps by direct Coulomb summation.\n"
      "  dcs --atoms mol.pqr --grid 256          writes mol.h5 (kT/e at 298.15 K)\n"
      "  dcs --atoms mol.pqr --spacing 0.5 --dx mol.dx\n"
      "  dcs kernels | dcs devices | dcs bench | dcs preview mol.h5 -o mol.png\n"
      "  dcs batch-summary maps/                the tasks of a --shard job array\n"
      "  dcs --grid 129 -- -odd.pqr             '--' ends the options: atom files follow",
      "dcs"};
  app.set_version_flag("--version", fmt::format("dcs {} (git {})", kVersion, kGitRevision));
  app.footer(
      "Exit status: 0 success, 1 runtime failure (CUDA, I/O), 2 usage error, 3 bad input file,\n"
      "4 --validate above tolerance, 70 internal error (a bug), 130/143 interrupted.\n"
      "A failed run leaves no output file.");
  RunOptions options;
  add_run_options(app, options);
  bool no_progress = false, quiet = false;
  int verbosity = 0;
  app.add_flag("--verbose,-v", verbosity,
               "More log output (-vv: trace, each line with the seconds since start)")
      ->group("Logging");
  app.add_flag("--quiet,-q", quiet, "Only warnings and errors")->group("Logging");
  app.add_flag("--no-progress", no_progress, "No progress line or progress log lines")
      ->group("Logging");
  Subcommands sub;
  add_subcommands(app, sub);
  app.require_subcommand(0, 1);

  std::vector<std::string> args(argv + 1, argv + argc);
  const std::vector<std::string> after_dashes = split_atom_files(args, app);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
    app.parse(reversed);
  } catch (const CLI::ParseError& error) {
    std::ostringstream unprinted;  // parse_only: formatted (--help too) but not printed
    const std::optional<std::string> message = explain(app, error, args);
    if (message && error.get_exit_code() != 0) return usage_error(*message, parse_only != nullptr);
    const int code = parse_only ? app.exit(error, unprinted, unprinted) : app.exit(error);
    return code == 0 ? 0 : static_cast<int>(ExitCode::kUsageError);
  }
  const std::optional<std::string> no_value = missing_value(app, args);
  if (no_value && app.get_subcommands().empty())
    return usage_error(*no_value, parse_only != nullptr);
  std::vector<std::string>& inputs = options.config.input.files;
  inputs.insert(inputs.end(), after_dashes.begin(), after_dashes.end());
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
    if (const std::optional<int> status = run_subcommand(sub, quoted_command_line(argc, argv)))
      return *status;
    const bool no_inputs = options.config.input.files.empty() && options.atoms_from.empty() &&
                           app.count("--topology") + app.count("--trajectory") == 0;
    const char* required = "--atoms (or --topology with --trajectory) is required (see dcs --help)";
    if (no_inputs && !pipeline::mpi_info().active) {
      std::cerr << "dcs: " << required << "\n";
      return static_cast<int>(ExitCode::kUsageError);
    }
    RunConfig config;
    pipeline::on_every_rank([&] {
      if (no_inputs) throw UsageError(required);
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
