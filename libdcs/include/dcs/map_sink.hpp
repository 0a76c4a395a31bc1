// Outputs as sinks of the map pipeline (like OpenMM's reporters): each receives the map's
// metadata, then its z-slabs in increasing z order, then the finished metadata (statistics,
// validation, provenance), and finally commits or aborts. No sink needs the whole map in memory;
// a sink that must reorder values (OpenDX lists z fastest) reads them back through MapReader.
// A new output format is one new sink, with no change to the pipeline.
#pragma once

#include <cstdint>
#include <string>

#include "dcs/grid.hpp"
#include "dcs/map.hpp"
#include "dcs/stats.hpp"

namespace dcs {

/// Read access to the finished map (the pipeline's HDF5 store).
class MapReader {
 public:
  virtual ~MapReader() = default;
  /// Planes of `slab`, x fastest.
  virtual void read_planes(const Slab& slab, float* out) = 0;
  /// x-columns [x_begin, x_begin + count) of every (y, z): out[k][j][i - x_begin].
  virtual void read_x_columns(std::int64_t x_begin, std::int64_t count, float* out) = 0;
  /// The x-width that reads whole storage chunks (the best width for read_x_columns).
  virtual std::int64_t x_chunk() const = 0;
};

class MapSink {
 public:
  virtual ~MapSink() = default;
  /// For messages: "OpenDX out/mol.dx".
  virtual std::string name() const = 0;
  /// False for sinks that only read the finished map back in finish() (the pipeline then does not
  /// feed them slabs, nor read back slabs a resumed run did not compute).
  virtual bool wants_slabs() const { return true; }
  /// For a sink that wants slabs: whether it also needs the slabs a resumed run (or MPI rank 0
  /// gathering a map its ranks wrote) finds done in the store. False lets the pipeline skip
  /// reading them back for this sink, which then sees only the slabs computed now (in z order,
  /// with gaps) and must read what else it needs through MapReader.
  virtual bool wants_done_slabs() const { return wants_slabs(); }
  /// Host memory the sink holds at most (for the pipeline's memory budget).
  virtual std::size_t memory_bytes() const { return 0; }
  /// Called once before any slab, with the grid, physics and provenance known so far.
  virtual void begin(const MapMetadata& meta) = 0;
  /// Planes [slab.z_begin, slab.z_begin + slab.z_count), x fastest, and each plane's statistics;
  /// called in increasing z order, from one thread.
  virtual void write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) = 0;
  /// Every slab is in; `meta` holds the statistics, validation and provenance. `map` reads the
  /// whole map back.
  virtual void finish(const MapMetadata& meta, MapReader& map) = 0;
  /// Makes the output complete and durable under its temporary name (fsync: the slow part of
  /// committing), so that commit() only renames and a run's outputs appear close together.
  /// Called after every sink finished, before any output is committed. Default: nothing.
  virtual void sync() {}
  /// Makes the output visible under its final name (after every sink finished and synced).
  virtual void commit() = 0;
  /// Removes whatever the sink wrote. Never throws.
  virtual void abort() noexcept = 0;
};

}  // namespace dcs
