// Everything a writer needs to describe a finished map besides its values.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/method.hpp"
#include "dcs/physics.hpp"
#include "dcs/profile.hpp"
#include "dcs/stats.hpp"

namespace dcs {

struct Provenance {
  std::string program = "dcs";
  std::string version;       ///< program version, e.g. "0.1.0 (git abc1234)"
  std::string command_line;  ///< as typed, arguments shell-quoted
  std::string input_path;
  std::string input_sha256;
  std::string backend;    ///< "cuda", "cpu-fast", "cpu-reference"
  std::string kernel;     ///< potential variant
  std::string reduction;  ///< statistics variant
  std::string device;     ///< device description
  std::string hostname;
  std::string created;   ///< ISO 8601 UTC time the run started
  std::string settings;  ///< "name = value" lines of every setting that changes values
                         ///< (what --resume compares)
  std::vector<std::pair<std::string, double>> timings;  ///< stage name -> seconds
};

/// Which model(s) of a multi-model input (NMR ensemble, MD snapshots) the map is of.
struct ModelInfo {
  /// --models: "first", "each" or "average"; empty for a map of no atom file's models (a
  /// trajectory's mean), which has no model attributes
  std::string mode = "first";
  long long model = 1;    ///< first, each: the model mapped (MODEL serial or ordinal)
  std::size_t count = 1;  ///< models in the input file
  /// average: the models averaged (their atoms summed with charges / count); else empty
  std::vector<long long> averaged;
};

/// One line for logs, summaries and file comments: "model 5 (of 3 models; --models each)",
/// "mean of 3 models (--models average)"; empty for a single-model input read with --models
/// first.
inline std::string describe(const ModelInfo& models) {
  const std::string count =
      std::to_string(models.count) + (models.count == 1 ? " model" : " models");
  if (models.mode.empty()) return {};
  if (models.mode == "average") return "mean of " + count + " (--models average)";
  if (models.mode == "first" && models.count <= 1) return {};
  return "model " + std::to_string(models.model) + " (of " + count + "; --models " + models.mode +
         ")";
}

/// The range a viewer's colour ramp should span: symmetric limits -high .. +high about 0, with
/// `high` a high percentile of |V| (the map's min/max, thousands of kT/e next to atom centres at
/// ε = 1, would show one colour everywhere). `low` is the |V| below which values read as "near
/// zero". Both in the map's units; estimated by dcs::io::ColourRangeSink (dcs/io/colour_range.hpp).
struct ColourRange {
  double low = 0.0;               ///< percentile low_percentile of |V|
  double high = 0.0;              ///< percentile high_percentile of |V|
  double low_percentile = 1.0;    ///< e.g. 1
  double high_percentile = 99.0;  ///< e.g. 99
  std::uint64_t values = 0;       ///< |V| values it was estimated from (0: not known)
  /// Empty: high is the high_percentile-th percentile of |V|. Else what high is instead, e.g. a
  /// --preset's own colour scale, which then is the map's one range (summary, file, preview).
  std::string source;
  bool known() const noexcept { return values > 0; }
};

/// --method and, for msm, its parameters and the error every msm run measures against the
/// float64 reference at the --validate sample (pipeline/src/validation.hpp).
struct MethodInfo {
  Method method = Method::kExact;  ///< the file's /method name is to_string(method)
  // msm only (zero for exact):
  double spacing = 0.0;  ///< h, Å
  double cutoff = 0.0;   ///< a, Å
  int order = 0;         ///< interpolation order (4 cubic, 6 quintic)
  int split = 0;         ///< k of the Taylor-C_k splitting
  double target = 0.0;   ///< --msm-error / --ewald-error: the relative RMS error aimed for
  // ewald only (cutoff: the real-space cutoff; order: the PME B-spline order):
  UnitCell cell;                 ///< the map's cell (a trajectory's: its first frame's)
  double beta = 0.0;             ///< Ewald parameter, Å⁻¹
  std::array<int, 3> mesh{};     ///< PME mesh points along a, b, c
  double net_charge = 0.0;       ///< e, neutralised by a uniform background
  bool reciprocal_only = false;  ///< --preset pmepot: Gaussian charges, reciprocal part only
  bool tiles = false;        ///< the grid is the cell's points i·a/na + ...: the map tiles the box
  bool measured = false;     ///< the error below was measured
  std::uint64_t points = 0;  ///< points compared
  bool all_points = false;   ///< every grid point (else a sample)
  double rms_rel_error = 0.0;  ///< rms(V - V_exact) / rms(V_exact) over the points
  double max_rel_error = 0.0;  ///< max|V - V_exact| / max|V| of the map (as --validate)
  bool met = false;            ///< rms_rel_error <= target
  /// Work estimated before the run (dcs/msm_plan.hpp: msm_work), in exact pair evaluations:
  /// this msm's, and the exact method's on the same atoms and grid.
  double estimated_work = 0.0, estimated_exact_work = 0.0;
};

struct MapMetadata {
  GridSpec grid;
  Physics physics;
  double coulomb_factor = 0.0;  ///< in factor_unit(physics.unit)
  GridStats stats;
  Validation validation;
  MethodInfo method;
  Provenance provenance;
  ModelInfo models;
  ColourRange colour_range;  ///< known once every slab is in (written by the store's finish())
  Profile profile;           ///< --profile's plane means (empty without), before finish()
};

}  // namespace dcs
