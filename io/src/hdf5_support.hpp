// Private helpers of the HDF5 writer, reader and map store (io/src/hdf5*.cpp): error
// handling, identifier ownership, attribute writers and the metadata groups of a dcs map file.
// Only compiled with DCS_ENABLE_HDF5.
#pragma once

#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dcs/atoms.hpp"
#include "dcs/error.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/map.hpp"
#include "dcs/stats.hpp"
#include "dcs/types.hpp"

namespace dcs::io::h5 {

constexpr std::int64_t kFormatVersion = 1;
constexpr hsize_t kChunkTargetFloats = (hsize_t{1} << 20) / sizeof(float);  // ~1 MiB chunks
constexpr std::int64_t kStoreChunkEdge = 64;  // the map store's chunk extent along y and x

// --- The partial file's plane statistics (/resume/plane_stats) ---------------------------------

/// One row of /resume/plane_stats per z-plane, float64: min, max, sum, sum_sq, count, nonfinite.
/// Both stores (MapStore, ParallelStore) read and write rows only through these.
constexpr std::size_t kPlaneStatFields = 6;
using PlaneStatsRow = std::array<double, kPlaneStatFields>;

inline PlaneStatsRow plane_stats_row(const StatsAccum& s) {
  return {s.min,
          s.max,
          s.sum,
          s.sum_sq,
          static_cast<double>(s.count),
          static_cast<double>(s.nonfinite)};
}

inline StatsAccum plane_stats_from_row(const double* row) {
  return StatsAccum{row[0],
                    row[1],
                    row[2],
                    row[3],
                    static_cast<std::uint64_t>(row[4]),
                    static_cast<std::uint64_t>(row[5])};
}

// --- Library set-up ----------------------------------------------------------------------------

/// Asks HDF5 not to run H5close() from atexit(). HDF5 1.10 leaves a file whose H5Fclose failed
/// (a full disk while flushing) half-closed, and closing it again, as H5close() does at exit,
/// crashes the process. Our files are always closed explicitly, so skipping it loses nothing.
/// Must precede every other HDF5 call; if the application used HDF5 first it has no effect.
inline void prepare_library() {
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

inline herr_t collect_error(unsigned /*index*/, const H5E_error2_t* error, void* client) {
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
inline std::string error_stack_text() {
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
    std::string detail = fmt::format("{} failed: {}", what, error_stack_text());
    // HDF5 names errno only in its words; EFBIG is a file size limit (ulimit -f).
    if (!reading_ && detail.find("File too large") != std::string::npos)
      detail += "; file size limit (ulimit -f) reached";
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
  /// Gives the identifier up without closing it (it stays open until the process ends).
  void leak() noexcept { id_ = H5I_INVALID_HID; }
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
inline std::string valid_utf8(std::string_view text) {
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
    strings(parent, name, values.size(),
            [&](std::size_t row) -> std::string_view { return values[row]; });
  }
  /// The same for `count` rows given by row(i) (a std::string_view): no copy of the strings
  /// (10^8 atoms' names would be 3.2 GB of std::string).
  template <class Row>
  void strings(hid_t parent, const char* name, std::size_t count, const Row& row) const {
    std::size_t width = 1;
    bool ascii = true;
    for (std::size_t i = 0; i < count; ++i) {
      const std::string_view value = row(i);
      width = std::max(width, value.size());
      for (const char c : value) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
    }
    const Handle type(failure_.id(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
    failure_.status(H5Tset_size(type.get(), width), "H5Tset_size");
    failure_.status(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad");
    failure_.status(H5Tset_cset(type.get(), ascii ? H5T_CSET_ASCII : H5T_CSET_UTF8), "H5Tset_cset");
    std::vector<char> buffer(count * width, '\0');
    for (std::size_t i = 0; i < count; ++i) {
      const std::string_view value = row(i);
      std::memcpy(buffer.data() + i * width, value.data(), value.size());
    }
    dataset(parent, name, type.get(), type.get(), {count}, buffer.data());
  }

 private:
  const Failure& failure_;
};

/// Chunk shape for a [nz][ny][nx] float map: whole z-planes up to ~1 MiB, else rows of a plane.
inline std::array<hsize_t, 3> chunk_shape(hsize_t nx, hsize_t ny, hsize_t nz) {
  const hsize_t plane = nx * ny;
  if (plane <= kChunkTargetFloats)
    return {std::clamp<hsize_t>(kChunkTargetFloats / plane, 1, nz), ny, nx};
  if (nx <= kChunkTargetFloats) return {1, std::clamp<hsize_t>(kChunkTargetFloats / nx, 1, ny), nx};
  return {1, 1, kChunkTargetFloats};
}

inline Handle file_access_plist(const Failure& failure) {
  Handle fapl(failure.id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"), H5Pclose);
#if H5_VERSION_GE(1, 10, 7)
  // Our temporary is private to this process; do not fail on file systems without flock().
  failure.status(H5Pset_file_locking(fapl.get(), false, true), "H5Pset_file_locking");
#endif
  return fapl;
}

/// The store's file access: file_access_plist() with a metadata cache that never evicts, so
/// that HDF5 writes the chunk index and the superblock only when the store flushes (at a
/// checkpoint), never between two: a kill -9 then finds the index of the last checkpoint, not
/// one that names chunks past the end of allocation the superblock records. The cache grows
/// by the metadata touched instead (about 50 bytes a chunk of a compressed map).
inline Handle store_access_plist(const Failure& failure) {
  Handle fapl = file_access_plist(failure);
  H5AC_cache_config_t config{};
  config.version = H5AC__CURR_CACHE_CONFIG_VERSION;
  failure.status(H5Pget_mdc_config(fapl.get(), &config), "H5Pget_mdc_config");
  // Evictions can be disabled only with the automatic resizing off.
  config.incr_mode = H5C_incr__off;
  config.flash_incr_mode = H5C_flash_incr__off;
  config.decr_mode = H5C_decr__off;
  config.evictions_enabled = false;
  failure.status(H5Pset_mdc_config(fapl.get(), &config), "H5Pset_mdc_config");
  return fapl;
}

/// A string attribute, variable- or fixed-length (trailing NULs dropped).
inline std::string read_string_attribute(hid_t object, const char* name, const Failure& failure) {
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

/// The attributes of /potential (grid, units, physics, description).
void write_potential_attributes(hid_t dataset, const MapMetadata& meta, const Writer& w);
/// A skewed grid's step vectors as the 3x3 attribute `axes` of `id` (rows va, vb, vc, Å).
void write_axes(hid_t id, const GridSpec& grid, const Writer& w);
/// --profile's group `profile` under the existing group `parent` ("trajectory"), or under
/// `root` when `parent` is empty (hdf5_profile.cpp); nothing for an empty profile.
void write_profile(hid_t root, const std::string& parent, const Profile& profile,
                   std::string_view unit, const Writer& w, const Failure& failure);
/// /potential's colour_range, colour_range_percentiles and colour_range_near_zero (when known).
void write_colour_range(hid_t dataset, const ColourRange& range, const Writer& w);
void write_statistics(hid_t file, const GridStats& stats, const Writer& w);
void write_validation(hid_t file, const Validation& validation, const Writer& w);
/// /method: --method, and for msm its parameters and measured error (docs/hdf5-layout.md).
void write_method(hid_t file, const MethodInfo& method, const Writer& w);
void write_atoms(hid_t file, const System& system, const Writer& w);
void write_provenance(hid_t file, const Provenance& prov, const Writer& w, const Failure& failure);
void write_vtkhdf(hid_t file, const GridSpec& grid, const Writer& w, const Failure& failure);

/// Throws ResumeMismatch naming what differs (the input, then each setting) unless the /resume
/// group `resume` records `key` (hdf5_resume_key.cpp).
void check_resume_key(hid_t resume, const ResumeKey& key, const Failure& failure);

// --- Checking a partial file's done planes (hdf5_store_verify.cpp) ------------------------------

/// Whether `recomputed`, the statistics of a plane read back, confirm `stored`: bit for bit, or
/// (a GPU's reduction sums in another order) min, max and counts exactly and the two sums within
/// the rounding of any summation order (`sum_abs`: the sum of the plane's |values|). Non-finite
/// values never pass.
bool plane_stats_confirm(const StatsAccum& stored, const StatsAccum& recomputed, double sum_abs);
/// The planes flagged in `done` whose values, read from the map `dataset` (chunks `chunk_depth`
/// planes deep) one chunk row at a time, do not confirm their `stats` (or cannot be read).
std::vector<std::int64_t> damaged_done_planes(hid_t dataset, const GridSpec& grid,
                                              std::int64_t chunk_depth,
                                              const std::vector<std::uint8_t>& done,
                                              const std::vector<StatsAccum>& stats,
                                              unsigned threads);
/// "plane 3" or "planes 3, 7-9": sorted plane numbers for a message.
std::string plane_list(const std::vector<std::int64_t>& planes);

}  // namespace dcs::io::h5
