#include "trajectory_guard.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"

namespace dcs::io::detail {
namespace {

/// Random-access reads of fixed-size integers from a file, big- or little-endian; every read
/// past the end throws InputError "<path>: <prefix>truncated <what>".
class Bytes {
 public:
  explicit Bytes(const std::string& path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw InputError(path, 0, "cannot open");
    in_.seekg(0, std::ios::end);
    size_ = static_cast<std::uint64_t>(in_.tellg());
  }
  std::uint64_t size() const { return size_; }
  void set_big_endian(bool big) { big_ = big; }
  void set_context(std::string prefix) { prefix_ = std::move(prefix); }

  [[noreturn]] void fail(const std::string& reason) const {
    throw InputError(path_, 0, prefix_ + reason);
  }
  void need(std::uint64_t at, std::uint64_t bytes, const char* what) const {
    if (at > size_ || bytes > size_ - at) fail(std::string("truncated ") + what);
  }
  std::uint64_t u(std::uint64_t at, int bytes, const char* what) {
    need(at, static_cast<std::uint64_t>(bytes), what);
    std::array<unsigned char, 8> b{};
    in_.seekg(static_cast<std::streamoff>(at));
    in_.read(reinterpret_cast<char*>(b.data()), bytes);
    if (!in_) fail(std::string("cannot read ") + what);
    std::uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) {
      const int k = big_ ? i : bytes - 1 - i;
      value = (value << 8) | b[static_cast<std::size_t>(k)];
    }
    return value;
  }
  std::int64_t i32(std::uint64_t at, const char* what) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(u(at, 4, what)));
  }
  float f32(std::uint64_t at, const char* what) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(u(at, 4, what)));
  }
  std::int64_t i64(std::uint64_t at, const char* what) {
    return static_cast<std::int64_t>(u(at, 8, what));
  }
  std::string text(std::uint64_t at, std::uint64_t n, const char* what) {
    need(at, n, what);
    std::string out(n, '\0');
    in_.seekg(static_cast<std::streamoff>(at));
    in_.read(out.data(), static_cast<std::streamsize>(n));
    return out;
  }

 private:
  const std::string& path_;
  std::ifstream in_;
  std::uint64_t size_ = 0;
  bool big_ = true;
  std::string prefix_;
};

void check_atoms(Bytes& bytes, std::int64_t stated, std::size_t atoms,
                 const std::string& mismatch) {
  if (stated < 0 || static_cast<std::uint64_t>(stated) != atoms)
    bytes.fail(std::to_string(stated) + mismatch);
}

// DCD (chemfiles DCDFormat::read_header): marker 84, "CORD", 20 int32 with the fixed-atom count
// at +36, marker; title record (n_lines then 80-byte lines); a 4-byte record with the atom count.
void guard_dcd(Bytes& b, std::size_t atoms, const std::string& mismatch) {
  const std::string head = b.text(0, 8, "DCD header");
  int marker = 4;
  if (head.compare(4, 4, "CORD") == 0) {
    b.set_big_endian(head[0] == 0);
  } else if (b.size() >= 12 && b.text(8, 4, "DCD header") == "CORD") {
    marker = 8;
    b.set_big_endian(head[0] == 0);
  } else {
    b.fail("not a DCD file (no CORD record at its start)");
  }
  const auto m = [&](std::uint64_t at) {
    return marker == 8 ? b.i64(at, "DCD header") : b.i32(at, "DCD header");
  };
  if (m(0) != 84) b.fail("not a DCD file (first record is not 84 bytes)");
  const std::uint64_t start = static_cast<std::uint64_t>(marker);
  const std::int64_t fixed = b.i32(start + 36, "DCD header");
  std::uint64_t at = start + 84;
  if (m(at) != 84) b.fail("corrupt DCD header (record marker)");
  at += static_cast<std::uint64_t>(marker);
  const std::int64_t title = m(at);
  at += static_cast<std::uint64_t>(marker);
  if (title < 0 || static_cast<std::uint64_t>(title) > b.size())
    b.fail("corrupt DCD header (title record of " + std::to_string(title) + " bytes)");
  if (title != 0) {
    if (title < 4 || (title - 4) % 80 != 0 || b.i32(at, "DCD title") != (title - 4) / 80)
      b.fail("corrupt DCD header (title record of " + std::to_string(title) +
             " bytes does not hold whole 80-character lines)");
  }
  b.need(at, static_cast<std::uint64_t>(title), "DCD title");
  at += static_cast<std::uint64_t>(title);
  if (m(at) != title) b.fail("corrupt DCD header (title record marker)");
  at += static_cast<std::uint64_t>(marker);
  // The whole record (markers and count) must be there: chemfiles reads its closing marker
  // with a message that names no file.
  b.need(at, 2 * static_cast<std::uint64_t>(marker) + 4, "DCD header (atom count record)");
  if (m(at) != 4 || m(at + static_cast<std::uint64_t>(marker) + 4) != 4)
    b.fail("corrupt DCD header (atom count record)");
  const std::int64_t n = b.i32(at + static_cast<std::uint64_t>(marker), "DCD header");
  check_atoms(b, n, atoms, mismatch);
  if (fixed < 0 || fixed >= n)
    b.fail("corrupt DCD header (" + std::to_string(fixed) + " fixed atoms of " + std::to_string(n) +
           ")");
  // A partial last frame: chemfiles would count the whole frames and only warn; a cut file is
  // refused instead, naming the frame. (Files with fixed atoms have a longer first frame.)
  if (fixed == 0) {
    const bool charmm = b.i32(start + 80, "DCD header") != 0;
    const bool cell = charmm && b.i32(start + 44, "DCD header") != 0;
    const bool four_d = charmm && b.i32(start + 48, "DCD header") == 1;
    const auto mk = static_cast<std::uint64_t>(marker);
    const std::uint64_t frame = (cell ? 2 * mk + 48 : 0) +
                                (four_d ? 4u : 3u) * (2 * mk + 4 * static_cast<std::uint64_t>(n));
    const std::uint64_t data = at + 2 * mk + 4;  // after the atom-count record
    if (data <= b.size() && (b.size() - data) % frame != 0)
      b.fail("frame " + std::to_string((b.size() - data) / frame) +
             ": truncated (the file ends inside it)");
  }
}

// XTC (chemfiles XTCFormat::determine_frame_offsets): per frame magic 1995, natoms, step, time,
// box (9 floats), natoms again; up to 9 atoms uncompressed (12 bytes each), otherwise precision,
// minint, maxint, smallidx, the byte count at +88 and the bytes padded to 4. The coordinates
// are the integers divided by the precision: one not positive (or not finite) would give the
// mirror image (chemfiles reads a negative one as given), infinities or NaN.
void guard_xtc(Bytes& b, std::size_t atoms, const std::string& mismatch, XtcFrames& frames) {
  std::uint64_t at = 0;
  for (std::int64_t frame = 0; at < b.size(); ++frame) {
    frames.offsets.push_back(at);
    b.set_context("frame " + std::to_string(frame) + ": ");
    if (b.i32(at, "XTC frame header") != 1995) b.fail("not an XTC frame (magic number)");
    check_atoms(b, b.i32(at + 4, "XTC frame header"), atoms, mismatch);
    if (b.i32(at + 52, "XTC frame header") != b.i32(at + 4, "XTC frame header"))
      b.fail("corrupt XTC frame header (two atom counts)");
    std::uint64_t bytes = 56 + 12 * static_cast<std::uint64_t>(atoms);
    if (atoms > 9) {
      const std::int64_t packed = b.i32(at + 88, "XTC frame header");
      if (packed < 0) b.fail("corrupt XTC frame header (negative byte count)");
      const float precision = b.f32(at + 56, "XTC frame header");
      if (!(precision > 0.0f) || !std::isfinite(precision))
        b.fail("corrupt XTC frame header (precision " + fmt::format("{:g}", precision) +
               ", must be a positive number)");
      bytes = 92 + ((static_cast<std::uint64_t>(packed) + 3) & ~std::uint64_t{3});
    }
    b.need(at, bytes, "XTC frame");
    at += bytes;
  }
  frames.offsets.push_back(at);
}

// TRR (chemfiles TRRFormat::read_frame_header): magic 1993, the string "GMX_trn_file" (length
// with terminator, XDR length, 12 bytes), ten section sizes, natoms, step, nre, then time and
// lambda as float or double.
void guard_trr(Bytes& b, std::size_t atoms, const std::string& mismatch) {
  std::uint64_t at = 0;
  for (std::int64_t frame = 0; at < b.size(); ++frame) {
    b.set_context("frame " + std::to_string(frame) + ": ");
    if (b.i32(at, "TRR frame header") != 1993) b.fail("not a TRR frame (magic number)");
    if (b.i32(at + 4, "TRR frame header") != 13 || b.i32(at + 8, "TRR frame header") != 12 ||
        b.text(at + 12, 12, "TRR frame header") != "GMX_trn_file")
      b.fail("not a TRR frame (version string)");
    std::array<std::int64_t, 10> sizes{};
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      sizes[i] = b.i32(at + 24 + 4 * i, "TRR frame header");
      if (sizes[i] < 0) b.fail("corrupt TRR frame header (negative size)");
      total += static_cast<std::uint64_t>(sizes[i]);
    }
    check_atoms(b, b.i32(at + 64, "TRR frame header"), atoms, mismatch);
    const std::uint64_t box = static_cast<std::uint64_t>(sizes[2]);
    const std::uint64_t real = box > 0 ? box / 9 : 0;
    const std::uint64_t coords = 3 * static_cast<std::uint64_t>(atoms);
    for (std::size_t i = 7; i < 10; ++i) {  // x, v, f
      const auto s = static_cast<std::uint64_t>(sizes[i]);
      if (s != 0 && s != coords * 4 && s != coords * 8)
        b.fail("corrupt TRR frame header (coordinate section of " + std::to_string(s) + " bytes)");
      if (s != 0 && real != 0 && s != coords * real)
        b.fail("corrupt TRR frame header (box and coordinates of other precisions)");
    }
    if (box != 0 && box != 36 && box != 72)
      b.fail("corrupt TRR frame header (box of " + std::to_string(box) + " bytes)");
    if (total == 0) b.fail("TRR frame without data");
    const bool wide =
        real == 8 || (real == 0 && (sizes[7] == static_cast<std::int64_t>(coords * 8) ||
                                    sizes[8] == static_cast<std::int64_t>(coords * 8) ||
                                    sizes[9] == static_cast<std::int64_t>(coords * 8)));
    const std::uint64_t header = wide ? 76 + 16 : 76 + 8;
    b.need(at, header + total, "TRR frame");
    at += header + total;
  }
}

// NetCDF-3 with 64-bit offsets (chemfiles Netcdf3File): "CDF\2", numrecs, the dimension,
// attribute and variable lists. Names and text attributes must fit in the file, variables
// must name existing dimensions, and the "atom" dimension must be the topology's count.
/// The bytes of one value of each NetCDF type (1 byte, char, short, int, float, double).
constexpr std::array<std::uint64_t, 7> kNetcdfTypeSize{0, 1, 1, 2, 4, 4, 8};

/// Where a variable's data lie: fixed-size ones once, record ones once per frame, records one
/// after the other (NetCDF-3).
struct NetcdfExtent {
  std::uint64_t offset, bytes;
  bool record;
};

/// The header of a NetCDF-3 file read in order, from the record count on: a cursor over the
/// bytes that refuses (Bytes::fail) what chemfiles would misread.
class NetcdfHeader {
 public:
  explicit NetcdfHeader(Bytes& b) : b_(b) {}

  /// The number of records (frames) the header claims.
  std::int64_t records() {
    const std::int64_t records = b_.i32(at_, "NetCDF header");
    if (records < 0) b_.fail("corrupt NetCDF header (negative record count)");
    at_ += 4;
    return records;
  }

  /// The dimensions' lengths (0: the record dimension); the 'atom' one must be the topology's.
  std::vector<std::int64_t> dimensions(std::size_t atoms, const std::string& mismatch) {
    const std::int64_t dims = count(10, "dimension");
    std::optional<std::int64_t> atom_dim;
    std::vector<std::int64_t> lengths;
    for (std::int64_t i = 0; i < dims; ++i) {
      const std::string dim = name();
      const std::int64_t length = b_.i32(at_, "NetCDF header");
      lengths.push_back(length);
      at_ += 4;
      if (length < 0) b_.fail("corrupt NetCDF header (negative dimension)");
      // Dimensions size chemfiles' buffers: besides the atoms, AMBER's are 3 (spatial) or 5
      // (label); a bound keeps a corrupt one from asking for gigabytes.
      if (dim == "atom") atom_dim = length;
      else if (length > 4096)
        b_.fail("NetCDF dimension '" + dim + "' of " + std::to_string(length));
    }
    if (!atom_dim) b_.fail("no 'atom' dimension: not an AMBER NetCDF trajectory");
    check_atoms(b_, *atom_dim, atoms, mismatch);
    return lengths;
  }

  /// An attribute list: names, types and values that fit in the file.
  void attributes() {
    const std::int64_t n = count(12, "attribute");
    for (std::int64_t i = 0; i < n; ++i) {
      name();
      const std::int64_t type = b_.i32(at_, "NetCDF header");
      const std::int64_t values = b_.i32(at_ + 4, "NetCDF header");
      if (type < 1 || type > 6 || values < 0 || (type != 2 && values != 1))
        b_.fail("corrupt or unsupported NetCDF attribute");
      const std::uint64_t bytes =
          kNetcdfTypeSize[static_cast<std::size_t>(type)] * static_cast<std::uint64_t>(values);
      b_.need(at_ + 8, bytes, "NetCDF attribute");
      at_ += 8 + ((bytes + 3) & ~std::uint64_t{3});
    }
  }

  /// The variable list: each variable's data extent, of dimensions among `lengths`. Refuses a
  /// file without AMBER's (frame, atom, spatial) coordinates.
  std::vector<NetcdfExtent> variables(const std::vector<std::int64_t>& lengths) {
    const std::int64_t variables = count(11, "variable");
    std::vector<NetcdfExtent> extents;
    bool coordinates = false;
    for (std::int64_t v = 0; v < variables; ++v) {
      const std::string variable = name();
      const std::int64_t ndims = b_.i32(at_, "NetCDF header");
      at_ += 4;
      if (ndims < 0 || ndims > 16) b_.fail("corrupt NetCDF header (variable rank)");
      std::uint64_t values = 1;
      bool record = false;
      for (std::int64_t d = 0; d < ndims; ++d) {
        const std::int64_t id = b_.i32(at_, "NetCDF header");
        at_ += 4;
        if (id < 0 || id >= static_cast<std::int64_t>(lengths.size()))
          b_.fail("corrupt NetCDF header (dimension index)");
        const std::int64_t length = lengths[static_cast<std::size_t>(id)];
        if (length == 0 && d == 0) record = true;
        else values *= static_cast<std::uint64_t>(length);  // each < 2^31
        if (values > b_.size()) values = b_.size() + 1;     // beyond the file in any case
      }
      attributes();
      const NetcdfExtent extent = data_extent(values, record);
      extents.push_back(extent);
      if (variable == "coordinates") coordinates = record && ndims == 3 && extent.bytes > 0;
    }
    // Without it chemfiles only warns and gives every frame zero positions.
    if (!coordinates)
      b_.fail(
          "no 'coordinates' variable of (frame, atom, spatial): not an AMBER NetCDF trajectory");
    return extents;
  }

 private:
  /// A list's tag and length (tag 0 with length 0: an absent list).
  std::int64_t count(std::int64_t tag, const char* what) {
    const std::int64_t t = b_.i32(at_, "NetCDF header");
    const std::int64_t n = b_.i32(at_ + 4, "NetCDF header");
    if ((t != tag && t != 0) || n < 0 || (t == 0 && n != 0) ||
        static_cast<std::uint64_t>(n) > b_.size())
      b_.fail(std::string("corrupt NetCDF header (") + what + " list)");
    at_ += 8;
    return n;
  }

  /// A name: its length and its bytes, padded to 4.
  std::string name() {
    const std::int64_t n = b_.i32(at_, "NetCDF header");
    if (n < 0 || static_cast<std::uint64_t>(n) > b_.size())
      b_.fail("corrupt NetCDF header (name of " + std::to_string(n) + " bytes)");
    const std::string text = b_.text(at_ + 4, static_cast<std::uint64_t>(n), "NetCDF header");
    at_ += 4 + ((static_cast<std::uint64_t>(n) + 3) & ~std::uint64_t{3});
    return text;
  }

  /// A variable's type, size and 64-bit offset: the extent of its `values` values.
  NetcdfExtent data_extent(std::uint64_t values, bool record) {
    // chemfiles' size-of-type has no case for an unknown type (undefined behaviour).
    const std::int64_t type = b_.i32(at_, "NetCDF header");
    if (type < 1 || type > 6)
      b_.fail("corrupt NetCDF header (variable type " + std::to_string(type) + ")");
    const std::uint64_t bytes =
        (values * kNetcdfTypeSize[static_cast<std::size_t>(type)] + 3) & ~3ull;
    const std::int64_t offset = b_.i64(at_ + 8, "NetCDF header");
    if (offset < 0) b_.fail("corrupt NetCDF header (negative data offset)");
    at_ += 16;  // type, size, 64-bit offset
    return {static_cast<std::uint64_t>(offset), bytes, record};
  }

  Bytes& b_;
  std::uint64_t at_ = 4;  ///< past the magic
};

/// chemfiles reads frames past the end of the file without an error, so every frame the header
/// claims must be in the file, and every fixed-size variable's data.
void check_netcdf_data(Bytes& b, const std::vector<NetcdfExtent>& extents, std::int64_t records) {
  std::uint64_t record_bytes = 0;
  for (const NetcdfExtent& e : extents)
    if (e.record) record_bytes += e.bytes;
  for (const NetcdfExtent& e : extents) {
    if (!e.record) {
      b.need(e.offset, e.bytes, "NetCDF variable data");
    } else if (records > 0) {
      const auto last = static_cast<std::uint64_t>(records - 1);
      const bool fits = record_bytes != 0 && last <= b.size() / record_bytes &&
                        e.offset <= b.size() &&
                        last * record_bytes + e.bytes <= b.size() - e.offset;
      if (!fits) {
        const std::uint64_t whole = record_bytes == 0 || e.offset + e.bytes > b.size()
                                        ? 0
                                        : (b.size() - e.offset - e.bytes) / record_bytes + 1;
        b.fail("frame " + std::to_string(whole) + ": truncated (the header claims " +
               std::to_string(records) + " frames)");
      }
    }
  }
}

void guard_netcdf(Bytes& b, std::size_t atoms, const std::string& mismatch) {
  const std::string head = b.text(0, 4, "NetCDF header");
  if (head.compare(0, 3, "CDF") != 0) b.fail("not a NetCDF file");
  if (head[3] != 2)
    b.fail(
        "only NetCDF-3 files with 64-bit offsets are read (AMBER's format; convert others "
        "with e.g. cpptraj or MDAnalysis)");
  NetcdfHeader header(b);
  const std::int64_t records = header.records();
  const std::vector<std::int64_t> lengths = header.dimensions(atoms, mismatch);
  header.attributes();
  check_netcdf_data(b, header.variables(lengths), records);
}

}  // namespace

XtcFrames guard_trajectory_file(const std::string& path, TrajectoryKind kind, std::size_t atoms,
                                const std::string& mismatch) {
  XtcFrames frames;
  Bytes bytes(path);
  if (bytes.size() == 0) bytes.fail("empty file");
  switch (kind) {
    case TrajectoryKind::kDcd: guard_dcd(bytes, atoms, mismatch); break;
    case TrajectoryKind::kXtc: guard_xtc(bytes, atoms, mismatch, frames); break;
    case TrajectoryKind::kTrr: guard_trr(bytes, atoms, mismatch); break;
    case TrajectoryKind::kNetcdf: guard_netcdf(bytes, atoms, mismatch); break;
  }
  return frames;
}

}  // namespace dcs::io::detail
