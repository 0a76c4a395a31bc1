// The options of a map run (run_options.hpp).
#include "run_options.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "dcs/parallel.hpp"
#include "dcs/periodic/pmepot_backend.hpp"
#include "dcs/presets.hpp"

namespace dcs::app {
namespace {

const std::string g_points = "Potential at points";
const std::string g_io = "Input and output", g_md = "MD trajectories", g_grid = "Grid (Å)",
                  g_phys = "Physics and units", g_comp = "Compute", g_val = "Validation";

/// --method's values, from the method table (dcs/method.hpp).
std::vector<std::string> method_names_list() {
  std::vector<std::string> names;
  for (const MethodTraits& t : method_table()) names.emplace_back(t.name);
  return names;
}

std::string method_help() {
  std::string help;
  for (const MethodTraits& t : method_table())
    help += fmt::format("{}{}: {}", help.empty() ? "" : " | ", t.name, t.summary);
  return help + " (default exact; on the GPUs when there are any)";
}

void add_trajectory_options(CLI::App& app, RunOptions& o) {
  TrajectoryRequest& t = o.trajectory;
  app.add_option("--topology", t.topology,
                 "Charges and atom names of an MD system: .psf (CHARMM/NAMD), .prmtop/.parm7 "
                 "(AMBER), .tpr (GROMACS), .pqr")
      ->group(g_md);
  app.add_option("--trajectory", t.files,
                 "Frames, read in order as one trajectory: .dcd, .xtc, .trr, .nc/.ncdf (AMBER "
                 "NetCDF); the map is their mean (stdev, min, max in /trajectory)")
      ->group(g_md);
  app.add_option("--frames", o.frames,
                 "Which frames: start:stop:step, 0-based, stop excluded, negative from the end "
                 "(default all)")
      ->group(g_md);
  app.add_option("--select", t.select,
                 "The atoms whose potential is mapped, e.g. \"segid PROA\" or \"protein and not "
                 "resname HOH\" (README: selections); default all")
      ->group(g_md);
  app.add_option("--align", t.align,
                 "Fit each frame onto the first frame's atoms of this selection (least squares) "
                 "before mapping it, e.g. \"name CA\"")
      ->group(g_md);
  app.add_flag("--frame-maps", t.frame_maps,
               "Also keep every frame's map: <stem>.frames.h5, float32 [frame][z][y][x] "
               "(frames x points x 4 bytes)")
      ->group(g_md);
  app.add_option("--pbc", o.pbc,
                 "whole: make molecules whole across the cell boundary along the topology's "
                 "bonds before selecting and fitting (where frames have a cell and the topology "
                 "bonds); none: positions as stored (default whole)")
      ->group(g_md);
  app.add_option("--center-on", t.center,
                 "Move this selection's centre to the cell's centre, then wrap every molecule "
                 "into the cell (needs a cell), e.g. \"protein\"")
      ->group(g_md);
  app.add_option(
         "--decode-threads", t.decode_threads,
         "Frames read, made whole and fitted at once, each thread with its own reader "
         "(default 0: half the cores, at most 8, fewer where memory is short); the map does "
         "not depend on it")
      ->check(CLI::Range(0, 64))
      ->group(g_md);
  app.add_flag("--strict", t.strict,
               "Refuse a frame with a bond across the boundary left, mapped atoms outside the "
               "grid or an outlying fit RMSD, instead of counting it")
      ->group(g_md);
}

void add_io_options(CLI::App& app, RunOptions& o) {
  InputRequest& in = o.config.input;
  OutputRequest& out = o.config.output;
  app.add_option("--atoms,-a", in.files, "Atom files: .pqr, .pqr.gz, .xyzq (x y z q per line)")
      ->group(g_io);
  app.add_option("--atoms-from", o.atoms_from,
                 "A file listing atom files, one a line (\"-\": standard input; blank lines and "
                 "# comments skipped), after those of --atoms")
      ->group(g_io);
  app.add_option("--output,-o", out.hdf5_path, "HDF5 output path (one input; default <stem>.h5)")
      ->group(g_io);
  app.add_option("--output-dir", out.dir, "Directory for default-named outputs")->group(g_io);
  app.add_option("--name-template", out.name_template,
                 "Default output names: {stem} (the input's "
                 "name less its extensions), {parent} (its folder's name); e.g. {parent}_{stem}")
      ->group(g_io);
  app.add_option("--dx", o.dx_arg,
                 "Also write an APBS OpenDX map; optional path (default <stem>.dx; "
                 "a .gz name compresses)")
      ->expected(0, 1)
      ->group(g_io);
  app.add_option("--mrc", o.mrc_arg,
                 "Also write an MRC2014 map (PyMOL, VMD, ChimeraX, Mol*, gemmi); optional path "
                 "(.mrc, .map or .ccp4; default beside the HDF5 output, <stem>.mrc)")
      ->expected(0, 1)
      ->group(g_io);
  app.add_flag("--dx-gzip", out.dx_gzip, "Default-named DX files are gzip-compressed (.dx.gz)")
      ->group(g_io);
  app.add_flag("--no-hdf5", o.no_hdf5, "Do not write HDF5 (needs --dx or --mrc)")->group(g_io);
  app.add_option("--compress", out.compression, "HDF5 gzip level 0-9 (with shuffle)")
      ->check(CLI::Range(0, 9))
      ->group(g_io);
  app.add_option("--models", o.models,
                 "Multi-model PQR (NMR ensembles, MD snapshots): first | each (one map per "
                 "model, <stem>.model<N>.h5) | average (the mean potential, in one pass)")
      ->capture_default_str()
      ->check(CLI::IsMember({"first", "each", "average"}))
      ->group(g_io);
  app.add_flag("--charges-as-given", in.charges_as_given,
               "Take a .pqr file's charges as given even when they look like a PDB file's "
               "occupancies (all 0..1, mostly 1)")
      ->group(g_io);
  app.add_flag("--force,-f", out.force, "Overwrite existing output files")->group(g_io);
  app.add_flag("--keep-going", in.keep_going, "Batch: continue after a bad input file")
      ->group(g_io);
  app.add_flag("--resume", out.resume,
               "Continue an interrupted run from its <output>.partial file; in a batch, skip "
               "inputs whose outputs are complete")
      ->group(g_io);
  app.add_flag("--wait-lock", out.wait_lock,
               "Wait while another dcs run writes the same output (its <output>.partial) instead "
               "of refusing")
      ->group(g_io);
}

void add_points_options(CLI::App& app, RunOptions& o) {
  app.add_option("--points", o.points,
                 "Values at points instead of a map: a list (x y z per line, CSV or blanks) or a "
                 "surface mesh (.ply, .obj, .vtk), written back with a value and colour per vertex")
      ->group(g_points);
  app.add_flag("--at-atoms", o.at_atoms,
               "Each atom's potential from all the other atoms: a table and a PDB with the value "
               "in the B-factor column")
      ->group(g_points);
  app.add_option("--offset", o.offset,
                 "Å to move each mesh vertex along its normal before evaluating (ChimeraX: 1.4; "
                 "default 0, or the --preset's)")
      ->group(g_points);
  app.add_option("--colour-range", o.colour_range,
                 "Mesh colours: red at -R, white at 0, blue at +R (default: the 95th percentile of "
                 "|V|)")
      ->group(g_points);
}

/// --points / --at-atoms as a PointsRequest; the grid options have no meaning there.
void set_points(const CLI::App& app, const RunOptions& o, RunConfig& config) {
  const bool points = app.count("--points") > 0, at_atoms = o.at_atoms;
  if (!points && !at_atoms) {
    for (const char* option : {"--offset", "--colour-range"})
      if (app.count(option) > 0)
        throw UsageError(fmt::format("{} applies to --points or --at-atoms", option));
    return;
  }
  if (points && at_atoms) throw UsageError("--points and --at-atoms: one or the other");
  for (const char* option :
       {"--grid", "--spacing", "--padding", "--origin", "--center", "--model-grid"})
    if (app.count(option) > 0)
      throw UsageError(
          fmt::format("{} places a map's grid; a points run computes at the points "
                      "it is given",
                      option));
  PointsRequest request;
  if (at_atoms) {
    request.source = PointsRequest::Source::kAtoms;
  } else {
    request.path = o.points;
    const std::string lower = [&] {
      std::string text = o.points;
      for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return text;
    }();
    const bool mesh = lower.ends_with(".ply") || lower.ends_with(".obj") || lower.ends_with(".vtk");
    request.source = mesh ? PointsRequest::Source::kMesh : PointsRequest::Source::kList;
  }
  if (app.count("--offset") > 0) {
    if (request.source != PointsRequest::Source::kMesh)
      throw UsageError(
          "--offset moves mesh vertices along their normals: give --points "
          "with a .ply, .obj or .vtk surface");
    request.offset = o.offset;
  } else if (!o.preset.empty() && request.source == PointsRequest::Source::kMesh) {
    request.offset = find_preset(o.preset).surface_offset;
  }
  if (app.count("--colour-range") > 0) {
    if (!(std::isfinite(o.colour_range) && o.colour_range > 0.0))
      throw UsageError(
          fmt::format("--colour-range must be a positive number, got {}", o.colour_range));
    request.colour_range = o.colour_range;
  } else if (!o.preset.empty()) {
    request.colour_range = find_preset(o.preset).colour_range;
  }
  config.points = request;
}

void add_grid_and_physics_options(CLI::App& app, RunOptions& o) {
  app.add_option("--grid,-g", o.grid_counts,
                 "Points per axis: N (cubic voxels) or NX NY NZ; default 129 unless --spacing")
      ->expected(1, 3)
      ->group(g_grid);
  app.add_option("--spacing,-s", o.spacing,
                 "Grid spacing in Å (alone: counts derived from the box)")
      ->group(g_grid);
  app.add_option("--padding", o.padding, "Å added around the atoms on every side")
      ->capture_default_str()
      ->group(g_grid);
  app.add_option("--origin", o.origin, "First grid point X Y Z (Å)")->expected(3)->group(g_grid);
  app.add_option("--center", o.center, "Box centre X Y Z (Å)")->expected(3)->group(g_grid);
  app.add_option("--model-grid", o.model_grid,
                 "--models each: common (one grid around every model, maps compare point by "
                 "point) | own (each model's own grid)")
      ->capture_default_str()
      ->check(CLI::IsMember({"common", "own"}))
      ->group(g_grid);

  app.add_option("--units", o.units, "kT/e | kcal/mol/e | kJ/mol/e | V | e/A")
      ->capture_default_str()
      ->group(g_phys);
  app.add_option("--temperature", o.temperature, "K (for kT/e and the Debye length)")
      ->capture_default_str()
      ->group(g_phys);
  app.add_option("--dielectric", o.dielectric,
                 "Relative permittivity; with --dielectric-model distance, k of eps = k*r "
                 "(per Å). Default 1, or 78.54 (water) with --ionic-strength")
      ->capture_default_str()
      ->group(g_phys);
  app.add_option("--dielectric-model", o.dielectric_model,
                 "constant | distance (eps = k*r with k from --dielectric, ChimeraX's "
                 "distance-dependent dielectric)")
      ->capture_default_str()
      ->check(CLI::IsMember({"constant", "distance"}))
      ->group(g_phys);
  app.add_option("--ionic-strength", o.ionic_strength,
                 "mol/L: Debye-Hückel screening exp(-r/λ)/r, λ from I, --temperature and "
                 "--dielectric (0.15 M in water at 298.15 K: λ = 7.857 Å)")
      ->capture_default_str()
      ->group(g_phys);
  app.add_option("--preset", o.preset,
                 "chimerax | pymol | pmepot: that tool's constant, units, dielectric and grid "
                 "defaults (ChimeraX coulombic: eps = 4r, 331.62 kcal/mol/e, 1 Å grid; PyMOL "
                 "map_new coulomb: eps = 2, 557 kT/e, 2/3 Å grid; VMD PMEpot: --periodic, the "
                 "reciprocal part of smooth PME only, Gaussian charges, beta 0.25/Å, kT/e at "
                 "300 K, 1 Å grid over the cell; >1 % off the exact periodic map near charges)")
      ->group(g_phys);
  app.add_option("--min-distance", o.min_distance,
                 "Distances below this (Å) are clamped to it: no infinities at atom centres")
      ->capture_default_str()
      ->group(g_phys);
}

void add_compute_options(CLI::App& app, RunOptions& o) {
  ComputeRequest& compute = o.config.compute;
  MethodRequest& method = o.config.method;
  OutputRequest& out = o.config.output;
  ValidationRequest& validation = o.config.validation;
  app.add_option("--device,-d", o.device,
                 "auto | cpu | cuda | cuda:N[,M...] (auto, cuda: every GPU)")
      ->capture_default_str()
      ->group(g_comp);
  app.add_option("--kernel,-k", compute.backend.kernel, "Potential kernel (see `dcs kernels`)")
      ->group(g_comp);
  app.add_option("--reduction", compute.backend.reduction,
                 "Statistics reduction (see `dcs kernels`)")
      ->group(g_comp);
  app.add_option("--threads,-j", compute.backend.threads, "CPU threads (0: all)")->group(g_comp);
  app.add_option("--method", o.method, method_help())
      ->check(CLI::IsMember(method_names_list()))
      ->group(g_comp);
  app.add_option("--msm-error", method.msm_error,
                 "--method msm: relative RMS error target, 1e-5..1e-1 (picks lattice spacing, "
                 "cutoff and interpolation order)")
      ->capture_default_str()
      ->group(g_comp);
  app.add_flag(
         "--periodic", o.periodic,
         "The periodic potential of the unit cell and all its images (Ewald summation: "
         "real space + smooth PME, tin-foil boundary, a net charge neutralised by a uniform "
         "background, mean over the cell 0), the same as --method ewald; the cell from "
         "the trajectory's frames, --box or the PQR's CRYST1; the grid spans the cell "
         "unless --origin/--center/--padding place it. On the GPUs where there are any (--device)")
      ->group(g_comp);
  app.add_option("--map-axes", o.map_axes,
                 "--periodic, triclinic cell: the map's axes along the cell vectors a, b, c "
                 "(cell, the default: the map is the cell and tiles the lattice) or along x, y, "
                 "z over the box that bounds the cell (box)")
      ->check(CLI::IsMember({"cell", "box"}))
      ->group(g_comp);
  app.add_option("--profile", o.profile,
                 "Also the mean potential along an axis, averaged over the planes across it "
                 "(x, y, z; or a cell vector a, b, c of a --periodic map: planes of constant "
                 "fractional coordinate), as /profile in the HDF5 file (/trajectory/profile for a "
                 "trajectory's mean map) and <stem>.profile.csv beside the map; for a trajectory "
                 "also each frame's profile (/trajectory/profile/frame_potential and "
                 "<stem>.profile_frames.csv)")
      ->check(CLI::IsMember({"x", "y", "z", "a", "b", "c"}))
      ->group(g_io);
  app.add_option("--box", o.box,
                 "The unit cell of the atom file(s): a,b,c (Å) or a,b,c,alpha,beta,gamma "
                 "(degrees), replacing a CRYST1 record (for --periodic)")
      ->group(g_comp);
  app.add_option("--ewald-error", method.ewald_error,
                 "--periodic: relative RMS error target, 1e-8..1e-2, measured in every map run "
                 "against a float64 Ewald sum (exit 4 when missed)")
      ->capture_default_str()
      ->group(g_comp);
  app.add_option("--memory-limit", o.memory_limit,
                 "Host memory the pipeline may hold, e.g. 2G or 512M (default: half of the "
                 "memory available, cgroup limits included)")
      ->group(g_comp);
  app.add_option("--cpu-workers", compute.cpu_workers,
                 "CPU backends side by side, threads split between them (simulates several "
                 "devices; the map is identical)")
      ->capture_default_str()
      ->group(g_comp);
  app.add_option("--gpu-workers", compute.gpu_workers,
                 "Backends per GPU, each on its own stream, so that one frame's host work and "
                 "transfers overlap another's kernels, 1..8 (default: 2 for a trajectory, 1 "
                 "otherwise; the map is identical)")
      ->check(CLI::Range(1u, 8u))
      ->group(g_comp);
  app.add_flag("--null-output", out.null_output,
               "Benchmarks: compute and reduce every slab but write nothing")
      ->group(g_comp);
  app.add_option("--shard", o.shard,
                 "Batch share for job arrays: I/N (0-based) or slurm (from SLURM_ARRAY_TASK_*)")
      ->group(g_comp);
  app.add_option("--mpi-schedule", o.mpi_schedule,
                 "MPI ranks sharing one map: static (blocks of slabs) or dynamic")
      ->capture_default_str()
      ->check(CLI::IsMember({"static", "dynamic"}))
      ->group(g_comp);
  app.add_option("--checkpoint-interval", out.checkpoint_seconds,
                 "Seconds between checkpoints of the partial file (what a killed run keeps)")
      ->capture_default_str()
      ->group(g_comp);
  app.add_flag("--debug-sync", compute.backend.debug_sync,
               "Synchronise and check after every kernel")
      ->group(g_comp);

  app.add_flag("--validate", validation.enabled,
               "Compare with the float64 reference; exit 4 above tolerance")
      ->group(g_val);
  app.add_option("--tolerance", o.tolerance,
                 "Relative to max|V| (default: 1e-5 for float32 backends)")
      ->group(g_val);
  app.add_option("--validate-points", validation.points,
                 "Points compared (0: all of small grids, else a sample)")
      ->group(g_val);
}

/// The grid and physics options as given on the command line (resolve_grid_and_physics()
/// applies the defaults and the preset).
GridPhysicsOptions grid_physics_options(const CLI::App& app, const RunOptions& o) {
  GridPhysicsOptions options;
  options.counts = o.grid_counts;
  if (app.count("--spacing")) options.spacing = o.spacing;
  if (app.count("--padding")) options.padding = o.padding;
  if (!o.origin.empty()) options.origin = Vec3{o.origin[0], o.origin[1], o.origin[2]};
  if (!o.center.empty()) options.center = Vec3{o.center[0], o.center[1], o.center[2]};
  if (app.count("--units")) options.units = o.units;
  if (app.count("--temperature")) options.temperature = o.temperature;
  if (app.count("--dielectric")) options.dielectric = o.dielectric;
  if (app.count("--dielectric-model")) options.dielectric_model = o.dielectric_model;
  if (app.count("--ionic-strength")) options.ionic_strength = o.ionic_strength;
  if (app.count("--min-distance")) options.min_distance = o.min_distance;
  options.preset = o.preset;
  return options;
}

/// The atom files listed in `path` ("-": stdin), one a line, blank lines and "#" lines skipped.
std::vector<std::string> read_atom_list(const std::string& path) {
  std::ifstream file;
  if (path != "-") {
    file.open(path);
    if (!file) throw InputError(path, 0, "cannot read this --atoms-from list");
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::vector<std::string> inputs;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    inputs.push_back(line.substr(first, line.find_last_not_of(" \t") + 1 - first));
  }
  if (in.bad()) throw InputError(path, 0, "read error in this --atoms-from list");
  if (inputs.empty()) throw UsageError(fmt::format("--atoms-from {} lists no atom files", path));
  return inputs;
}

/// --periodic (= --method ewald) and --box: the method, the cell of atom files, a grid over the
/// cell unless the user places it, every frame's cell required (the device as for any method:
/// the GPUs where there are any, kernels/src/periodic).
void set_periodic(const CLI::App& app, const RunOptions& o, RunConfig& config) {
  if (!o.box.empty() || app.count("--box") > 0) config.input.box = parse_box(o.box);
  if (o.periodic && app.count("--method") > 0 && config.method.kind != Method::kEwald)
    throw UsageError(fmt::format("--periodic is --method ewald; it contradicts --method {}",
                                 to_string(config.method.kind)));
  if (config.method.pmepot && app.count("--method") > 0 && config.method.kind != Method::kEwald)
    throw UsageError(fmt::format(
        "--preset pmepot maps a periodic cell (--method ewald); it contradicts --method {}",
        to_string(config.method.kind)));
  if (o.periodic || config.method.pmepot) config.method.kind = Method::kEwald;
  // PMEpot's map is measured against the float64 reciprocal sum at its own accuracy.
  if (config.method.pmepot && app.count("--ewald-error") == 0)
    config.method.ewald_error = periodic::kPmepotError;
  if (!o.map_axes.empty() && config.method.kind != Method::kEwald)
    throw UsageError(fmt::format(
        "--map-axes {} orients a periodic map over its cell; it needs --periodic", o.map_axes));
  if (config.method.kind != Method::kEwald) return;
  config.grid.cell_box = o.origin.empty() && o.center.empty() && app.count("--padding") == 0;
  if (!o.map_axes.empty() && !config.grid.cell_box)
    throw UsageError(fmt::format(
        "--map-axes {} lays the grid over the unit cell; --origin, --center and --padding place "
        "an x, y, z box instead: give one or the other",
        o.map_axes));
  config.grid.map_axes = o.map_axes == "box" ? MapAxes::kBox : MapAxes::kCell;
  if (config.method.pmepot && (!config.grid.cell_box || config.grid.map_axes == MapAxes::kBox))
    throw UsageError(
        "--preset pmepot: the map is PMEpot's PME mesh over the cell, so its grid is the cell's: "
        "leave out --origin, --center, --padding and --map-axes box");
  if (config.trajectory) config.trajectory->periodic = true;
}

/// --threads beyond this many times the hardware threads only adds scheduling overhead
/// (100000 threads ran 25x slower); larger requests are capped with a warning.
constexpr unsigned kMaxThreadsPerHardwareThread = 4;

}  // namespace

void add_run_options(CLI::App& app, RunOptions& options) {
  add_io_options(app, options);
  add_trajectory_options(app, options);
  add_points_options(app, options);
  add_grid_and_physics_options(app, options);
  add_compute_options(app, options);
}

unsigned capped_threads(unsigned requested, const char* option) {
  const unsigned hardware = resolve_threads(0);
  const unsigned cap = kMaxThreadsPerHardwareThread * std::max(1u, hardware);
  if (requested <= cap) return requested;
  log().warn("{} {} is more than {} x the {} hardware threads; using {}", option, requested,
             kMaxThreadsPerHardwareThread, hardware, cap);
  return cap;
}

RunConfig make_run_config(const CLI::App& app, RunOptions& o, std::string command_line) {
  RunConfig config = std::move(o.config);
  if (!o.atoms_from.empty()) {
    const std::vector<std::string> listed = read_atom_list(o.atoms_from);
    config.input.files.insert(config.input.files.end(), listed.begin(), listed.end());
  }
  const bool trajectory = app.count("--topology") + app.count("--trajectory") > 0;
  for (const char* option : {"--frames", "--select", "--align", "--frame-maps", "--pbc",
                             "--center-on", "--strict", "--decode-threads"})
    if (!trajectory && app.count(option) > 0)
      throw UsageError(fmt::format("{} applies to --topology with --trajectory", option));
  if (trajectory) {
    config.trajectory = o.trajectory;
    if (app.count("--frames") > 0) config.trajectory->frames = parse_frames(o.frames);
    if (!o.pbc.empty()) config.trajectory->pbc = parse_pbc(o.pbc);
  }
  config.method.kind = parse_method(o.method);
  resolve_grid_and_physics(grid_physics_options(app, o), config);
  set_periodic(app, o, config);
  set_points(app, o, config);
  config.input.models = parse_models(o.models);
  config.input.common_model_grid = o.model_grid == "common";
  config.output.write_hdf5 = !o.no_hdf5;
  config.output.write_dx = app.count("--dx") > 0;
  config.output.dx_path = o.dx_arg;
  config.output.write_mrc = app.count("--mrc") > 0;
  config.output.mrc_path = o.mrc_arg;
  if (!o.profile.empty()) config.output.profile = parse_profile_axis(o.profile);
  if (o.dx_arg.size() > 3 && o.dx_arg.ends_with(".gz")) config.output.dx_gzip = true;
  if (app.count("--tolerance")) config.validation.tolerance = o.tolerance;
  if (!o.memory_limit.empty()) config.compute.memory_limit = parse_size(o.memory_limit);
  config.compute.device = parse_device(o.device);
  if (!o.shard.empty()) config.input.shard = parse_shard(o.shard);
  config.compute.mpi_schedule = parse_mpi_schedule(o.mpi_schedule);
  config.command_line = std::move(command_line);
  config.compute.backend.threads = capped_threads(config.compute.backend.threads, "--threads");
  return config;
}

}  // namespace dcs::app
