// OpenDX scalar maps in the dialect APBS writes (Vgrid_writeDX in apbs src/mg/vgrid.c), so that
// APBS, PyMOL, VMD and GridDataFormats read them unchanged:
//
//   # Data from dcs 0.1.0 (git ...)          <- APBS: "# Data from APBS x.y.z"
//   #                                        (APBS writes "# " lines with a trailing space)
//   # POTENTIAL (kT/e)
//   #
//   # ... more "# " lines: physics, units, factor, input, command, provenance (<= 79 columns,
//   #     VMD's reader chokes on longer lines)
//   object 1 class gridpositions counts nx ny nz
//   origin %12.6e %12.6e %12.6e
//   delta %12.6e %12.6e %12.6e                (hx 0 0), (0 hy 0), (0 0 hz)
//   object 2 class gridconnections counts nx ny nz
//   object 3 class array type double rank 0 items N data follows
//   v v v                                     "%12.6e " each (note the trailing space), three
//   ...                                       per line, z fastest: x outer, then y, then z
//   v                                         a final partial line when N % 3 != 0
//   attribute "dep" string "positions"
//   object "regular positions regular connections" class field
//   component "positions" value 1
//   component "connections" value 2
//   component "data" value 3
//
// Our maps are stored x fastest (index (k*ny + j)*nx + i); the writer transposes on the fly.
// Positions are in Å; values are in the map's unit (meta.physics.unit). `%12.6e` keeps 7
// significant digits, so a DX round trip is exact to a relative 5e-7 of each value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/map.hpp"

namespace dcs::io {

struct OpenDxOptions {
  bool force = false;  ///< replace an existing file
  bool gzip = false;   ///< gzip the stream (also implied by a path ending in ".gz")
  /// zlib level when gzipping, 1-9. The default 1 is ~4x faster than zlib's usual 6 on DX text
  /// (256^3 map: 3 s instead of 14 s) for a file ~15% larger.
  int gzip_level = 1;
};

/// Streams an OpenDX file in bounded memory: the header (from `meta`, statistics included) when
/// constructed, then the values in DX order through write_x_columns(), then commit(). Written
/// through an AtomicFile: complete under `path` or absent. Byte-identical to write_opendx().
class OpenDxWriter {
 public:
  /// Throws IoError (an existing file without opts.force, ...), UsageError for a bad gzip level.
  OpenDxWriter(const std::string& path, const MapMetadata& meta, const OpenDxOptions& opts);
  ~OpenDxWriter();  ///< removes the temporary unless committed
  OpenDxWriter(const OpenDxWriter&) = delete;
  OpenDxWriter& operator=(const OpenDxWriter&) = delete;

  /// The x-columns [x_begin, x_begin + count) of every (y, z), in the layout
  /// values[(k * ny + j) * count + (i - x_begin)]; columns must come in order, x_begin == the
  /// end of the previous call. Throws IoError for a non-finite value (naming the grid point).
  void write_x_columns(std::int64_t x_begin, std::int64_t count, const float* values);
  /// Writes the trailer, flushes and fsyncs (after the last column). Idempotent.
  void sync();
  /// sync()s unless done, then renames onto the final name.
  void commit();
  /// Removes the temporary now. Never throws.
  void discard() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Writes the map `values` (meta.grid.points() floats, x fastest) to `path` through an
/// AtomicFile: the file appears complete under `path` or not at all. Blocks until the data is
/// fsync()ed. Throws IoError for I/O failures, an existing file without `force`, and for a
/// non-finite value (maps never hold NaN or inf; the message names the grid point); UsageError
/// for a gzip level outside 1-9.
void write_opendx(const std::string& path, const float* values, const MapMetadata& meta,
                  const OpenDxOptions& opts);

/// A map read back from an OpenDX file.
struct OpenDxMap {
  GridSpec grid;                      ///< counts, origin (Å) and the diagonal of the deltas
  std::vector<double> values;         ///< x fastest, like every map in dcs
  std::vector<std::string> comments;  ///< "#" lines without the leading "#" and one space
};

/// Reads a regular-grid OpenDX scalar file (plain or gzip-compressed, detected from the bytes).
/// Accepts what APBS and GridDataFormats write: comments anywhere before the data, "type double"
/// or "type float", any number of values per line. Throws InputError("<path>:<line>: <reason>")
/// for a missing or malformed file: unknown or missing header lines, non-positive counts,
/// mismatched counts, delta rows spanning no right-handed volume, a non-numeric value, too few
/// or too many values. Off-diagonal deltas (a grid along a triclinic cell's vectors) give a
/// skewed grid (GridSpec::axes).
OpenDxMap read_opendx(const std::string& path);

}  // namespace dcs::io
