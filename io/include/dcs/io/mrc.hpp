// MRC2014 maps (--mrc): the one grid format PyMOL, VMD, ChimeraX, Mol*, gemmi, mrcfile and
// ParaView all read. Written as header, then z-slabs in order (each pwrite()n at its offset of
// the data block by a small pool of writers, which also write it back: parallel_writes.hpp),
// then the header again with the statistics; the file is complete under its final name or
// absent (AtomicFile).
//
// Header (1024 bytes, 256 little-endian 4-byte words;
// https://www.ccpem.ac.uk/mrc_format/mrc2014.php):
//   1-3   NX NY NZ         = nx ny nz (columns = x fastest, rows = y, sections = z)
//   4     MODE             = 2 (float32)
//   5-7   NXSTART..NZSTART = 0 0 0 (the position is in ORIGIN, words 50-52)
//   8-10  MX MY MZ         = nx ny nz: sampling of the "unit cell", so that
//   11-13 CELLA            = (nx*hx, ny*hy, nz*hz) Å and voxel size CELLA/MX == (hx, hy, hz):
//                            what mrcfile (voxel_size), gemmi (spacing) and ChimeraX (step =
//                            xlen/mx) compute. (n-1)*h would shrink every voxel by (n-1)/n.
//   14-16 CELLB            = 90 90 90; for a grid along a triclinic cell (--map-axes cell) the
//                            angles between its step vectors (alpha = b^c, beta = a^c,
//                            gamma = a^b), CELLA then being the cell's lengths, so that readers
//                            place voxel (i, j, k) at i*a/nx + j*b/ny + k*c/nz (a along x, b in
//                            the xy plane: the cell's reduced form)
//   17-19 MAPC MAPR MAPS   = 1 2 3 (x, y, z)
//   20-22 DMIN DMAX DMEAN  = statistics of the values (before finish(): DMAX < DMIN, DMEAN <
//                            both, RMS < 0, the standard's "not determined" marks)
//   23    ISPG             = 1 (a single volume);  24 NSYMBT = 0 (no extended header)
//   27    EXTTYP           = 4 zero bytes (no extended header);  28 NVERSION = 20140
//   50-52 ORIGIN           = the grid origin (x, y, z) in Å: point (i, j, k) lies at
//                            ORIGIN + (i*hx, j*hy, k*hz), so the map overlays the molecule
//   53    MAP              = "MAP ";  54 MACHST = 0x44 0x44 0x00 0x00 (little-endian)
//   55    RMS              = the standard deviation of the values (MRC2014: "RMS deviation of
//                            map from mean density"), not GridStats::rms
//   56    NLABL, 57-256 ten 80-character labels (space padded): program, units and physics.
// Data: nx*ny*nz float32, x fastest, then y, then z (the order of dcs's slabs).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "dcs/map.hpp"
#include "dcs/map_sink.hpp"
#include "dcs/stats.hpp"

namespace dcs::io {

inline constexpr std::size_t kMrcHeaderBytes = 1024;

/// The 1024-byte header for `meta`'s grid and physics; with `stats`, words 20-22 and 55 hold
/// them, without, the "not determined" marks. Throws UsageError for a grid beyond int32 counts.
std::array<unsigned char, kMrcHeaderBytes> mrc_header(const MapMetadata& meta,
                                                      const GridStats* stats);

/// Streams one MRC2014 map to `final_path` through an AtomicFile. One thread calls it; its
/// slabs are written by `writers` threads (0: io's default, DCS_WRITERS or min(4, cores / 2)).
class MrcWriter {
 public:
  /// Checks the path (IoError: it exists without `force`, its directory is missing, ...) and
  /// creates the temporary file beside it.
  MrcWriter(std::string final_path, bool force, unsigned writers = 0);
  /// Removes the temporary unless commit() succeeded. Never throws.
  ~MrcWriter();
  MrcWriter(const MrcWriter&) = delete;
  MrcWriter& operator=(const MrcWriter&) = delete;

  const std::string& final_path() const noexcept;

  /// Writes the header (statistics not yet known). meta.grid and meta.physics are used.
  void begin(const MapMetadata& meta);
  /// Planes [z_begin, z_begin + z_count), x fastest: plane_points * z_count floats. Slabs must
  /// come in z order without gaps (UsageError otherwise); IoError for a failed write.
  void write_slab(std::int64_t z_begin, std::int64_t z_count, const float* values);
  /// After the last slab: rewrites the header with DMIN, DMAX, DMEAN and the standard deviation
  /// (sqrt(rms^2 - mean^2)). UsageError when planes are missing.
  void finish(const GridStats& stats);
  /// Waits for the writers' writeback and fsyncs the file (after finish()). Idempotent.
  void sync();
  /// sync()s unless done and renames the file onto its final name (after finish()).
  void commit();
  /// Removes the temporary now. Never throws.
  void abort() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The MRC writer as a sink of the map pipeline (dcs/map_sink.hpp): the file is created in
/// begin(), takes every slab in z order, gets its statistics in finish() and is renamed onto
/// `path` in commit(); abort() removes it. Holds no map data (memory_bytes() == 0).
class MrcSink final : public MapSink {
 public:
  MrcSink(std::string path, bool force, unsigned writers = 0);
  ~MrcSink() override;
  std::string name() const override { return path_; }
  void begin(const MapMetadata& meta) override;
  void write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) override;
  void finish(const MapMetadata& meta, MapReader& map) override;
  void sync() override;
  void commit() override;
  void abort() noexcept override;

 private:
  std::string path_;
  bool force_;
  unsigned writers_;
  std::unique_ptr<MrcWriter> writer_;
};

/// Whole-map convenience (tests, small tools): begin, one slab, finish with the statistics of
/// `values` (meta.grid.points() floats, x fastest), commit.
void write_mrc(const std::string& path, const float* values, const MapMetadata& meta, bool force);

}  // namespace dcs::io
