#include "cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "bench_command.hpp"
#include "dcs/backend.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/log.hpp"
#include "dcs/parallel.hpp"
#include "dcs/physics.hpp"
#include "dcs/pipeline/mpi.hpp"
#include "dcs/run.hpp"
#include "dcs/version.hpp"
#include "preview.hpp"
#include "progress.hpp"

#ifdef DCS_HAVE_MPI
#include "dcs/io/parallel_store.hpp"
#endif

namespace dcs::app {
namespace {

volatile std::sig_atomic_t g_signal_count = 0;
volatile std::sig_atomic_t g_first_signal = 0;

extern "C" void on_signal(int signal_number) {
  // First signal: ask the pipeline (and the atom readers) to stop at their next check; the
  // outputs of the run are removed as the stack unwinds and main_entry exits 128 + the signal.
  // Second: remove the pending temporaries now and leave at once: the outputs' temporaries, a
  // finished partial file and the outputs of a map whose renames are under way (io::CommitGroup).
  // Either way the status is 128 + the first signal (130 SIGINT, 143 SIGTERM). A partial file
  // that is not finished (<output>.partial) is kept for --resume.
  if (g_signal_count == 0) {
    g_signal_count = 1;
    g_first_signal = signal_number;
    request_interrupt();
    return;
  }
  io::remove_pending_temporaries();
  std::_Exit(128 + g_first_signal);
}

/// The exit status of a run that ended with `code`: an interrupted run exits 128 + the signal
/// that interrupted it (ExitCode::kInterrupted is SIGINT's 130).
int exit_status(int code) {
  if (code == static_cast<int>(ExitCode::kInterrupted) && g_first_signal != 0)
    return 128 + g_first_signal;
  return code;
}

/// --threads beyond this many times the hardware threads only adds scheduling overhead
/// (100000 threads ran 25x slower); larger requests are capped with a warning.
constexpr unsigned kMaxThreadsPerHardwareThread = 4;

unsigned capped_threads(unsigned requested, const char* option) {
  const unsigned hardware = resolve_threads(0);
  const unsigned cap = kMaxThreadsPerHardwareThread * std::max(1u, hardware);
  if (requested <= cap) return requested;
  log().warn("{} {} is more than {} x the {} hardware threads; using {}", option, requested,
             kMaxThreadsPerHardwareThread, hardware, cap);
  return cap;
}

/// The closing lines of a batch: counts, one line per failed input, and what a stopped batch
/// left undone.
void print_batch_summary(const std::vector<RunResult>& results, bool keep_going) {
  std::size_t written = 0, skipped = 0, failed = 0, not_run = 0;
  for (const RunResult& r : results) {
    if (!r.attempted) ++not_run;
    else if (!r.error.empty()) ++failed;
    else if (r.skipped) ++skipped;
    else ++written;
  }
  // --models each: the batch is one map per model
  const bool models = std::any_of(results.begin(), results.end(),
                                  [](const RunResult& r) { return r.model >= 0; });
  fmt::print("batch: {} {}{}: {} written, {} complete already, {} failed{}\n", results.size(),
             models ? "map" : "input", results.size() == 1 ? "" : "s", written, skipped, failed,
             not_run > 0 ? fmt::format(", {} not attempted", not_run) : std::string());
  for (const RunResult& r : results)
    if (r.attempted && !r.error.empty())
      fmt::print("  failed: {}{}: {}\n", r.input,
                 r.model >= 0 ? fmt::format(" (model {})", r.model) : std::string(), r.error);
  if (not_run > 0)
    fmt::print("  the batch stopped at its first failure; the {} output(s) written before it are "
               "complete; run again with --resume (and --keep-going to go past failures) to do "
               "the rest\n", written + skipped);
  else if (failed > 0 && keep_going)
    fmt::print("  --keep-going: every other input was processed\n");
}

void install_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A file size limit (ulimit -f) would kill the process without a word; ignored, the write
  // fails with EFBIG and the run reports it and cleans up like any other write error.
  std::signal(SIGXFSZ, SIG_IGN);
}

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

void print_summary(const RunResult& result) {
  const std::string input =
      result.model >= 0 ? fmt::format("{} (model {})", result.input, result.model) : result.input;
  if (!result.attempted) {
    fmt::print("{}: not attempted (the batch stopped at a failure)\n", input);
    return;
  }
  if (!result.error.empty()) {
    fmt::print("{}: FAILED: {}\n", input, result.error);
    return;
  }
  if (result.rank >= 0) {  // an MPI batch: one line per input (details in each file's provenance)
    fmt::print("{} -> {}: {} on rank {} in {:.2f} s\n", result.input, fmt::join(result.outputs, ", "),
               result.skipped ? "complete already, skipped (--resume)" : "written", result.rank,
               result.total_seconds);
    return;
  }
  if (result.skipped) {
    fmt::print("{} -> {}: complete already, skipped (--resume)\n", input,
               fmt::join(result.outputs, ", "));
    return;
  }
  const MapMetadata& meta = result.metadata;
  const GridSpec& grid = meta.grid;
  const GridStats& s = meta.stats;
  const std::string unit(unit_name(meta.physics.unit));
  fmt::print("{} -> {}\n", input, fmt::join(result.outputs, ", "));
  fmt::print("  atoms     {}\n", result.atoms);
  if (const std::string models = describe(meta.models); !models.empty())
    fmt::print("  models    {}\n", models);
  fmt::print("  grid      {} x {} x {} = {} points, spacing {:.4g} x {:.4g} x {:.4g} A, origin "
             "({:.3f}, {:.3f}, {:.3f})\n", grid.nx(), grid.ny(), grid.nz(), grid.points(),
             grid.spacing[0], grid.spacing[1], grid.spacing[2], grid.origin[0], grid.origin[1],
             grid.origin[2]);
  fmt::print("  potential {} (factor {:.6g} {}): min {:.6g}  max {:.6g}  mean {:.6g}  rms {:.6g}\n",
             unit, meta.coulomb_factor, factor_unit(meta.physics.unit), s.min, s.max, s.mean, s.rms);
  if (const ColourRange& colours = meta.colour_range; colours.known())
    fmt::print("  colours   view with a colour range of ±{:.3g} {} ({:g}th percentile of |V|; "
               "the file's colour_range)\n", colours.high, unit, colours.high_percentile);
  if (meta.validation.performed) {
    const Validation& v = meta.validation;
    const std::string where = v.all_points ? fmt::format("all {}", v.points)
                                           : fmt::format("{} sampled", v.points);
    fmt::print("  validate  {} at {} points: max |error| {:.3e} {} ({:.2e} of max|V|, tolerance "
               "{:.0e}), rms error {:.3e}\n", v.passed ? "passed" : "FAILED", where,
               v.max_abs_error, unit, v.max_rel_error, v.tolerance, v.rms_error);
  }
  fmt::print("  backend   {} / {} on {}\n", meta.provenance.backend, meta.provenance.kernel,
             meta.provenance.device);
  const double rate = result.compute_seconds > 0 ? result.evaluations / result.compute_seconds : 0.0;
  fmt::print("  time      {:.3f} s total, {:.3f} s compute and write ({:.3g} atom-evaluations/s, "
             "{} worker{} {:.0f}% busy), {:.3f} s writing\n",
             result.total_seconds, result.compute_seconds, rate, result.workers,
             result.workers == 1 ? "" : "s", 100.0 * result.busy_fraction, result.write_seconds);
  if (result.slabs_reused > 0)
    fmt::print("  resumed   {} slab(s) found done in the partial file, {} computed\n",
               result.slabs_reused, result.slabs_computed);
}

// One line per variant, at most kListWidth columns (longer summaries wrap under themselves), one
// "(default)" per group (the variant used when --kernel/--reduction is not given), each name
// once per group (a variant offered by several backends lists them together).
constexpr std::size_t kListWidth = 100;

void print_wrapped(const std::string& head, const std::string& text) {
  const std::size_t room = kListWidth - head.size();
  std::string line = head;
  std::size_t used = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t next = text.find(' ', pos);
    if (next == std::string::npos) next = text.size();
    const std::string word = text.substr(pos, next - pos);
    pos = next + 1;
    if (used > 0 && used + 1 + word.size() > room) {
      fmt::print("{}\n", line);
      line = std::string(head.size(), ' ');
      used = 0;
    }
    line += (used > 0 ? " " : "") + word;
    used += (used > 0 ? 1 : 0) + word.size();
  }
  fmt::print("{}\n", line);
}

void print_variant_group(const std::string& title, const std::vector<VariantInfo>& variants,
                         const std::string& default_backend) {
  struct Row {
    VariantInfo info;
    std::vector<std::string> backends;
  };
  std::vector<Row> rows;
  for (const VariantInfo& v : variants) {
    auto same = std::find_if(rows.begin(), rows.end(),
                             [&](const Row& r) { return r.info.name == v.name; });
    if (same == rows.end()) {
      rows.push_back({v, {v.backend}});
      same = rows.end() - 1;
      same->info.is_default = false;
    } else if (std::find(same->backends.begin(), same->backends.end(), v.backend) ==
               same->backends.end()) {
      same->backends.push_back(v.backend);
    }
    // The group's default is the default of its main backend (cpu-fast for --device cpu).
    if (v.is_default && v.backend == default_backend) same->info.is_default = true;
  }
  fmt::print("{}\n", title);
  for (const Row& row : rows) {
    const std::string backends = row.backends.size() > 1 ? "any cpu" : row.backends.front();
    print_wrapped(fmt::format("  {:<17} {:<14}", row.info.name, backends),
                  (row.info.is_default ? "(default) " : "") + row.info.summary);
  }
}

int list_kernels() {
  std::vector<VariantInfo> cpu_potential, cpu_reduction;
  for (const VariantInfo& v : cpu_variants())
    (v.kind == VariantKind::Potential ? cpu_potential : cpu_reduction).push_back(v);
  print_variant_group("Potential kernels (--kernel), CUDA:", cuda::cuda_kernel_variants(), "cuda");
  print_variant_group("Potential kernels (--kernel), CPU (--device cpu; --kernel reference "
                      "selects the float64 backend):", cpu_potential, "cpu-fast");
  print_variant_group("Reductions for statistics and validation (--reduction), CUDA:",
                      cuda::cuda_reduction_variants(), "cuda");
  print_variant_group("Reductions, CPU (the reference backend uses cpu-serial):", cpu_reduction,
                      "cpu-fast");
  return 0;
}

int list_devices() {
  const auto devices = cuda::cuda_devices();
  if (devices.empty()) fmt::print("cuda    none: {}\n", cuda::cuda_unavailable_reason());
  for (const cuda::DeviceInfo& d : devices)
    fmt::print("cuda:{}  {}  sm_{}{}  {} SMs  {:.0f} MHz  {:.1f} GiB ({:.1f} GiB free)  L2 {} MiB\n",
               d.ordinal, d.name, d.compute_major, d.compute_minor, d.multiprocessors,
               d.clock_khz / 1000.0, static_cast<double>(d.memory_bytes) / (1 << 30),
               static_cast<double>(d.free_bytes) / (1 << 30), d.l2_bytes >> 20);
  fmt::print("cpu     {} hardware threads (fast backend: --device cpu)\n", resolve_threads(0));
  return 0;
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
             "4 --validate above tolerance, 130 interrupted. A failed run leaves no output file.");

  RunConfig config;
  std::vector<std::int64_t> grid_counts;
  double spacing = 0.0;
  std::vector<double> origin, center;
  std::string units = "kT/e";
  std::string dx_arg, mrc_arg;
  bool no_hdf5 = false, no_progress = false, quiet = false;
  int verbosity = 0;
  double tolerance = 0.0;
  std::string memory_limit_text;
  std::string model_grid = "common";

  const std::string g_io = "Input and output", g_grid = "Grid (Å)", g_phys = "Physics and units",
                    g_comp = "Compute", g_val = "Validation", g_log = "Logging";
  app.add_option("--atoms,-a", config.inputs, "Atom files: .pqr, .pqr.gz, .xyzq (x y z q per line)")
      ->group(g_io);
  app.add_option("--output,-o", config.output, "HDF5 output path (one input; default <stem>.h5)")->group(g_io);
  app.add_option("--output-dir", config.output_dir, "Directory for default-named outputs")->group(g_io);
  app.add_option("--dx", dx_arg, "Also write an APBS OpenDX map; optional path (default <stem>.dx; "
                                 "a .gz name compresses)")
      ->expected(0, 1)->group(g_io);
  app.add_option("--mrc", mrc_arg,
                 "Also write an MRC2014 map (PyMOL, VMD, ChimeraX, Mol*, gemmi); optional path "
                 "(.mrc, .map or .ccp4; default beside the HDF5 output, <stem>.mrc)")
      ->expected(0, 1)->group(g_io);
  app.add_flag("--dx-gzip", config.dx_gzip, "Default-named DX files are gzip-compressed (.dx.gz)")->group(g_io);
  app.add_flag("--no-hdf5", no_hdf5, "Do not write HDF5 (needs --dx or --mrc)")->group(g_io);
  app.add_option("--compress", config.compression, "HDF5 gzip level 0-9 (with shuffle)")
      ->check(CLI::Range(0, 9))->group(g_io);
  app.add_option("--models", config.models,
                 "Multi-model PQR (NMR ensembles, MD snapshots): first | each (one map per "
                 "model, <stem>.model<N>.h5) | average (the mean potential, in one pass)")
      ->capture_default_str()->check(CLI::IsMember({"first", "each", "average"}))->group(g_io);
  app.add_flag("--force,-f", config.force, "Overwrite existing output files")->group(g_io);
  app.add_flag("--keep-going", config.keep_going, "Batch: continue after a bad input file")->group(g_io);
  app.add_flag("--resume", config.resume,
               "Continue an interrupted run from its <output>.partial file; in a batch, skip "
               "inputs whose outputs are complete")->group(g_io);
  app.add_flag("--wait-lock", config.wait_lock,
               "Wait while another dcs run writes the same output (its <output>.partial) instead "
               "of refusing")->group(g_io);

  app.add_option("--grid,-g", grid_counts, "Points per axis: N (cubic voxels) or NX NY NZ; default 129 unless --spacing")
      ->expected(1, 3)->group(g_grid);
  app.add_option("--spacing,-s", spacing, "Grid spacing in Å (alone: counts derived from the box)")->group(g_grid);
  app.add_option("--padding", config.grid.padding, "Å added around the atoms on every side")
      ->capture_default_str()->group(g_grid);
  app.add_option("--origin", origin, "First grid point X Y Z (Å)")->expected(3)->group(g_grid);
  app.add_option("--center", center, "Box centre X Y Z (Å)")->expected(3)->group(g_grid);
  app.add_option("--model-grid", model_grid,
                 "--models each: common (one grid around every model, maps compare point by "
                 "point) | own (each model's own grid)")
      ->capture_default_str()->check(CLI::IsMember({"common", "own"}))->group(g_grid);

  app.add_option("--units", units, "kT/e | kcal/mol/e | kJ/mol/e | V | e/A")->capture_default_str()->group(g_phys);
  app.add_option("--temperature", config.physics.temperature, "K (for kT/e)")->capture_default_str()->group(g_phys);
  app.add_option("--dielectric", config.physics.dielectric, "Relative permittivity")->capture_default_str()->group(g_phys);
  app.add_option("--min-distance", config.physics.min_distance,
                 "Distances below this (Å) are clamped to it: no infinities at atom centres")
      ->capture_default_str()->group(g_phys);

  app.add_option("--device,-d", config.device, "auto | cpu | cuda | cuda:N[,M...] (auto, cuda: every GPU)")->capture_default_str()->group(g_comp);
  app.add_option("--kernel,-k", config.backend.kernel, "Potential kernel (see `dcs kernels`)")->group(g_comp);
  app.add_option("--reduction", config.backend.reduction, "Statistics reduction (see `dcs kernels`)")->group(g_comp);
  app.add_option("--threads,-j", config.backend.threads, "CPU threads (0: all)")->group(g_comp);
  app.add_option("--memory-limit", memory_limit_text,
                 "Host memory the pipeline may hold, e.g. 2G or 512M (default: half of the "
                 "memory available, cgroup limits included)")->group(g_comp);
  app.add_option("--cpu-workers", config.cpu_workers,
                 "CPU backends side by side, threads split between them (simulates several "
                 "devices; the map is identical)")->capture_default_str()->group(g_comp);
  app.add_flag("--null-output", config.null_output,
               "Benchmarks: compute and reduce every slab but write nothing")->group(g_comp);
  app.add_option("--shard", config.shard,
                 "Batch share for job arrays: I/N (0-based) or slurm (from SLURM_ARRAY_TASK_*)")
      ->group(g_comp);
  app.add_option("--mpi-schedule", config.mpi_schedule,
                 "MPI ranks sharing one map: static (blocks of slabs) or dynamic")
      ->capture_default_str()->check(CLI::IsMember({"static", "dynamic"}))->group(g_comp);
  app.add_option("--checkpoint-interval", config.checkpoint_seconds,
                 "Seconds between checkpoints of the partial file (what a killed run keeps)")
      ->capture_default_str()->group(g_comp);
  app.add_flag("--debug-sync", config.backend.debug_sync, "Synchronise and check after every kernel")->group(g_comp);

  app.add_flag("--validate", config.validate, "Compare with the float64 reference; exit 4 above tolerance")->group(g_val);
  app.add_option("--tolerance", tolerance, "Relative to max|V| (default: 1e-5 for float32 backends)")->group(g_val);
  app.add_option("--validate-points", config.validate_points, "Points compared (0: all of small grids, else a sample)")->group(g_val);

  app.add_flag("--verbose,-v", verbosity, "More log output (-vv: trace)")->group(g_log);
  app.add_flag("--quiet,-q", quiet, "Only warnings and errors")->group(g_log);
  app.add_flag("--no-progress", no_progress, "No progress line or progress log lines")->group(g_log);

  auto* kernels_cmd = app.add_subcommand("kernels", "List potential kernels and reductions, one line each");
  auto* devices_cmd = app.add_subcommand("devices", "List CUDA devices and the CPU");
  auto* bench_cmd = app.add_subcommand("bench", "Measure throughput (results under bench/results/)");
  BenchCommand bench;
  bench_cmd->add_flag("--cpu", bench.cpu, "CPU backends");
  bench_cmd->add_flag("--potential", bench.potential, "CUDA potential kernels vs the rsqrt ceiling");
  bench_cmd->add_flag("--reductions", bench.reductions, "CUDA reductions vs copy and CUB");
  bench_cmd->add_option("--molecule", bench.molecule, "End-to-end split of a real run on this file")
      ->check(CLI::ExistingFile);
  bench_cmd->add_option("--sizes", bench.options.grid_sizes, "Cubic grid edges (points)");
  bench_cmd->add_option("--atom-counts", bench.options.atom_counts, "Atom counts");
  bench_cmd->add_option("--kernel", bench.options.kernels, "Only these variants");
  bench_cmd->add_option("--repetitions", bench.options.repetitions, "Timed repetitions (median)")
      ->check(CLI::PositiveNumber);
  bench_cmd->add_option("--results-dir", bench.results_dir, "Where the Markdown results go")->capture_default_str();
  bench_cmd->add_option("--device-ordinal", bench.options.device, "CUDA device");
  bench_cmd->add_option("--threads,-j", bench.options.threads, "CPU threads (0: all)");
  auto* preview_cmd = app.add_subcommand(
      "preview", "Render a map's three central slices to PNG (python3 + matplotlib)");
  PreviewCommand preview;
  preview_cmd->add_option("map", preview.input, "dcs HDF5 map")
      ->required()->check(CLI::ExistingFile);
  preview_cmd->add_option("-o,--output", preview.output, "PNG path (default <map stem>.png)");
  preview_cmd->add_option("--percentile", preview.percentile,
                          "Colour limits: ±this percentile of |V|")
      ->capture_default_str()->check(CLI::Range(1.0, 100.0));
  preview_cmd->add_flag("--force,-f", preview.force, "Overwrite the PNG");
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
    if (*kernels_cmd) return list_kernels();
    if (*devices_cmd) return list_devices();
    if (*preview_cmd) return run_preview(preview);
    if (*bench_cmd) {
      bench.command_line = quoted_command_line(argc, argv);
      bench.options.threads = capped_threads(bench.options.threads, "--threads");
      return run_bench(bench);
    }

    if (config.inputs.empty()) {
      std::cerr << "dcs: --atoms is required (see dcs --help)\n";
      return static_cast<int>(ExitCode::kUsageError);
    }
    if (!grid_counts.empty()) {
      if (grid_counts.size() == 2) throw UsageError("--grid takes 1 (N) or 3 (NX NY NZ) counts, not 2");
      config.grid.counts = grid_counts.size() == 1
                               ? std::array<std::int64_t, 3>{grid_counts[0], grid_counts[0], grid_counts[0]}
                               : std::array<std::int64_t, 3>{grid_counts[0], grid_counts[1], grid_counts[2]};
    }
    if (app.count("--spacing")) config.grid.spacing = spacing;
    if (!config.grid.counts && !config.grid.spacing) config.grid.counts = {{129, 129, 129}};
    if (!origin.empty()) config.grid.origin = Vec3{origin[0], origin[1], origin[2]};
    if (!center.empty()) config.grid.center = Vec3{center[0], center[1], center[2]};
    config.physics.unit = parse_unit(units);
    config.common_model_grid = model_grid == "common";
    config.write_hdf5 = !no_hdf5;
    config.write_dx = app.count("--dx") > 0;
    config.dx_path = dx_arg;
    config.write_mrc = app.count("--mrc") > 0;
    config.mrc_path = mrc_arg;
    if (!dx_arg.empty() && dx_arg.size() > 3 && dx_arg.substr(dx_arg.size() - 3) == ".gz") config.dx_gzip = true;
    if (app.count("--tolerance")) config.tolerance = tolerance;
    if (!memory_limit_text.empty()) config.memory_limit = parse_size(memory_limit_text);
    config.command_line = quoted_command_line(argc, argv);
    // Options are checked against their limits (dcs/limits.hpp) before any file is read.
    validate(config.grid);
    validate(config.physics);
    config.backend.threads = capped_threads(config.backend.threads, "--threads");
    if (parse_only) {
      *parse_only = std::move(config);
      return 0;
    }

    install_signal_handlers();
    ConsoleProgress progress(isatty(STDERR_FILENO) != 0, 10.0);
    const std::vector<RunResult> results = run(config, no_progress || quiet ? nullptr : &progress);
    int exit_code = 0;
    for (const RunResult& result : results) {
      if (!quiet || !result.error.empty()) print_summary(result);  // -q: failures only
      if (result.exit_code != 0 && exit_code == 0) exit_code = result.exit_code;
    }
    if (results.size() > 1) print_batch_summary(results, config.keep_going);
    return exit_status(exit_code);
  } catch (const Error& error) {
#ifdef DCS_HAVE_MPI
    // Another rank's failure: rank 0 reports it, the rank where it happened said what it was.
    if (dynamic_cast<const io::RankFailure*>(&error) != nullptr && pipeline::mpi_info().rank != 0)
      return exit_status(static_cast<int>(error.exit_code()));
#endif
    log().error("{}", error.what());
    return exit_status(static_cast<int>(error.exit_code()));
  } catch (const std::bad_alloc&) {
    log().error("out of memory");
    return static_cast<int>(ExitCode::kRuntimeError);
  } catch (const std::exception& error) {
    log().error("unexpected error: {}", error.what());
    return static_cast<int>(ExitCode::kRuntimeError);
  }
}

}  // namespace dcs::app
