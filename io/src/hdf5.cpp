// HDF5 map writer and reader (built with DCS_ENABLE_HDF5=ON; hdf5_stub.cpp otherwise).
// Layout: see dcs/io/hdf5.hpp. Every HDF5 call is checked; failures carry HDF5's error stack.
#include "dcs/io/hdf5.hpp"

#include <hdf5.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <numbers>
#include <utility>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/colour_range.hpp"
#include "dcs/io/map_store.hpp"
#include "map_checks.hpp"

#include "hdf5_support.hpp"

namespace dcs::io {
namespace h5 {

/// A skewed grid's step vectors (GridSpec::axes) as the 3x3 attribute `axes`, rows va, vb, vc.
void write_axes(hid_t id, const GridSpec& grid, const Writer& w) {
  std::array<double, 9> axes{};
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 3; ++c) axes[3 * r + c] = grid.step(r)[c];
  w.attribute(id, "axes", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3, 3}, axes.data());
}

/// The angles between a skewed grid's step vectors (alpha = b^c, beta = a^c, gamma = a^b),
/// degrees: Chimera map's `cell_angles`, which ChimeraX reads to skew the grid.
std::array<double, 3> step_angles(const GridSpec& grid) {
  std::array<double, 3> angles{};
  for (std::size_t a = 0; a < 3; ++a) {
    const Vec3 u = grid.step((a + 1) % 3), v = grid.step((a + 2) % 3);
    const double dot = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    const double norms = std::sqrt((u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) *
                                   (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
    angles[a] = std::acos(std::clamp(dot / norms, -1.0, 1.0)) * 180.0 / std::numbers::pi;
  }
  return angles;
}

void write_potential_attributes(hid_t id, const MapMetadata& meta, const Writer& w) {
  const GridSpec& grid = meta.grid;
  w.doubles(id, "origin", grid.origin.data(), 3);
  w.doubles(id, "spacing", grid.spacing.data(), 3);
  if (grid.skewed()) write_axes(id, grid, w);
  const std::array<std::int64_t, 3> counts{grid.nx(), grid.ny(), grid.nz()};
  w.int64s(id, "dims", counts.data(), 3);
  w.text(id, "axis_order", "zyx");
  w.text(id, "units", unit_name(meta.physics.unit));
  w.number(id, "temperature", meta.physics.temperature);
  w.number(id, "dielectric", meta.physics.dielectric);
  w.number(id, "coulomb_factor", meta.coulomb_factor);
  w.text(id, "coulomb_factor_unit", factor_unit(meta.physics.unit, meta.physics.dielectric_model));
  // The physics model (README: which model to use when) and its parameters.
  w.text(id, "physics", describe_model(meta.physics));
  w.text(id, "dielectric_model", dielectric_model_name(meta.physics.dielectric_model));
  w.number(id, "ionic_strength", meta.physics.ionic_strength);
  if (meta.physics.ionic_strength > 0.0) w.number(id, "debye_length", debye_length(meta.physics));
  w.number(id, "coulomb_constant", coulomb_constant(meta.physics));
  w.text(id, "preset", meta.physics.preset);
  w.number(id, "min_distance", meta.physics.min_distance);
  w.text(id, "length_unit", "angstrom");
  w.text(id, "description",
         fmt::format("Electrostatic potential V(p) = C * sum_i q_i g(max(|p - r_i|, r_min)) in {} "
                     "by direct Coulomb summation, g(r) = {} ({}). Shape [nz][ny][nx] (axis_order "
                     "zyx: x varies "
                     "fastest); value [k][j][i] is at {} Angstrom; "
                     "origin, spacing and dims are given as (x, y, z).",
                     unit_name(meta.physics.unit), pair_formula(meta.physics),
                     describe_model(meta.physics),
                     grid.skewed() ? "origin + i*axes[0] + j*axes[1] + k*axes[2] (the rows of "
                                     "axes: the cell vectors a/nx, b/ny, c/nz; spacing their "
                                     "lengths)"
                                   : "origin + (i*hx, j*hy, k*hz)"));
  // Which model(s) of the input (--models): "first" and "each" map one model, "average" the
  // mean over model_count models, listed in model_numbers.
  const ModelInfo& models = meta.models;
  if (models.mode.empty()) return;  // a trajectory's mean: no models of a file
  w.text(id, "models", models.mode);
  const auto model_count = static_cast<std::int64_t>(models.count);
  w.int64s(id, "model_count", &model_count, 1);
  if (models.mode == "average") {
    const std::vector<std::int64_t> numbers(models.averaged.begin(), models.averaged.end());
    w.attribute(id, "model_numbers", H5T_STD_I64LE, H5T_NATIVE_INT64, {numbers.size()},
                numbers.data());
  } else {
    const auto model = static_cast<std::int64_t>(models.model);
    w.int64s(id, "model", &model, 1);
  }
}

void write_colour_range(hid_t dataset, const ColourRange& range, const Writer& w) {
  if (!range.known()) return;
  const std::array<double, 2> limits{-range.high, range.high};
  const std::array<double, 2> percentiles{range.low_percentile, range.high_percentile};
  w.doubles(dataset, "colour_range", limits.data(), 2);
  w.doubles(dataset, "colour_range_percentiles", percentiles.data(), 2);
  w.number(dataset, "colour_range_near_zero", range.low);
  w.text(dataset, "colour_range_source", describe_colour_range(range));
}

namespace {
/// float64 attributes of `object`, in order.
void write_numbers(hid_t object, std::initializer_list<std::pair<const char*, double>> numbers,
                   const Writer& w) {
  for (const auto& [name, value] : numbers) w.number(object, name, value);
}
}  // namespace

void write_statistics(hid_t file, const GridStats& stats, const Writer& w) {
  const Handle group = w.group(file, "statistics");
  write_numbers(group.get(),
                {{"min", stats.min},
                 {"max", stats.max},
                 {"mean", stats.mean},
                 {"rms", stats.rms},
                 {"sum", stats.sum}},
                w);
  w.count(group.get(), "count", stats.count);
  w.count(group.get(), "nonfinite", stats.nonfinite);
}

void write_validation(hid_t file, const Validation& validation, const Writer& w) {
  const Handle group = w.group(file, "validation");
  w.boolean(group.get(), "performed", validation.performed);
  w.boolean(group.get(), "passed", validation.passed);
  w.count(group.get(), "points", validation.points);
  w.boolean(group.get(), "all_points", validation.all_points);
  write_numbers(group.get(),
                {{"max_abs_error", validation.max_abs_error},
                 {"rms_error", validation.rms_error},
                 {"max_abs_reference", validation.max_abs_reference},
                 {"max_rel_error", validation.max_rel_error},
                 {"tolerance", validation.tolerance}},
                w);
}

/// --method ewald's attributes: the cell (lengths, angles, the 3x3 box vectors as rows), the
/// Ewald parameters, and what the map is (boundary, background, gauge, tiling) in words.
void write_ewald(hid_t group, const MethodInfo& method, const Writer& w) {
  const UnitCell& cell = method.cell;
  w.doubles(group, "cell_lengths", cell.lengths().data(), 3);
  w.doubles(group, "cell_angles", cell.angles().data(), 3);
  std::array<double, 9> vectors{};
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 3; ++c) vectors[3 * r + c] = cell.vectors()[r][c];
  w.attribute(group, "cell_vectors", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3, 3}, vectors.data());
  write_numbers(group,
                {{"beta", method.beta},
                 {"real_cutoff", method.cutoff},
                 {"accuracy", method.target},
                 {"target", method.target},
                 {"net_charge", method.net_charge}},
                w);
  const std::array<std::int64_t, 3> mesh{method.mesh[0], method.mesh[1], method.mesh[2]};
  w.int64s(group, "mesh", mesh.data(), 3);
  w.count(group, "order", static_cast<std::uint64_t>(method.order));
  w.text(group, "boundary",
         method.reciprocal_only
             ? fmt::format("--preset pmepot (VMD PMEpot): the reciprocal part of smooth PME only, "
                           "the periodic potential of Gaussian charges of sigma {:.4g} A, on the "
                           "map's grid as the PME mesh; not the point charges' potential",
                           1.0 / (std::sqrt(2.0) * method.beta))
             : std::string("tin-foil (conducting); real space + smooth PME"));
  if (method.reciprocal_only) w.boolean(group, "reciprocal_only", true);  // else: as before
  w.text(group, "gauge", "the mean of the potential over the unit cell is 0");
  w.text(group, "background",
         method.net_charge == 0.0 ? std::string("none (the cell is neutral)")
         : method.reciprocal_only
             ? fmt::format("none: the k = 0 term is left out (net charge {:+.6g} e)",
                           method.net_charge)
             : fmt::format("a uniform neutralising background of {:+.6g} e over the cell",
                           -method.net_charge));
  w.text(group, "grid",
         !method.tiles ? "a box of x, y, z points (not the cell's tiling; any point of the "
                         "periodic potential is valid)"
         : cell.shape() == UnitCell::Shape::kTriclinic
             ? "the cell's points i*a/na + j*b/nb + k*c/nc from its origin (0, 0, 0), the axes "
               "along the cell vectors (/potential's axes): the map tiles the box periodically"
             : "the cell's points i*L/n from its origin (0, 0, 0): the map tiles the box "
               "periodically");
}

void write_method(hid_t file, const MethodInfo& method, const Writer& w) {
  const Handle group = w.group(file, "method");
  w.text(group.get(), "name", std::string(to_string(method.method)));
  if (!traits(method.method).measures_error) return;
  if (method.method == Method::kEwald) {
    write_ewald(group.get(), method, w);
  } else {
    write_numbers(
        group.get(),
        {{"spacing", method.spacing}, {"cutoff", method.cutoff}, {"target", method.target}}, w);
    w.count(group.get(), "order", static_cast<std::uint64_t>(method.order));
    w.count(group.get(), "split", static_cast<std::uint64_t>(method.split));
  }
  w.boolean(group.get(), "measured", method.measured);
  w.count(group.get(), "points", method.points);
  w.boolean(group.get(), "all_points", method.all_points);
  write_numbers(group.get(),
                {{"rms_rel_error", method.rms_rel_error},
                 {"max_rel_error", method.max_rel_error},
                 {"estimated_work", method.estimated_work},
                 {"estimated_exact_work", method.estimated_exact_work}},
                w);
  w.boolean(group.get(), "met", method.met);
}

void write_atoms(hid_t file, const System& system, const Writer& w) {
  const Handle group = w.group(file, "atoms");
  const std::size_t n = system.atoms.size();
  std::vector<double> position(3 * n);
  std::vector<double> charge(n);
  std::vector<double> radius(n);
  std::vector<std::int64_t> serial(n);
  std::vector<std::int64_t> res_seq(n);
  std::vector<std::int8_t> hetatm(n);
  for (std::size_t index = 0; index < n; ++index) {
    const Atom& atom = system.atoms[index];
    std::copy(atom.position.begin(), atom.position.end(),
              position.begin() + 3 * static_cast<std::ptrdiff_t>(index));
    charge[index] = atom.charge;
    radius[index] = atom.radius;
    serial[index] = static_cast<std::int64_t>(atom.serial);
    res_seq[index] = static_cast<std::int64_t>(atom.res_seq);
    hetatm[index] = atom.hetatm ? 1 : 0;
  }
  const hid_t id = group.get();
  w.dataset(id, "position", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n, 3}, position.data());
  w.dataset(id, "charge", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n}, charge.data());
  w.dataset(id, "radius", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n}, radius.data());
  w.dataset(id, "serial", H5T_STD_I64LE, H5T_NATIVE_INT64, {n}, serial.data());
  // The text columns straight from the atoms (no copy of 3 n strings).
  w.strings(id, "name", n, [&](std::size_t i) -> std::string_view { return system.atoms[i].name; });
  w.strings(id, "res_name", n,
            [&](std::size_t i) -> std::string_view { return system.atoms[i].res_name; });
  w.strings(id, "chain", n,
            [&](std::size_t i) -> std::string_view { return system.atoms[i].chain; });
  w.dataset(id, "res_seq", H5T_STD_I64LE, H5T_NATIVE_INT64, {n}, res_seq.data());
  const Handle bool_type = w.bool_type();
  w.dataset(id, "hetatm", bool_type.get(), bool_type.get(), {n}, hetatm.data());
  w.count(id, "count", n);
  w.number(id, "total_charge", system.total_charge());
  w.text(id, "source_path", system.source_path);
  w.text(id, "source_format", system.source_format);
  w.text(id, "source_sha256", system.source_sha256);
  w.text(id, "units", "position: angstrom, charge: e, radius: angstrom");
}

void write_provenance(hid_t file, const Provenance& prov, const Writer& w, const Failure& failure) {
  const Handle group = w.group(file, "provenance");
  const hid_t id = group.get();
  w.text(id, "program", prov.program);
  w.text(id, "version", prov.version);
  w.text(id, "command_line", prov.command_line);
  w.text(id, "input_path", prov.input_path);
  w.text(id, "input_sha256", prov.input_sha256);
  w.text(id, "backend", prov.backend);
  w.text(id, "kernel", prov.kernel);
  w.text(id, "reduction", prov.reduction);
  w.text(id, "device", prov.device);
  w.text(id, "hostname", prov.hostname);
  w.text(id, "created", prov.created);
  w.text(id, "settings", prov.settings);
  const Handle timings = w.group(id, "timings", /*track_order=*/true);
  w.text(timings.get(), "unit", "s");
  for (const auto& [stage, seconds] : prov.timings) {
    std::string name = stage.empty() ? "unnamed" : stage;
    // Attribute names are unique: number repeated stages ("write (2)").
    for (int copy = 2;; ++copy) {
      const htri_t exists = H5Aexists(timings.get(), name.c_str());
      failure.status(exists, "H5Aexists");
      if (exists == 0) break;
      name = fmt::format("{} ({})", stage.empty() ? "unnamed" : stage, copy);
    }
    w.number(timings.get(), name, seconds);
  }
}

// The viewer views. The map is stored once; its names are chosen for the readers that look for it:
//
// - ChimeraX opens .h5/.hdf/.hdf5 with its EMAN HDF reader, which takes the 2-D/3-D arrays named
//   /MDF/images/<n>/image (one map each) with step EMAN.apix_x/y/z and origin
//   EMAN.xform.align3d's translation times the step; finding none it falls back to a generic
//   reader that puts every 3-D array at (0, 0, 0) with step 1 (two maps, both misplaced, when
//   /potential and the VTKHDF name were hard links). It opens .cmap with its Chimera-map reader,
//   which makes one map per group holding 3-D arrays, with the group's `origin` and `step`.
//   Both walk the file with PyTables, which does not follow soft links.
// - So the dataset's one hard link is /MDF/images/0/image, that group carries both readers'
//   attributes, and /potential and /VTKHDF/PointData/potential are soft links to it: h5py, h5dump
//   and the HDF5 library (VTK's vtkHDFReader, ParaView) resolve them, and both ChimeraX readers
//   see exactly one map, in place (tests/viewers, with the readers of the ChimeraX 0.1.71 wheel).
// No dimension scales: PyTables-based readers fail on them.
void write_chimerax_view(hid_t file, const GridSpec& grid, const Writer& w,
                         const Failure& failure) {
  constexpr const char* kImage = "/MDF/images/0/image";
  const Handle mdf = w.group(file, "MDF");
  const Handle images = w.group(mdf.get(), "images");
  const Handle image = w.group(images.get(), "0");
  const hid_t id = image.get();
  failure.status(H5Lmove(file, "/potential", file, kImage, H5P_DEFAULT, H5P_DEFAULT),
                 "H5Lmove(/potential, /MDF/images/0/image)");
  failure.status(H5Lcreate_soft(kImage, file, "/potential", H5P_DEFAULT, H5P_DEFAULT),
                 "H5Lcreate_soft(/potential)");
  // EMAN HDF (ChimeraX's reader indexes these attributes: one-element arrays).
  const char* apix[3] = {"EMAN.apix_x", "EMAN.apix_y", "EMAN.apix_z"};
  for (int a = 0; a < 3; ++a)
    w.attribute(id, apix[a], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {1}, &grid.spacing[a]);
  // The 3x4 transform as a compound of fields "00".."23"; ChimeraX reads the origin as
  // translation * step, so the translation is in voxels.
  std::array<double, 12> transform{};
  for (int r = 0; r < 3; ++r) {
    transform[static_cast<std::size_t>(4 * r + r)] = 1.0;
    transform[static_cast<std::size_t>(4 * r + 3)] = grid.origin[r] / grid.spacing[r];
  }
  const Handle compound(failure.id(H5Tcreate(H5T_COMPOUND, sizeof(transform)), "H5Tcreate"),
                        H5Tclose);
  for (std::size_t field = 0; field < transform.size(); ++field)
    failure.status(H5Tinsert(compound.get(), fmt::format("{}{}", field / 4, field % 4).c_str(),
                             field * sizeof(double), H5T_NATIVE_DOUBLE),
                   "H5Tinsert");
  w.attribute(id, "EMAN.xform.align3d", compound.get(), compound.get(), {1}, transform.data());
  // Chimera map (.cmap): the group's origin and step, (x, y, z).
  w.doubles(id, "origin", grid.origin.data(), 3);
  w.doubles(id, "step", grid.spacing.data(), 3);
  if (grid.skewed()) w.doubles(id, "cell_angles", step_angles(grid).data(), 3);
}

void write_vtkhdf(hid_t file, const GridSpec& grid, const Writer& w, const Failure& failure) {
  write_chimerax_view(file, grid, w, failure);
  const Handle group = w.group(file, "VTKHDF");
  const hid_t id = group.get();
  const std::array<std::int64_t, 2> version{1, 0};
  w.int64s(id, "Version", version.data(), 2);
  w.fixed_text(id, "Type", "ImageData");
  const std::array<std::int64_t, 6> extent{0, grid.nx() - 1, 0, grid.ny() - 1, 0, grid.nz() - 1};
  w.int64s(id, "WholeExtent", extent.data(), 6);
  w.doubles(id, "Origin", grid.origin.data(), 3);
  w.doubles(id, "Spacing", grid.spacing.data(), 3);
  // Row-major; column a is axis a's unit step (VTK places point ijk at origin + D diag(h) ijk).
  std::array<double, 9> direction{1, 0, 0, 0, 1, 0, 0, 0, 1};
  if (grid.skewed())
    for (std::size_t r = 0; r < 3; ++r)
      for (std::size_t c = 0; c < 3; ++c) direction[3 * r + c] = grid.step(c)[r] / grid.spacing[c];
  w.doubles(id, "Direction", direction.data(), 9);
  const Handle point_data = w.group(id, "PointData");
  w.fixed_text(point_data.get(), "Scalars", "potential");
  // The same dataset under the name VTKHDF looks for; a soft link, which the HDF5 library
  // follows (vtkHDFReader of VTK 9.2.6 and 9.7.2 read it) and ChimeraX's readers skip.
  failure.status(H5Lcreate_soft("/MDF/images/0/image", point_data.get(), "potential", H5P_DEFAULT,
                                H5P_DEFAULT),
                 "H5Lcreate_soft(/VTKHDF/PointData/potential)");
}

}  // namespace h5

bool hdf5_available() noexcept { return true; }

void write_hdf5(const std::string& path, const float* values, const MapMetadata& meta,
                const System& system, const Hdf5Options& opts) {
  if (opts.gzip_level < 0 || opts.gzip_level > 9)
    throw UsageError(fmt::format("HDF5 gzip level must be 0-9, got {}", opts.gzip_level));
  detail::check_map_input(path, values, meta.grid);
  check_output_path(path, opts.force);
  // The whole map is one slab of the streaming store: one code path for every HDF5 map.
  MapStoreOptions store_options;
  store_options.gzip_level = opts.gzip_level;
  store_options.force = opts.force;
  store_options.chunk_depth = std::min<std::int64_t>(16, meta.grid.nz());
  MapStore store =
      MapStore::create(partial_path_for(path), meta, system, ResumeKey{}, store_options);
  try {
    const Slab whole{0, meta.grid.nz()};
    std::vector<StatsAccum> planes(static_cast<std::size_t>(meta.grid.nz()));
    plane_statistics(values, meta.grid.plane_points(), planes.size(), 1, planes.data());
    store.write_slab(whole, values, planes.data());
    store.finish(meta);
    store.commit(path, opts.force);
  } catch (...) {
    store.discard();
    throw;
  }
}

// --- Reader --------------------------------------------------------------------------------------

namespace {

using h5::Failure;
using h5::Handle;
using h5::prepare_library;
using h5::QuietErrors;
using h5::read_string_attribute;

std::vector<double> read_double_attribute(hid_t object, const char* name, std::size_t n,
                                          const Failure& failure) {
  const Handle attr(
      failure.id(H5Aopen(object, name, H5P_DEFAULT), fmt::format("H5Aopen({})", name)), H5Aclose);
  const Handle space(failure.id(H5Aget_space(attr.get()), "H5Aget_space"), H5Sclose);
  const hssize_t points = H5Sget_simple_extent_npoints(space.get());
  if (points != static_cast<hssize_t>(n))
    failure.invalid(fmt::format("attribute '{}' has {} elements, expected {}", name, points, n));
  std::vector<double> values(n);
  failure.status(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, values.data()),
                 fmt::format("H5Aread({})", name));
  return values;
}

}  // namespace

Hdf5Potential read_hdf5_potential(const std::string& path) {
  prepare_library();
  const Failure failure(path, /*reading=*/true);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw InputError(path, 0, fmt::format("cannot open: {}", std::strerror(errno)));

  const QuietErrors quiet;
  // Default file access (and locking): a file opened twice in one process needs equal flags.
  const Handle file(failure.id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT),
                               "H5Fopen (is it an HDF5 file?)"),
                    H5Fclose);
  const Handle set(
      failure.id(H5Dopen2(file.get(), "/potential", H5P_DEFAULT), "H5Dopen2(/potential)"),
      H5Dclose);
  const Handle space(failure.id(H5Dget_space(set.get()), "H5Dget_space"), H5Sclose);
  if (H5Sget_simple_extent_ndims(space.get()) != 3)
    failure.invalid("/potential is not a 3-D dataset");
  std::array<hsize_t, 3> shape{};
  failure.status(H5Sget_simple_extent_dims(space.get(), shape.data(), nullptr),
                 "H5Sget_simple_extent_dims");

  Hdf5Potential result;
  const std::vector<double> dims = read_double_attribute(set.get(), "dims", 3, failure);
  const std::vector<double> origin = read_double_attribute(set.get(), "origin", 3, failure);
  const std::vector<double> spacing = read_double_attribute(set.get(), "spacing", 3, failure);
  for (std::size_t axis = 0; axis < 3; ++axis) {
    const hsize_t along = shape[2 - axis];  // dataset shape is [nz][ny][nx]
    if (dims[axis] != static_cast<double>(along))
      failure.invalid(
          fmt::format("/potential attribute dims ({}, {}, {}) does not match the "
                      "dataset shape [{}][{}][{}] (expected [nz][ny][nx])",
                      dims[0], dims[1], dims[2], shape[0], shape[1], shape[2]));
    result.grid.counts[axis] = static_cast<std::int64_t>(along);
    result.grid.origin[axis] = origin[axis];
    result.grid.spacing[axis] = spacing[axis];
  }
  if (const htri_t skewed = H5Aexists(set.get(), "axes"); skewed > 0) {
    const std::vector<double> axes = read_double_attribute(set.get(), "axes", 9, failure);
    Mat3 rows{};
    for (std::size_t r = 0; r < 3; ++r)
      for (std::size_t c = 0; c < 3; ++c) rows[r][c] = axes[3 * r + c];
    result.grid.axes = rows;
  } else {
    failure.status(skewed, "H5Aexists(axes)");
  }
  result.units = read_string_attribute(set.get(), "units", failure);
  result.coulomb_factor = read_double_attribute(set.get(), "coulomb_factor", 1, failure)[0];
  result.values.resize(result.grid.points());
  failure.status(
      H5Dread(set.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, result.values.data()),
      "H5Dread(/potential)");
  return result;
}

}  // namespace dcs::io
