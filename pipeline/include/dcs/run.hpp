// The `dcs` pipeline as a library call (the dcs::pipeline layer, above io and kernels): read
// atoms, place the grid, plan slabs within the memory budget, compute them on every worker
// (one per GPU, or the CPU backend) while a writer streams finished slabs into the HDF5 store
// and the other sinks, then statistics, validation and commit. The command-line application
// only maps options onto a RunConfig and calls run(); everything here throws dcs::Error
// subclasses and never prints (progress goes through ProgressSink, messages through dcs::log()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dcs/timer.hpp"

#include "dcs/backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/map.hpp"
#include "dcs/physics.hpp"
#include "dcs/stats.hpp"

namespace dcs {

struct RunConfig {
  std::vector<std::string> inputs;  ///< atom files (.pqr, .pqr.gz, .xyzq)
  /// Multi-model inputs (NMR ensembles, MD snapshots; io/pqr.hpp "Models"): "first" (the first
  /// model, as always), "each" (one map per model, named <stem>.model<N>.h5 with N the MODEL
  /// serial) or "average" (the mean potential over the models: one summation over every
  /// model's atoms with charges / M, on a grid around all of them).
  std::string models = "first";
  /// --models each: every model of a file on one grid placed around all its models' atoms, so
  /// maps compare point by point (true); false: each model on a grid placed around its own atoms.
  /// A fully given grid (--origin, --spacing and --grid) is the same either way.
  bool common_model_grid = true;
  std::string output;               ///< HDF5 path for a single input; empty: <stem>.h5
  std::string output_dir;           ///< where default-named outputs go; empty: current directory
  bool write_hdf5 = true;
  bool write_dx = false;
  std::string dx_path;              ///< explicit DX path (single input); empty: <stem>.dx
  bool dx_gzip = false;             ///< default-named DX files get .dx.gz
  /// Also write an MRC2014 map (io/mrc.hpp; streamed, float32): at mrc_path (single input), else
  /// beside the HDF5 output and named after it, else <stem>.mrc in output_dir.
  bool write_mrc = false;
  std::string mrc_path;             ///< explicit MRC path (single input): .mrc, .map or .ccp4
  int compression = 0;              ///< HDF5 gzip level 0..9 (with shuffle when > 0)
  bool force = false;               ///< overwrite existing outputs
  bool keep_going = false;          ///< batch: continue after an input fails
  /// Batch split for job arrays: "" (all inputs), "I/N" (the I-th of N shares, 0-based) or
  /// "slurm" (I and N from SLURM_ARRAY_TASK_ID/_MIN/_STEP/_COUNT).
  std::string shard;
  /// MPI ranks sharing one map: "static" (contiguous blocks of slabs) or "dynamic" (the next
  /// slab to whichever rank is free).
  std::string mpi_schedule = "static";
  bool resume = false;              ///< continue a partial map; skip complete outputs
  bool wait_lock = false;           ///< wait for another run holding the partial file
  bool null_output = false;         ///< benchmarks: compute and reduce every slab, write nothing
  /// Host memory the pipeline may hold (bytes); empty: half of the memory available now
  /// (cgroup limits included).
  std::optional<std::size_t> memory_limit;
  double checkpoint_seconds = 10.0; ///< make written planes durable at least this often

  GridRequest grid;
  Physics physics;

  std::string device = "auto";      ///< auto | cpu | cuda | cuda:N[,M...]
  BackendOptions backend;
  unsigned cpu_workers = 1;         ///< CPU backends side by side (threads split between them),
                                    ///< to exercise multi-device scheduling without GPUs

  bool validate = false;
  std::optional<double> tolerance;  ///< relative to max|V|; default: the backend's
  std::size_t validate_points = 0;  ///< 0: all points of small grids, else a sample sized by cost

  std::string command_line;         ///< stored in provenance
};

/// Which backend a device string selects ("auto" resolves to cuda when a GPU is usable).
struct DeviceChoice {
  BackendKind kind = BackendKind::CpuFast;
  std::vector<int> ordinals{0};  ///< CUDA devices, one worker each
};
/// Parses --device; throws UsageError for anything but auto|cpu|cuda|cuda:N[,M...], and for cuda
/// when no GPU is usable (saying why). cuda and auto take every visible GPU.
DeviceChoice resolve_device(const std::string& device, const BackendOptions& options);

/// Creates the backend (flat factory list: CPU reference, CPU fast, CUDA). With kind CpuFast
/// and options.kernel == "reference" the float64 reference backend is returned.
std::unique_ptr<PotentialBackend> make_backend(BackendKind kind, const BackendOptions& options);

/// Receives progress of long computations (the application draws a line or logs).
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  /// Called when a map starts: its name and total atom-point evaluations.
  virtual void begin(const std::string& label, double total_evaluations) = 0;
  /// Called after each slab with evaluations done so far.
  virtual void update(double evaluations_done) = 0;
  virtual void end() = 0;
};

struct RunResult {
  std::string input;
  long long model = -1;              ///< --models each: the model of `input` mapped; else -1
  std::vector<std::string> outputs;  ///< files written
  std::size_t atoms = 0;
  MapMetadata metadata;              ///< grid, physics, stats, validation, provenance
  double compute_seconds = 0.0;      ///< compute + statistics
  double write_seconds = 0.0;        ///< all output files
  double total_seconds = 0.0;        ///< read to last byte written
  double evaluations = 0.0;          ///< atoms * grid points
  double busy_fraction = 0.0;        ///< workers' time in compute over wall time
  std::size_t workers = 0;           ///< devices (or CPU workers) used
  std::size_t slabs_computed = 0;
  std::size_t slabs_reused = 0;      ///< found complete in a partial file (--resume)
  bool skipped = false;              ///< --resume found the outputs complete
  bool attempted = true;             ///< false: a batch stopped (failure) before this input
  std::string error;                 ///< non-empty when this input failed
  int exit_code = 0;
  int rank = -1;                     ///< MPI batch: the rank that ran it (-1 without MPI)
};


/// Runs the whole pipeline over every input (of this shard). One input: throws its failure.
/// Several: every input's outcome is in its RunResult (error and exit_code when it failed);
/// without keep_going the first failure stops the batch and the inputs after it are returned
/// with attempted = false. An interruption always throws. Under MPI (pipeline/mpi.hpp) one
/// input is computed by all ranks together, several are handed out to the ranks; only rank 0
/// returns results (every input's), the other ranks an empty list.
std::vector<RunResult> run(const RunConfig& config, ProgressSink* progress = nullptr);

/// The share of a batch that --shard selects: the inputs ordered by file size (largest first,
/// then as given) and dealt out in turn to `count` shards; returns the inputs of shard `index`
/// in the order given. Throws UsageError for a malformed --shard or missing Slurm variables.
std::vector<std::string> shard_inputs(const std::vector<std::string>& inputs, const std::string& shard);

/// Parses a byte count: "2G", "512M", "1.5GiB", "4096" (binary units; K, M, G, T with optional
/// "iB"/"B"). Throws UsageError.
std::size_t parse_size(const std::string& text);

/// Default output path of an input: <dir>/<stem><extension> where stem drops .gz and the
/// atom-file extension.
std::string default_output_path(const std::string& input, const std::string& dir,
                                const std::string& extension);

/// Indices of grid points at which --validate compares with the reference: every point when
/// points * atoms <= `budget` evaluations, else a deterministic sample of about budget/atoms
/// points (at least 4096) that always includes the eight corners and the points of the map's
/// minimum and maximum (given by their indices).
std::vector<std::size_t> validation_points(const GridSpec& grid, std::size_t atoms,
                                           std::size_t requested, double budget,
                                           std::size_t index_of_min, std::size_t index_of_max);

}  // namespace dcs
