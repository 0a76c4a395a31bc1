// Maps and values in memory for a library caller (the Python package, python/): the atoms come
// as a System built from arrays, the results stay in memory. The same engine as run(): the
// workers of --device, the slab engine and the points job's pieces, so a map or a list of values
// is bit-identical to what the command line writes for the same atoms, grid and settings. A map
// in memory is written as the command line's HDF5 file by the one-map job itself.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/map.hpp"
#include "dcs/pipeline/progress.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/types.hpp"

namespace dcs {

/// One map in host memory.
struct MemoryMap {
  std::unique_ptr<HostBuffer> values;  ///< metadata.grid.points() floats, x fastest
  /// The grid, physics, Coulomb factor, statistics and provenance (version, backend, kernel,
  /// reduction, device); no input file, no command line.
  /// metadata.colour_range as the command line's file records it (colour_range_of()).
  MapMetadata metadata;
  double compute_seconds = 0.0;  ///< the engine's wall time, first slab to last
};

/// Workers kept between a library caller's calls: the backends of config.compute.device (streams,
/// pinned and device buffers; the CUDA backend's take tens of milliseconds to make) made once
/// and reused while the device request, backend options and CPU worker count stay the same.
/// Not thread-safe: one call at a time may use a cache (the Python module guards its own).
class WorkerCache {
 public:
  WorkerCache();
  ~WorkerCache();
  WorkerCache(const WorkerCache&) = delete;
  WorkerCache& operator=(const WorkerCache&) = delete;
  struct State;  ///< in_memory.cpp

 private:
  friend State& cache_state(WorkerCache& cache);
  std::unique_ptr<State> state_;
};

/// The grid config.grid places around `system` (what the command line prints as "grid: ...").
/// Throws what run() throws for the same request (UsageError, InputError naming `source`).
GridSpec place_grid(const RunConfig& config, const System& system, const std::string& source);

/// The map of `system` on the grid place_grid() gives, with config.physics, computed by the
/// workers of config.compute.device and config.compute.backend (every GPU for auto and cuda)
/// through the slab engine. Atoms are checked first (InputError naming `source`, as for a file's
/// atoms), then the potential bound and the memory the map needs (UsageError). Throws
/// InterruptedError when dcs::interrupt_requested() becomes true, every worker stopped. With a
/// cache, its workers (made first if it holds none or others).
MemoryMap compute_map(const RunConfig& config, const System& system, const std::string& source,
                      ProgressSink* progress = nullptr, WorkerCache* cache = nullptr);

/// The potential at `points` (Å) from `system`, as a points run (--points) computes it with
/// the workers of config.compute.device: one value per point, in order. `points_source` names the
/// points in errors (a point's coordinate not finite or beyond 1e6 Å: InputError).
std::vector<float> compute_points(const RunConfig& config, const System& system,
                                  const std::string& source, const std::vector<Vec3>& points,
                                  const std::string& points_source,
                                  ProgressSink* progress = nullptr, WorkerCache* cache = nullptr);

/// The potential at each atom of `system` from all the other atoms, as --at-atoms computes it
/// (the points job's atom set and workers: the same values, bit for bit), in atom order.
std::vector<float> compute_at_atoms(const RunConfig& config, const System& system,
                                    const std::string& source, ProgressSink* progress = nullptr,
                                    WorkerCache* cache = nullptr);

/// The colour range for viewers of a map of `values` (grid.points() floats, x fastest) by the
/// rule and sample of the command line's file attribute /potential colour_range
/// (io::ColourRangeSink with its defaults).
ColourRange colour_range_of(const GridSpec& grid, const float* values);

/// Writes `values` (grid.points() floats, x fastest) as the HDF5 file the command line writes
/// (config.output.hdf5_path, config.output.compression, config.output.force): the store,
/// statistics, colour range, the atoms of `system` (may be empty of atoms) and the provenance
/// `made_by` (backend, kernel, reduction, device, version of the run that computed the values) with
/// config.physics. The same checks and atomic commit as a run: nothing is left under the name on
/// failure. config.output.write_hdf5, write_dx (dx_path, dx_gzip) and write_mrc (mrc_path) choose
/// the formats: each written by the run's own writer (one DX dialect, one MRC layout).
void write_map(const RunConfig& config, const System& system, const GridSpec& grid,
               const float* values, const Provenance& made_by);

}  // namespace dcs
