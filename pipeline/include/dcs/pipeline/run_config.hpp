// What one run of the map pipeline is asked to do, typed once where it enters (the command line
// or a library caller): nothing downstream parses a string again. The parsers below are that
// edge; each throws UsageError naming the option.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/method.hpp"
#include "dcs/physics.hpp"
#include "dcs/profile.hpp"
#include "dcs/unit_cell.hpp"

namespace dcs {

/// --models: which models of a multi-model PQR file (NMR ensembles, MD snapshots) become maps.
enum class ModelsMode {
  kFirst,    ///< the first model, as a single-model file
  kEach,     ///< one map per model, <stem>.model<N>.h5 (N: the MODEL serial)
  kAverage,  ///< the mean potential over the models: one summation, charges / M
};

/// --mpi-schedule: how ranks sharing one map split its slabs.
enum class MpiSchedule {
  kStatic,   ///< contiguous blocks of slabs
  kDynamic,  ///< the next slab to whichever rank is free
};

/// --device: which devices compute.
struct DeviceRequest {
  enum class Kind { kAuto, kCpu, kCuda };
  Kind kind = Kind::kAuto;    ///< kAuto: every usable GPU, else the CPU
  std::vector<int> ordinals;  ///< kCuda: the GPUs named (empty: every visible GPU)
  bool operator==(const DeviceRequest&) const = default;
};

/// --shard: this task's share of a batch (job arrays).
struct Shard {
  bool from_slurm = false;  ///< index and count from SLURM_ARRAY_TASK_* when the run starts
  long long index = 0;      ///< 0-based share, < count
  long long count = 1;
};

/// --frames: which frames of a trajectory, as a Python slice "start:stop:step" (0-based, stop
/// excluded; negative start or stop count from the end; empty parts take their defaults).
struct FrameRange {
  std::optional<std::int64_t> start;  ///< none: 0
  std::optional<std::int64_t> stop;   ///< none: the end
  std::int64_t step = 1;              ///< >= 1
  bool operator==(const FrameRange&) const = default;
};

/// The frame indices `range` names in a trajectory of `frames` frames, in increasing order
/// (UsageError when none).
std::vector<std::int64_t> frame_indices(const FrameRange& range, std::int64_t frames);

/// A map averaged over the frames of an MD trajectory (pipeline/src/trajectory/).
struct TrajectoryRequest {
  std::string topology;            ///< charges and identities: .psf, .prmtop, .tpr, .pqr
  std::vector<std::string> files;  ///< frames: .dcd, .xtc, .trr, .nc, read in order
  FrameRange frames;
  std::string select;       ///< the atoms whose potential is mapped; empty: every atom
  std::string align;        ///< atoms fitted onto the first frame's before mapping; empty: none
  bool frame_maps = false;  ///< also every frame's map, in "<stem>.frames.h5"
  /// --pbc: how the periodic cell is used before selecting and fitting.
  enum class Pbc {
    kWhole,  ///< molecules made whole along the topology's bonds where a cell and bonds exist
    kNone,   ///< positions as the file has them
  };
  Pbc pbc = Pbc::kWhole;
  /// --center-on: these atoms' centre of geometry moved to the cell's centre, then every molecule
  /// wrapped into the cell by its centre (needs a cell); empty: not moved.
  std::string center;
  /// --strict: a frame with a bond across the boundary left after making molecules whole,
  /// mapped atoms outside the grid, or an outlying fit RMSD is refused instead of counted.
  bool strict = false;
  /// --periodic: each frame's potential is periodic in its cell, which every frame must have
  /// (refused naming the frame otherwise).
  bool periodic = false;
  /// --decode-threads: frames read and prepared at once, each thread with its own reader of the
  /// files; 0: automatic (decode_threads_for()). The maps do not depend on it.
  std::size_t decode_threads = 0;
};

/// The potential at points instead of on a grid (pipeline/src/points/): listed points, a surface
/// mesh's vertices, or every atom's centre from the other atoms.
struct PointsRequest {
  enum class Source { kList, kMesh, kAtoms };
  Source source = Source::kList;
  std::string path;     ///< --points FILE: a list (.csv, .txt, ...) or a mesh (.ply, .obj, .vtk)
  double offset = 0.0;  ///< --offset: Å along each vertex's normal (meshes)
  std::optional<double> colour_range;  ///< --colour-range: ±R of the colour map; none: 95th pct
};

/// The grid and physics options as a caller gave them (none: not given): the command line's
/// --grid ... --min-distance, or the Python package's keywords. resolve_grid_and_physics()
/// turns them into RunConfig::grid and RunConfig::physics by one set of rules for both.
struct GridPhysicsOptions {
  std::vector<std::int64_t> counts;  ///< --grid: N or NX NY NZ; empty: not given
  std::optional<double> spacing;     ///< Å
  std::optional<double> padding;     ///< Å
  std::optional<Vec3> origin, center;
  std::optional<std::string> units;  ///< "kT/e", ...
  std::optional<double> temperature, dielectric;
  std::optional<std::string> dielectric_model;  ///< "constant" | "distance"
  std::optional<double> ionic_strength, min_distance;
  std::string preset;  ///< "chimerax", "pymol", "pmepot"; empty: none
};

/// What is read, and how: atom files (or a trajectory or points run instead, RunConfig), their
/// models, their cell and this task's share of a batch.
struct InputRequest {
  std::vector<std::string> files;  ///< --atoms: atom files (.pqr, .pqr.gz, .xyzq)
  ModelsMode models = ModelsMode::kFirst;
  /// Read a .pqr file whose charges look like PDB occupancies anyway (io::ReadOptions).
  bool charges_as_given = false;
  /// --models each: all models on one grid placed around every model's atoms (true), or each
  /// on its own grid. A fully given grid (--origin, --spacing and --grid) is the same either way.
  bool common_model_grid = true;
  std::optional<Shard> shard;  ///< this task's share of the files; none: all of them
  bool keep_going = false;     ///< batch: continue after an input fails
  /// --box: the unit cell of every atom file, replacing its CRYST1 record (--periodic reads
  /// that where there is no --box).
  std::optional<UnitCell> box;
};

/// What is written, where, and how durably (the output-format table, output_formats.hpp, reads
/// the format fields).
struct OutputRequest {
  std::string hdf5_path;  ///< --output: HDF5 path for a single input; empty: <stem>.h5
  std::string dir;        ///< --output-dir: where default-named outputs go; empty: current dir
  /// The names of default-named outputs (before the extension): "{stem}" (the input's name less
  /// its extensions) and "{parent}" (the name of its folder), e.g. "{parent}_{stem}"; empty:
  /// "{stem}". Checked by check_name_template.
  std::string name_template;
  bool write_hdf5 = true;
  bool write_dx = false;
  std::string dx_path;     ///< explicit DX path (single input); empty: <stem>.dx
  bool dx_gzip = false;    ///< default-named DX files get .dx.gz
  bool write_mrc = false;  ///< also an MRC2014 map (streamed, float32)
  std::string mrc_path;    ///< explicit MRC path (single input): .mrc, .map or .ccp4
  int compression = 0;     ///< HDF5 gzip level 0..9 (with shuffle when > 0)
  /// --profile: the mean potential along this axis, averaged over the planes across it, in the
  /// file (/profile or /trajectory/profile) and in <stem>.profile.csv (dcs/profile.hpp).
  ProfileAxis profile = ProfileAxis::kNone;
  bool force = false;                ///< overwrite existing outputs
  bool resume = false;               ///< continue a partial map; skip complete outputs
  bool wait_lock = false;            ///< wait for another run holding the partial file
  bool null_output = false;          ///< benchmarks: compute and reduce every slab, write nothing
  double checkpoint_seconds = 10.0;  ///< make written planes durable at least this often
};

/// Where the work runs and with what: devices, kernels, workers, memory, MPI slab sharing.
struct ComputeRequest {
  DeviceRequest device;
  BackendOptions backend;
  unsigned cpu_workers = 1;  ///< CPU backends side by side (threads split between them),
                             ///< to exercise multi-device scheduling without GPUs
  /// --gpu-workers: backends per GPU, each with its own stream, so that one's host work and
  /// transfers overlap another's kernels; 0: the job kind's choice (run.cpp: 2 for a
  /// trajectory's frames, 1 for maps and points).
  unsigned gpu_workers = 0;
  /// Host memory the pipeline may hold (bytes); none: half of the memory available now
  /// (cgroup limits included).
  std::optional<std::size_t> memory_limit;
  MpiSchedule mpi_schedule = MpiSchedule::kStatic;
};

/// --method (dcs/method.hpp) and its accuracy: direct summation, multilevel summation
/// (dcs/msm.hpp) or the periodic Ewald sum.
struct MethodRequest {
  Method kind = Method::kExact;
  double msm_error = 1e-3;    ///< --msm-error: msm's relative RMS error target
  double ewald_error = 1e-5;  ///< --ewald-error: the relative RMS error target of ewald
  /// --preset pmepot: ewald makes PMEpot's smoothed reciprocal-only map instead of the exact
  /// periodic potential (dcs/periodic/pmepot_backend.hpp).
  bool pmepot = false;
};

/// --validate: the map compared with the float64 reference.
struct ValidationRequest {
  bool enabled = false;
  std::optional<double> tolerance;  ///< relative to max|V|; default: the backend's
  std::size_t points = 0;           ///< 0: all points of small grids, else a sample sized by cost
};

/// One run, composed of each topic's request: functions take the part they read.
struct RunConfig {
  InputRequest input;
  /// --points / --at-atoms: values at points of one atom file's potential instead of a map.
  std::optional<PointsRequest> points;
  /// A trajectory run instead of atom files (then `input.files` is empty).
  std::optional<TrajectoryRequest> trajectory;
  OutputRequest output;
  GridRequest grid;
  Physics physics;
  ComputeRequest compute;
  MethodRequest method;
  ValidationRequest validation;
  std::string command_line;  ///< stored in provenance
};

/// Sets config.grid and config.physics from `options`, then validates both (UsageError naming
/// the option): 129 points per axis unless counts or a spacing are given; with an ionic strength
/// given (0 included) and no dielectric, water's (78.54); a preset's physics and grid defaults
/// under the options given explicitly (units do not combine with a preset: its constant is in its
/// own unit).
void resolve_grid_and_physics(const GridPhysicsOptions& options, RunConfig& config);

/// Throws UsageError for settings that contradict each other or their bounds (several inputs
/// with one output name, nothing to write, a compression level beyond 0..9, ...).
void check_config(const RunConfig& config);

/// Part of check_config(), and of the in-memory calls at points: UsageError when the method has
/// no form at points (msm) and points are asked for (`points`).
void check_points_method(const MethodRequest& method, bool points);

/// Every setting that must be the same wherever one run executes (MPI ranks): the inputs,
/// outputs, grid, physics, kernels and modes, as (option, value) pairs in a fixed order. Leaves
/// out what each rank may choose for itself (--device, --threads, --cpu-workers,
/// --memory-limit, --checkpoint-interval).
std::vector<std::pair<std::string, std::string>> shared_settings(const RunConfig& config);

/// Throws UsageError unless `text` is a --name-template: fields {stem} and {parent} only, at
/// least one of them, and no '/'.
void check_name_template(const std::string& text);

/// "auto", "cpu", "cuda" or "cuda:N[,M...]".
DeviceRequest parse_device(const std::string& text);
/// The --device text of a request ("cuda:0,1").
std::string to_string(const DeviceRequest& request);
/// "start:stop:step" (--frames; see FrameRange), or a single frame "N".
FrameRange parse_frames(const std::string& text);
std::string to_string(const FrameRange& range);

/// "I/N" (0 <= I < N) or "slurm".
Shard parse_shard(const std::string& text);
std::string to_string(const Shard& shard);
/// The share itself: "slurm" read from SLURM_ARRAY_TASK_* (UsageError when they are not set).
Shard resolve_shard(const Shard& shard);
ModelsMode parse_models(const std::string& text);
TrajectoryRequest::Pbc parse_pbc(const std::string& text);
std::string_view to_string(TrajectoryRequest::Pbc pbc);  ///< "whole", "none"
std::string_view to_string(ModelsMode mode);             ///< "first", "each", "average"
MpiSchedule parse_mpi_schedule(const std::string& text);
std::string_view to_string(MpiSchedule schedule);  ///< "static", "dynamic"
/// A byte count: "2G", "512M", "1.5GiB", "4096" (binary units; K, M, G, T with optional
/// "iB"/"B"), 1 byte to 1e18 bytes.
std::size_t parse_size(const std::string& text);
/// --box "a,b,c" or "a,b,c,alpha,beta,gamma" (Å, degrees; angles 90 when left out): a usable
/// periodic cell, else UsageError saying why (pipeline/src/periodic_config.cpp).
UnitCell parse_box(const std::string& text);
/// The rules of --method ewald (--periodic) and --box, part of check_config(): its error target
/// in range, the Coulomb model only, no GPU path (--device cuda refused), no --align (fitting
/// rotates the atoms, not the cell), no --validate of points, --box for atom files only.
void check_periodic(const RunConfig& config);

}  // namespace dcs
