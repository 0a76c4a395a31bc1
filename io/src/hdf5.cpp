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
#include <utility>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "map_checks.hpp"

namespace dcs::io {
namespace {

constexpr std::int64_t kFormatVersion = 1;
constexpr hsize_t kChunkTargetFloats = (hsize_t{1} << 20) / sizeof(float);  // ~1 MiB chunks

// --- Library set-up ----------------------------------------------------------------------------

/// Asks HDF5 not to run H5close() from atexit(). HDF5 1.10 leaves a file whose H5Fclose failed
/// (a full disk while flushing) half-closed, and closing it again, as H5close() does at exit,
/// crashes the process. Our files are always closed explicitly, so skipping it loses nothing.
/// Must precede every other HDF5 call; if the application used HDF5 first it has no effect.
void prepare_library() {
  static const bool done = [] {
    (void)H5dont_atexit();
    return true;
  }();
  (void)done;
}

// --- Errors ------------------------------------------------------------------------------------

/// Silences HDF5's automatic printing of error stacks (libraries never print) for the lifetime
/// of the object and restores the previous handler afterwards.
class QuietErrors {
 public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

herr_t collect_error(unsigned /*index*/, const H5E_error2_t* error, void* client) {
  auto* entries = static_cast<std::vector<std::string>*>(client);
  std::string entry = error->desc != nullptr ? error->desc : "";
  char minor[160] = {};
  if (H5Eget_msg(error->min_num, nullptr, minor, sizeof minor) > 0 && minor[0] != '\0')
    entry += entry.empty() ? minor : std::string(" (") + minor + ")";
  // HDF5's messages may hold newlines (a ctime() string); keep the report on one line.
  std::string line;
  for (const char c : entry) {
    const char clean = static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    if (clean != ' ' || (!line.empty() && line.back() != ' ')) line += clean;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (!line.empty()) entries->push_back(std::move(line));
  return 0;
}

/// The current thread's HDF5 error stack as one line (outermost call, then the innermost causes),
/// and clears it.
std::string error_stack_text() {
  std::vector<std::string> entries;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &entries);
  H5Eclear2(H5E_DEFAULT);
  if (entries.empty()) return "no HDF5 error message";
  std::string text = entries.front();
  // The outermost entry names the API call; the two innermost say what really went wrong.
  const std::size_t first_inner = entries.size() > 3 ? entries.size() - 2 : 1;
  for (std::size_t index = first_inner; index < entries.size(); ++index)
    text += ": " + entries[index];
  return text;
}

/// Turns failed HDF5 calls into IoError (writing) or InputError (reading) naming the file.
class Failure {
 public:
  Failure(std::string path, bool reading) : path_(std::move(path)), reading_(reading) {}

  [[noreturn]] void raise(const std::string& what) const {
    const std::string detail = fmt::format("{} failed: {}", what, error_stack_text());
    if (reading_) throw InputError(path_, 0, detail);
    throw IoError(fmt::format("error writing {}: {}", path_, detail));
  }
  [[noreturn]] void invalid(const std::string& reason) const {
    if (reading_) throw InputError(path_, 0, reason);
    throw IoError(fmt::format("error writing {}: {}", path_, reason));
  }
  hid_t id(hid_t value, const std::string& what) const {
    if (value < 0) raise(what);
    return value;
  }
  void status(herr_t value, const std::string& what) const {
    if (value < 0) raise(what);
  }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  bool reading_;
};

/// Owns one HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) noexcept : id_(id), closer_(closer) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const noexcept { return id_; }
  /// Closes now and reports failure (closing a file flushes it: this is where a full disk shows).
  void close(const Failure& failure, const std::string& what) {
    const hid_t id = std::exchange(id_, H5I_INVALID_HID);
    if (id >= 0) failure.status(closer_(id), what);
  }

 private:
  void reset() noexcept {
    if (id_ >= 0) (void)closer_(std::exchange(id_, H5I_INVALID_HID));
  }
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// --- Small writers -------------------------------------------------------------------------------

/// Replaces bytes that are not valid UTF-8 by '?', so that h5py can always decode our strings.
std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto lead = static_cast<unsigned char>(text[pos]);
    std::size_t length = lead < 0x80           ? 1
                         : (lead >> 5) == 0x6  ? 2
                         : (lead >> 4) == 0xe  ? 3
                         : (lead >> 3) == 0x1e ? 4
                                               : 0;
    bool ok = length > 0 && pos + length <= text.size();
    for (std::size_t k = 1; ok && k < length; ++k)
      ok = (static_cast<unsigned char>(text[pos + k]) & 0xc0) == 0x80;
    if (ok) {
      out.append(text.substr(pos, length));
      pos += length;
    } else {
      out += '?';
      ++pos;
    }
  }
  return out;
}

class Writer {
 public:
  explicit Writer(const Failure& failure) : failure_(failure) {}

  Handle space(const std::vector<hsize_t>& dims) const {
    if (dims.empty()) return {failure_.id(H5Screate(H5S_SCALAR), "H5Screate"), H5Sclose};
    return {failure_.id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                        "H5Screate_simple"),
            H5Sclose};
  }

  Handle group(hid_t parent, const char* name, bool track_order = false) const {
    Handle plist(failure_.id(H5Pcreate(H5P_GROUP_CREATE), "H5Pcreate"), H5Pclose);
    if (track_order)
      failure_.status(
          H5Pset_attr_creation_order(plist.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
          "H5Pset_attr_creation_order");
    return {failure_.id(H5Gcreate2(parent, name, H5P_DEFAULT, plist.get(), H5P_DEFAULT),
                        fmt::format("H5Gcreate2({})", name)),
            H5Gclose};
  }

  void attribute(hid_t object, const std::string& name, hid_t file_type, hid_t memory_type,
                 const std::vector<hsize_t>& dims, const void* data) const {
    const Handle dataspace = space(dims);
    const Handle attr(failure_.id(H5Acreate2(object, name.c_str(), file_type, dataspace.get(),
                                             H5P_DEFAULT, H5P_DEFAULT),
                                  fmt::format("H5Acreate2({})", name)),
                      H5Aclose);
    failure_.status(H5Awrite(attr.get(), memory_type, data), fmt::format("H5Awrite({})", name));
  }

  void doubles(hid_t object, const std::string& name, const double* values, std::size_t n) const {
    attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
              n == 1 ? std::vector<hsize_t>{} : std::vector<hsize_t>{n}, values);
  }
  void number(hid_t object, const std::string& name, double value) const {
    doubles(object, name, &value, 1);
  }
  void int64s(hid_t object, const std::string& name, const std::int64_t* values,
              std::size_t n) const {
    attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64,
              n == 1 ? std::vector<hsize_t>{} : std::vector<hsize_t>{n}, values);
  }
  void count(hid_t object, const std::string& name, std::uint64_t value) const {
    attribute(object, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, {}, &value);
  }
  void boolean(hid_t object, const std::string& name, bool value) const {
    const Handle type = bool_type();
    const std::int8_t byte = value ? 1 : 0;
    attribute(object, name, type.get(), type.get(), {}, &byte);
  }
  /// Variable-length UTF-8 string attribute (h5py returns str).
  void text(hid_t object, const std::string& name, std::string_view value) const {
    const Handle type(failure_.id(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
    failure_.status(H5Tset_size(type.get(), H5T_VARIABLE), "H5Tset_size");
    failure_.status(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset");
    const std::string clean = valid_utf8(value);
    const char* pointer = clean.c_str();
    attribute(object, name, type.get(), type.get(), {}, &pointer);
  }
  /// Fixed-length ASCII string attribute, as VTK's own VTKHDF files store Type and Scalars.
  void fixed_text(hid_t object, const std::string& name, std::string_view value) const {
    const Handle type(failure_.id(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
    failure_.status(H5Tset_size(type.get(), std::max<std::size_t>(1, value.size())), "H5Tset_size");
    failure_.status(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
    std::string buffer(value);
    buffer.resize(std::max<std::size_t>(1, value.size()), '\0');
    attribute(object, name, type.get(), type.get(), {}, buffer.data());
  }

  /// An enum {FALSE = 0, TRUE = 1} over int8: the type h5py maps to numpy bool.
  Handle bool_type() const {
    Handle type(failure_.id(H5Tenum_create(H5T_NATIVE_INT8), "H5Tenum_create"), H5Tclose);
    const std::int8_t no = 0;
    const std::int8_t yes = 1;
    failure_.status(H5Tenum_insert(type.get(), "FALSE", &no), "H5Tenum_insert");
    failure_.status(H5Tenum_insert(type.get(), "TRUE", &yes), "H5Tenum_insert");
    return type;
  }

  /// A contiguous dataset written in one call (atoms). An empty dataset is created but not
  /// written.
  void dataset(hid_t parent, const char* name, hid_t file_type, hid_t memory_type,
               const std::vector<hsize_t>& dims, const void* data) const {
    const Handle dataspace = space(dims);
    const Handle set(failure_.id(H5Dcreate2(parent, name, file_type, dataspace.get(), H5P_DEFAULT,
                                            H5P_DEFAULT, H5P_DEFAULT),
                                 fmt::format("H5Dcreate2({})", name)),
                     H5Dclose);
    if (dims.front() > 0)
      failure_.status(H5Dwrite(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
                      fmt::format("H5Dwrite({})", name));
  }

  /// Fixed-length string dataset: one row per entry, NUL-padded to the longest entry.
  void strings(hid_t parent, const char* name, const std::vector<std::string>& values) const {
    std::size_t width = 1;
    bool ascii = true;
    for (const std::string& value : values) {
      width = std::max(width, value.size());
      for (const char c : value) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
    }
    const Handle type(failure_.id(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
    failure_.status(H5Tset_size(type.get(), width), "H5Tset_size");
    failure_.status(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
    failure_.status(H5Tset_cset(type.get(), ascii ? H5T_CSET_ASCII : H5T_CSET_UTF8), "H5Tset_cset");
    std::vector<char> buffer(values.size() * width, '\0');
    for (std::size_t row = 0; row < values.size(); ++row)
      std::memcpy(buffer.data() + row * width, values[row].data(), values[row].size());
    dataset(parent, name, type.get(), type.get(), {values.size()}, buffer.data());
  }

 private:
  const Failure& failure_;
};

/// Chunk shape for a [nz][ny][nx] float map: whole z-planes up to ~1 MiB, else rows of a plane.
std::array<hsize_t, 3> chunk_shape(hsize_t nx, hsize_t ny, hsize_t nz) {
  const hsize_t plane = nx * ny;
  if (plane <= kChunkTargetFloats)
    return {std::clamp<hsize_t>(kChunkTargetFloats / plane, 1, nz), ny, nx};
  if (nx <= kChunkTargetFloats) return {1, std::clamp<hsize_t>(kChunkTargetFloats / nx, 1, ny), nx};
  return {1, 1, kChunkTargetFloats};
}

Handle file_access_plist(const Failure& failure) {
  Handle fapl(failure.id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"), H5Pclose);
#if H5_VERSION_GE(1, 10, 7)
  // Our temporary is private to this process; do not fail on file systems without flock().
  failure.status(H5Pset_file_locking(fapl.get(), false, true), "H5Pset_file_locking");
#endif
  return fapl;
}

void write_potential(hid_t file, const float* values, const MapMetadata& meta, int gzip_level,
                     const Writer& w, const Failure& failure) {
  const GridSpec& grid = meta.grid;
  const auto nx = static_cast<hsize_t>(grid.nx());
  const auto ny = static_cast<hsize_t>(grid.ny());
  const auto nz = static_cast<hsize_t>(grid.nz());
  const std::array<hsize_t, 3> dims{nz, ny, nx};
  const std::array<hsize_t, 3> chunk = chunk_shape(nx, ny, nz);

  Handle dcpl(failure.id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"), H5Pclose);
  failure.status(H5Pset_chunk(dcpl.get(), 3, chunk.data()), "H5Pset_chunk");
  failure.status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  if (gzip_level > 0) {
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0)
      failure.invalid("this HDF5 library has no deflate (gzip) filter");
    failure.status(H5Pset_shuffle(dcpl.get()), "H5Pset_shuffle");
    failure.status(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(gzip_level)), "H5Pset_deflate");
  }
  const Handle file_space(failure.id(H5Screate_simple(3, dims.data(), nullptr), "H5Screate_simple"),
                          H5Sclose);
  Handle set(failure.id(H5Dcreate2(file, "potential", H5T_IEEE_F32LE, file_space.get(), H5P_DEFAULT,
                                   dcpl.get(), H5P_DEFAULT),
                        "H5Dcreate2(potential)"),
             H5Dclose);

  // One chunk-deep slab of z-planes per call: the unit in which larger-than-memory maps will
  // be streamed. Each slab is checked for non-finite values before it is written.
  const std::size_t plane = static_cast<std::size_t>(nx * ny);
  for (hsize_t z0 = 0; z0 < nz; z0 += chunk[0]) {
    const hsize_t depth = std::min(chunk[0], nz - z0);
    const float* slab = values + static_cast<std::size_t>(z0) * plane;
    const std::size_t count = static_cast<std::size_t>(depth) * plane;
    for (std::size_t index = 0; index < count; ++index) {
      if (!std::isfinite(slab[index]))
        throw detail::nonfinite_value_error(failure.path(), slab[index], grid,
                                            static_cast<std::size_t>(z0) * plane + index);
    }
    const std::array<hsize_t, 3> start{z0, 0, 0};
    const std::array<hsize_t, 3> extent{depth, ny, nx};
    const Handle memory_space(
        failure.id(H5Screate_simple(3, extent.data(), nullptr), "H5Screate_simple"), H5Sclose);
    failure.status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                       extent.data(), nullptr),
                   "H5Sselect_hyperslab");
    failure.status(H5Dwrite(set.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(),
                            H5P_DEFAULT, slab),
                   fmt::format("H5Dwrite(potential, planes {}-{})", z0, z0 + depth - 1));
  }

  const hid_t id = set.get();
  w.doubles(id, "origin", grid.origin.data(), 3);
  w.doubles(id, "spacing", grid.spacing.data(), 3);
  const std::array<std::int64_t, 3> counts{grid.nx(), grid.ny(), grid.nz()};
  w.int64s(id, "dims", counts.data(), 3);
  w.text(id, "axis_order", "zyx");
  w.text(id, "units", unit_name(meta.physics.unit));
  w.number(id, "temperature", meta.physics.temperature);
  w.number(id, "dielectric", meta.physics.dielectric);
  w.number(id, "coulomb_factor", meta.coulomb_factor);
  w.text(id, "coulomb_factor_unit", factor_unit(meta.physics.unit));
  w.number(id, "min_distance", meta.physics.min_distance);
  w.text(id, "length_unit", "angstrom");
  w.text(id, "description",
         fmt::format("Electrostatic potential V(p) = C * sum_i q_i / max(|p - r_i|, r_min) in {} "
                     "by direct Coulomb summation. Shape [nz][ny][nx] (axis_order zyx: x varies "
                     "fastest); value [k][j][i] is at origin + (i*hx, j*hy, k*hz) Angstrom; "
                     "origin, spacing and dims are given as (x, y, z).",
                     unit_name(meta.physics.unit)));
  set.close(failure, "H5Dclose(potential)");
}

void write_statistics(hid_t file, const GridStats& stats, const Writer& w) {
  const Handle group = w.group(file, "statistics");
  w.number(group.get(), "min", stats.min);
  w.number(group.get(), "max", stats.max);
  w.number(group.get(), "mean", stats.mean);
  w.number(group.get(), "rms", stats.rms);
  w.number(group.get(), "sum", stats.sum);
  w.count(group.get(), "count", stats.count);
  w.count(group.get(), "nonfinite", stats.nonfinite);
}

void write_validation(hid_t file, const Validation& validation, const Writer& w) {
  const Handle group = w.group(file, "validation");
  w.boolean(group.get(), "performed", validation.performed);
  w.boolean(group.get(), "passed", validation.passed);
  w.count(group.get(), "points", validation.points);
  w.boolean(group.get(), "all_points", validation.all_points);
  w.number(group.get(), "max_abs_error", validation.max_abs_error);
  w.number(group.get(), "rms_error", validation.rms_error);
  w.number(group.get(), "max_abs_reference", validation.max_abs_reference);
  w.number(group.get(), "max_rel_error", validation.max_rel_error);
  w.number(group.get(), "tolerance", validation.tolerance);
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
  std::vector<std::string> name(n);
  std::vector<std::string> res_name(n);
  std::vector<std::string> chain(n);
  for (std::size_t index = 0; index < n; ++index) {
    const Atom& atom = system.atoms[index];
    std::copy(atom.position.begin(), atom.position.end(),
              position.begin() + 3 * static_cast<std::ptrdiff_t>(index));
    charge[index] = atom.charge;
    radius[index] = atom.radius;
    serial[index] = static_cast<std::int64_t>(atom.serial);
    res_seq[index] = static_cast<std::int64_t>(atom.res_seq);
    hetatm[index] = atom.hetatm ? 1 : 0;
    name[index] = atom.name;
    res_name[index] = atom.res_name;
    chain[index] = atom.chain;
  }
  const hid_t id = group.get();
  w.dataset(id, "position", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n, 3}, position.data());
  w.dataset(id, "charge", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n}, charge.data());
  w.dataset(id, "radius", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n}, radius.data());
  w.dataset(id, "serial", H5T_STD_I64LE, H5T_NATIVE_INT64, {n}, serial.data());
  w.strings(id, "name", name);
  w.strings(id, "res_name", res_name);
  w.strings(id, "chain", chain);
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

void write_vtkhdf(hid_t file, const GridSpec& grid, const Writer& w, const Failure& failure) {
  const Handle group = w.group(file, "VTKHDF");
  const hid_t id = group.get();
  const std::array<std::int64_t, 2> version{1, 0};
  w.int64s(id, "Version", version.data(), 2);
  w.fixed_text(id, "Type", "ImageData");
  const std::array<std::int64_t, 6> extent{0, grid.nx() - 1, 0, grid.ny() - 1, 0, grid.nz() - 1};
  w.int64s(id, "WholeExtent", extent.data(), 6);
  w.doubles(id, "Origin", grid.origin.data(), 3);
  w.doubles(id, "Spacing", grid.spacing.data(), 3);
  const std::array<double, 9> direction{1, 0, 0, 0, 1, 0, 0, 0, 1};
  w.doubles(id, "Direction", direction.data(), 9);
  const Handle point_data = w.group(id, "PointData");
  w.fixed_text(point_data.get(), "Scalars", "potential");
  // The same dataset under the name VTKHDF looks for: a hard link stores nothing twice and
  // cannot dangle.
  failure.status(
      H5Lcreate_hard(file, "/potential", point_data.get(), "potential", H5P_DEFAULT, H5P_DEFAULT),
      "H5Lcreate_hard(/VTKHDF/PointData/potential)");
  // VTKHDF >= 2.6 marks the active array on the dataset itself (VTK 9.7 honours this one; the
  // group attribute above is the 1.0 form).
  const Handle set(failure.id(H5Dopen2(file, "/potential", H5P_DEFAULT), "H5Dopen2(/potential)"),
                   H5Dclose);
  w.fixed_text(set.get(), "Attribute", "Scalars");
}

}  // namespace

bool hdf5_available() noexcept { return true; }

void write_hdf5(const std::string& path, const float* values, const MapMetadata& meta,
                const System& system, const Hdf5Options& opts) {
  prepare_library();
  if (opts.gzip_level < 0 || opts.gzip_level > 9)
    throw UsageError(fmt::format("HDF5 gzip level must be 0-9, got {}", opts.gzip_level));
  detail::check_map_input(path, values, meta.grid);
  const Failure failure(path, /*reading=*/false);

  AtomicFile output(path, opts.force);
  {
    const QuietErrors quiet;
    const Writer w(failure);
    const Handle fapl = file_access_plist(failure);
    Handle file(
        failure.id(H5Fcreate(output.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                   "H5Fcreate"),
        H5Fclose);
    const hid_t root = file.get();
    w.text(root, "format", "dcs potential map");
    w.int64s(root, "format_version", &kFormatVersion, 1);
    w.text(root, "program", meta.provenance.program);
    write_potential(root, values, meta, opts.gzip_level, w, failure);
    write_statistics(root, meta.stats, w);
    write_validation(root, meta.validation, w);
    write_atoms(root, system, w);
    write_provenance(root, meta.provenance, w, failure);
    write_vtkhdf(root, meta.grid, w, failure);
    file.close(failure, "H5Fclose");  // flushes: a full disk is reported here
  }
  output.commit();
}

// --- Reader --------------------------------------------------------------------------------------

namespace {

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

std::string read_string_attribute(hid_t object, const char* name, const Failure& failure) {
  const Handle attr(
      failure.id(H5Aopen(object, name, H5P_DEFAULT), fmt::format("H5Aopen({})", name)), H5Aclose);
  const Handle type(failure.id(H5Aget_type(attr.get()), "H5Aget_type"), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING)
    failure.invalid(fmt::format("attribute '{}' is not a string", name));
  const htri_t variable = H5Tis_variable_str(type.get());
  failure.status(variable, "H5Tis_variable_str");
  if (variable > 0) {
    char* pointer = nullptr;
    failure.status(H5Aread(attr.get(), type.get(), &pointer), fmt::format("H5Aread({})", name));
    std::string value = pointer != nullptr ? pointer : "";
    H5free_memory(pointer);
    return value;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::string value(size, '\0');
  failure.status(H5Aread(attr.get(), type.get(), value.data()), fmt::format("H5Aread({})", name));
  value.resize(std::strlen(value.c_str()));
  return value;
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
  result.units = read_string_attribute(set.get(), "units", failure);
  result.coulomb_factor = read_double_attribute(set.get(), "coulomb_factor", 1, failure)[0];
  result.values.resize(result.grid.points());
  failure.status(
      H5Dread(set.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, result.values.data()),
      "H5Dread(/potential)");
  return result;
}

}  // namespace dcs::io
