// The options of a map run: the CLI11 table, and the typed RunConfig made from what was given
// (the one place a command-line string becomes a device list, a size, a shard or a mode).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dcs/run.hpp"

namespace dcs::app {

/// Values as CLI11 fills them; make_run_config() types them.
struct RunOptions {
  RunConfig config;
  std::vector<std::int64_t> grid_counts;
  double spacing = 0.0;
  std::vector<double> origin, center;
  /// Shown as the defaults in --help; given or not is app.count() (grid_physics_options()).
  double padding = GridRequest{}.padding;
  double temperature = Physics{}.temperature, dielectric = Physics{}.dielectric;
  double ionic_strength = Physics{}.ionic_strength, min_distance = Physics{}.min_distance;
  std::string units = "kT/e";
  std::string dielectric_model = "constant";
  std::string preset;
  std::string dx_arg, mrc_arg;
  bool no_hdf5 = false;
  double tolerance = 0.0;
  std::string memory_limit;
  std::string model_grid = "common";
  std::string models = "first";
  std::string device = "auto";
  std::string shard;
  std::string mpi_schedule = "static";
  std::string atoms_from;        ///< --atoms-from: a file listing atom files ("-": stdin)
  TrajectoryRequest trajectory;  ///< --topology, --trajectory, --select, --align
  std::string frames;            ///< --frames
  std::string pbc;               ///< --pbc
  std::string method = "exact";  ///< --method (dcs/method.hpp)
  bool periodic = false;         ///< --periodic: --method ewald
  std::string box;               ///< --box a,b,c[,alpha,beta,gamma]
  std::string map_axes;          ///< --map-axes cell|box (empty: not given)
  std::string profile;           ///< --profile x|y|z|a|b|c (empty: none)
  std::string points;            ///< --points FILE
  bool at_atoms = false;         ///< --at-atoms
  double offset = 0.0;           ///< --offset
  double colour_range = 0.0;     ///< --colour-range
};

/// Adds every option of a map run to `app` (groups: input and output, grid, physics, compute,
/// validation).
void add_run_options(CLI::App& app, RunOptions& options);

/// The typed configuration of a parsed command line; checks every option against its limits
/// (dcs/limits.hpp) before any file is read. Throws UsageError.
RunConfig make_run_config(const CLI::App& app, RunOptions& options, std::string command_line);

/// `requested` threads, capped (with a warning naming `option`) at a few per hardware thread.
unsigned capped_threads(unsigned requested, const char* option);

}  // namespace dcs::app
