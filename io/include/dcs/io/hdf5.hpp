// Self-describing HDF5 maps (the default output of dcs), readable with h5py, h5dump and ParaView.
//
// Layout (format_version 1; lengths in Å, charges in e, times in s):
//
//   /                      attrs: format ("dcs potential map"), format_version (1), program
//   /potential             float32 dataset (a soft link to /MDF/images/0/image, its one hard
//                          link: see /MDF below), shape [nz][ny][nx]: C order, so x varies
//                          fastest and potential[k][j][i] is the value at origin + (i*hx, j*hy, k*hz).
//                          Chunked (whole z-planes up to ~1 MiB per chunk), optionally
//                          shuffle + gzip. attrs:
//        origin            float64[3]  (x, y, z) of point (0, 0, 0), Å
//        spacing           float64[3]  (hx, hy, hz), Å
//        dims              int64[3]    (nx, ny, nz): note the reverse of the dataset shape
//        axis_order        "zyx"       dataset axes, slowest first (x fastest)
//        units             "kT/e" | "kcal/mol/e" | "kJ/mol/e" | "V" | "e/A"
//        temperature       float64, K (used by kT/e)
//        dielectric        float64, relative permittivity
//        coulomb_factor    float64, the C in V = C * sum q/r, in coulomb_factor_unit
//        coulomb_factor_unit  e.g. "kT*A/e^2"
//        min_distance      float64, Å: the clamp r_min of |p - r_i|
//        length_unit       "angstrom";  description: one sentence saying all of the above
//        models            "first" | "each" | "average": which models of a multi-model input
//                          (--models; a file without MODEL records is one model)
//        model_count       int64, models in the input file
//        model             int64 (first, each): the model mapped, its MODEL serial number (or
//                          1-based ordinal)
//        model_numbers     int64[model_count] (average): the models whose mean this is
//        colour_range      float64[2] (-L, +L), map units: the symmetric range a viewer's
//                          colour ramp should span, L the colour_range_percentiles[1]-th
//                          percentile of |V| (dcs/io/colour_range.hpp; within 0.1%)
//        colour_range_percentiles  float64[2] (1, 99): percentiles of |V|
//        colour_range_near_zero    float64, map units: |V| at the first of them
//                          (these three are written when the map is finished)
//   /statistics            attrs: min, max, mean, rms, sum (float64, map units), count,
//                          nonfinite (uint64); rms is sqrt(mean of squares), not a deviation
//   /validation            attrs: performed, passed, all_points (bool), points (uint64),
//                          max_abs_error, rms_error, max_abs_reference (map units),
//                          max_rel_error, tolerance (relative to max|V|)
//   /atoms                 parallel datasets, one row per atom: position float64[N][3] (Å),
//                          charge float64[N] (e), radius float64[N] (Å), serial int64[N],
//                          name, res_name, chain (fixed-length strings), res_seq int64[N],
//                          hetatm bool[N]; attrs: count, total_charge, source_path,
//                          source_format, source_sha256
//   /provenance            attrs: every Provenance field (program, version, command_line,
//                          input_path, input_sha256, backend, kernel, reduction, device,
//                          hostname, created)
//   /provenance/timings    one float64 attr per stage, seconds, in the order recorded
//   /VTKHDF                VTKHDF 1.0 ImageData for ParaView (>= 5.10) and VTK's vtkHDFReader:
//                          attrs Version int64[2] = (1, 0), Type "ImageData",
//                          WholeExtent int64[6] = (0, nx-1, 0, ny-1, 0, nz-1), Origin float64[3],
//                          Spacing float64[3], Direction float64[9] (identity).
//   /VTKHDF/PointData      attr Scalars = "potential"; "potential" is a soft link to the map
//                          (VTKHDF expects image point arrays with shape [nz][ny][nx], which is
//                          exactly ours). Checked with vtkHDFReader of VTK 9.2.6 (ParaView 5.11)
//                          and 9.7.2: dimensions, origin, spacing and every value match. ParaView
//                          opens it by name as .vtkhdf or .hdf (`-o mol.vtkhdf`).
//   /MDF/images/0          the view ChimeraX reads (`open mol.h5`: EMAN HDF reader; renamed
//                          .cmap: Chimera map reader): dataset "image" is the map; attrs
//                          EMAN.apix_x/y/z float64[1] (spacing), EMAN.xform.align3d (compound
//                          "00".."23", translation = origin / spacing), origin and step
//                          float64[3]. ChimeraX's readers walk the file with PyTables, which skips
//                          soft links, so they see one map, in place (tests/viewers).
//
// Thread safety: Debian's HDF5 is built without its thread-safe option, so call these functions
// from one thread at a time.
//
// Booleans are HDF5 enums {FALSE = 0, TRUE = 1} over int8, which h5py reads as numpy bool.
// Our own string attributes are variable-length UTF-8 (h5py returns str); VTKHDF's are
// fixed-length ASCII like the files VTK writes.
#pragma once

#include <string>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/map.hpp"
#include "dcs/types.hpp"

namespace dcs::io {

struct Hdf5Options {
  bool force = false;  ///< replace an existing file
  int gzip_level = 0;  ///< 0: no compression; 1-9: shuffle + deflate at this level
};

/// True when dcs was built with HDF5 (DCS_ENABLE_HDF5=ON).
bool hdf5_available() noexcept;

/// Writes the map (meta.grid.points() floats, x fastest), its metadata and `system`'s atoms to
/// `path` through an AtomicFile: complete under `path` or absent. The map is written one chunk of
/// z-planes at a time. Blocks until the file is closed and fsync()ed. Throws UsageError for a
/// gzip level outside 0-9, IoError for every failed HDF5 or file call (with HDF5's own error
/// text), an existing file without `force`, and a non-finite value (naming the grid point).
/// Builds without HDF5 throw IoError("... built without HDF5 ...").
void write_hdf5(const std::string& path, const float* values, const MapMetadata& meta,
                const System& system, const Hdf5Options& opts);

/// The map and its grid as read back from a dcs HDF5 file.
struct Hdf5Potential {
  GridSpec grid;                ///< from /potential's dims, origin and spacing
  std::vector<float> values;    ///< x fastest
  std::string units;            ///< /potential's "units"
  double coulomb_factor = 0.0;  ///< /potential's "coulomb_factor"
};

/// Reads /potential and its grid attributes, checking that dims matches the dataset's shape.
/// Throws InputError(path, 0, reason) for a missing file, a missing or malformed dataset or
/// attribute (with HDF5's error text), and IoError in builds without HDF5.
Hdf5Potential read_hdf5_potential(const std::string& path);

}  // namespace dcs::io
