// Inputs: the maps a run makes (one per input, or per model with --models each), and reading
// one map's atoms and placing its grid.
#pragma once

#include <algorithm>
#include <future>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/map.hpp"
#include "dcs/pipeline/inputs.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/types.hpp"

namespace dcs::pipeline {

/// One map to compute: an input file, or one model of it (--models each).
struct Job {
  /// The whole input (--models first, average): what a bare input path converts to.
  Job(std::string input_path, long long model_number = -1)  // NOLINT: implicit on purpose
      : input(std::move(input_path)), model(model_number) {}
  std::string input;
  long long model = -1;  ///< --models each: the MODEL number; -1: the input as a whole
};

/// The models of the input read last (--models each): its jobs run one after another, so the
/// file is read once for all its maps.
struct ModelCache {
  std::string input;
  std::vector<System> models;
  std::optional<GridSpec> common_grid;  ///< around every model's atoms (--model-grid common)
  /// --models first: the first map's atoms, being read on another thread while the devices
  /// start (prefetch_first_atoms); read_map_input takes them, or their read error, in place.
  std::string prefetched_input;
  std::future<System> prefetched;
};

/// The maps of a run, in order. With --models each the files are read here to list their
/// models (the first input's stay in `cache`); an input that cannot be read becomes one job of
/// model -1, whose run reports the error.
std::vector<Job> make_jobs(const RunConfig& config, ModelCache& cache);

/// Starts reading the first job's atoms on its own thread (--models first, a regular file), so
/// that the read overlaps what comes before it (CUDA contexts, checks across ranks). A read
/// that fails fails its map where the serial read would have; one never waited for is joined
/// with `cache`. The reader polls dcs::interrupt_requested(), so a signal still stops it.
void prefetch_first_atoms(const RunConfig& config, const std::vector<Job>& jobs, ModelCache& cache);

/// The bounding box of atom centres, grown one set of atoms at a time (a trajectory's frames).
struct AtomBox {
  Vec3 lo{kEmpty, kEmpty, kEmpty}, hi{-kEmpty, -kEmpty, -kEmpty};
  bool empty() const noexcept { return lo[0] > hi[0]; }
  void include(const System& system) {
    for (const Atom& atom : system.atoms) include(atom.position);
  }
  void include(const Vec3& p) {
    for (std::size_t a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], p[a]);
      hi[a] = std::max(hi[a], p[a]);
    }
  }
  void include(const AtomBox& other) {
    for (std::size_t a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], other.lo[a]);
      hi[a] = std::max(hi[a], other.hi[a]);
    }
  }

 private:
  static constexpr double kEmpty = std::numeric_limits<double>::infinity();
};

/// One map's atoms and grid.
struct MapInput {
  std::string input;
  long long model = -1;             ///< --models each: the model mapped
  std::vector<long long> averaged;  ///< --models average: the models averaged
  System system;
  /// The mapped atoms' box over every frame (a trajectory's, for the box check); empty: that of
  /// `system`.
  AtomBox atoms_box;
  GridSpec grid;
  double read_seconds = 0.0;
};

/// Reads the atoms of `job` and places the grid (every MPI rank does this itself): --models
/// first reads the first model; average merges every model with charges / M and places the
/// grid around all of them; each takes the job's model (from `cache` when it holds the file)
/// on the common grid of all models unless --model-grid own.
MapInput read_map_input(const RunConfig& config, const Job& job, ModelCache* cache);

/// What --models did for this map (for the file's attributes and the summary).
ModelInfo model_info(const RunConfig& config, const MapInput& input);

}  // namespace dcs::pipeline
