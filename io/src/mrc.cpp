// MRC2014 writer: see dcs/io/mrc.hpp for the header it writes and why.
#include "dcs/io/mrc.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/physics.hpp"
#include "dcs/version.hpp"
#include "direct_writes.hpp"
#include "fd_io.hpp"
#include "parallel_writes.hpp"

namespace dcs::io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the MRC writer stores native float32 and stamps the file little-endian");

using Header = std::array<unsigned char, kMrcHeaderBytes>;

// Words are numbered from 1 as in the MRC2014 table.
void put_int(Header& h, int word, std::int32_t value) {
  std::memcpy(h.data() + 4 * (word - 1), &value, 4);
}
void put_float(Header& h, int word, double value) {
  const float f = static_cast<float>(value);
  std::memcpy(h.data() + 4 * (word - 1), &f, 4);
}
void put_label(Header& h, int index, std::string_view text) {
  unsigned char* at = h.data() + 4 * (57 - 1) + 80 * index;
  std::memset(at, ' ', 80);
  const std::size_t n = std::min<std::size_t>(text.size(), 80);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    at[i] = c >= 0x20 && c < 0x7f ? c : '?';  // labels are ASCII
  }
}

std::int32_t checked_count(std::int64_t n, char axis) {
  if (n < 1 || n > std::numeric_limits<std::int32_t>::max())
    throw UsageError(fmt::format("MRC maps hold 1 to 2^31-1 points per axis; n{} = {}", axis, n));
  return static_cast<std::int32_t>(n);
}

/// CELLB word `axis`: the angle (degrees) between the grid's other two step vectors (alpha
/// between b and c, beta between a and c, gamma between a and b); 90 for an axis-aligned grid.
/// MRC readers (mrcfile, gemmi, ChimeraX) place a skewed grid's voxels from these angles, with
/// a along x and b in the xy plane, the reduced form of dcs's cells.
double cell_angle(const GridSpec& g, int axis) {
  if (!g.skewed()) return 90.0;
  const Vec3 u = g.step(static_cast<std::size_t>((axis + 1) % 3));
  const Vec3 v = g.step(static_cast<std::size_t>((axis + 2) % 3));
  const double dot = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
  const double norms = std::sqrt((u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) *
                                 (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
  return std::acos(std::clamp(dot / norms, -1.0, 1.0)) * 180.0 / std::numbers::pi;
}

}  // namespace

Header mrc_header(const MapMetadata& meta, const GridStats* stats) {
  const GridSpec& g = meta.grid;
  Header h{};
  const std::int32_t n[3] = {checked_count(g.nx(), 'x'), checked_count(g.ny(), 'y'),
                             checked_count(g.nz(), 'z')};
  for (int a = 0; a < 3; ++a) {
    put_int(h, 1 + a, n[a]);                                         // NX NY NZ
    put_int(h, 5 + a, 0);                                            // NXSTART NYSTART NZSTART
    put_int(h, 8 + a, n[a]);                                         // MX MY MZ
    put_float(h, 11 + a, static_cast<double>(n[a]) * g.spacing[a]);  // CELLA
    put_float(h, 14 + a, cell_angle(g, a));                          // CELLB
    put_int(h, 17 + a, a + 1);                                       // MAPC MAPR MAPS
    put_float(h, 50 + a, g.origin[a]);                               // ORIGIN
  }
  put_int(h, 4, 2);  // MODE: float32
  if (stats != nullptr) {
    put_float(h, 20, stats->min);
    put_float(h, 21, stats->max);
    put_float(h, 22, stats->mean);
    put_float(h, 55, std::sqrt(std::max(0.0, stats->rms * stats->rms - stats->mean * stats->mean)));
  } else {
    put_float(h, 20, 0.0);
    put_float(h, 21, -1.0);
    put_float(h, 22, -2.0);
    put_float(h, 55, -1.0);
  }
  put_int(h, 23, 1);      // ISPG: one volume
  put_int(h, 24, 0);      // NSYMBT
  put_int(h, 28, 20140);  // NVERSION (EXTTYP, word 27, stays zero: no extended header)
  std::memcpy(h.data() + 4 * (53 - 1), "MAP ", 4);
  const unsigned char stamp[4] = {0x44, 0x44, 0x00, 0x00};
  std::memcpy(h.data() + 4 * (54 - 1), stamp, 4);

  const std::string unit(unit_name(meta.physics.unit));
  const std::string labels[] = {
      fmt::format("dcs {}: electrostatic potential by direct Coulomb summation", kVersion),
      fmt::format("units {}, dielectric {:g}, temperature {:g} K, r_min {:g} A", unit,
                  meta.physics.dielectric, meta.physics.temperature, meta.physics.min_distance),
      fmt::format("origin {:.6g} {:.6g} {:.6g} A, spacing {:.6g} {:.6g} {:.6g} A", g.origin[0],
                  g.origin[1], g.origin[2], g.spacing[0], g.spacing[1], g.spacing[2]),
  };
  int count = 0;
  for (const std::string& label : labels) put_label(h, count++, label);
  if (!(meta.physics.dielectric_model == DielectricModel::kConstant &&
        meta.physics.ionic_strength == 0.0 && meta.physics.preset.empty()))
    put_label(h, count++, describe_model(meta.physics));  // cut at 80 characters
  if (!meta.provenance.input_path.empty())
    put_label(h, count++, "input " + meta.provenance.input_path);
  if (const std::string models = describe(meta.models); !models.empty())
    put_label(h, count++, models);
  for (int i = count; i < 10; ++i) put_label(h, i, "");
  put_int(h, 56, count);
  return h;
}

struct MrcWriter::Impl {
  AtomicFile file;
  ParallelWrites writes;  // the data block's slabs: pwrite at their offsets, several writers
  std::unique_ptr<DirectWrites> direct;  // ... or past the page cache (direct_writes.hpp)
  std::optional<MapMetadata> meta;
  std::int64_t next_z = 0;
  bool finished = false;
  Impl(std::string path, bool force, unsigned writers)
      : file(std::move(path), force), writes(writers) {}
  std::uint64_t plane_bytes() const { return meta->grid.plane_points() * sizeof(float); }
};

MrcWriter::MrcWriter(std::string final_path, bool force, unsigned writers)
    : impl_(std::make_unique<Impl>(std::move(final_path), force, writers)) {}

MrcWriter::~MrcWriter() = default;

const std::string& MrcWriter::final_path() const noexcept { return impl_->file.final_path(); }

void MrcWriter::begin(const MapMetadata& meta) {
  if (impl_->meta) throw UsageError("MrcWriter::begin() called twice for " + final_path());
  const Header header = mrc_header(meta, nullptr);
  impl_->meta = meta;
  write_at(impl_->file.fd(), header.data(), header.size(), 0, final_path());
  // The file at its final size now: direct writes past its end would each extend it, one at a
  // time. A refusal only costs speed (the writes then go through the page cache).
  const std::uint64_t end =
      kMrcHeaderBytes + impl_->plane_bytes() * static_cast<std::uint64_t>(meta.grid.nz());
  if (direct_writes_wanted() && ::ftruncate(impl_->file.fd(), static_cast<off_t>(end)) == 0)
    impl_->direct =
        std::make_unique<DirectWrites>(impl_->file.fd(), kMrcHeaderBytes, end, final_path());
}

void MrcWriter::write_slab(std::int64_t z_begin, std::int64_t z_count, const float* values) {
  Impl& s = *impl_;
  if (!s.meta) throw UsageError("MrcWriter::write_slab() before begin() for " + final_path());
  const std::int64_t nz = s.meta->grid.nz();
  if (z_begin != s.next_z || z_count < 0 || z_begin + z_count > nz)
    throw UsageError(
        fmt::format("MRC slabs must come in z order: got planes [{}, {}) of {}, "
                    "expected plane {} next ({})",
                    z_begin, z_begin + z_count, nz, s.next_z, final_path()));
  s.writes.write(s.file.fd(), values,
                 static_cast<std::size_t>(s.plane_bytes() * static_cast<std::uint64_t>(z_count)),
                 kMrcHeaderBytes + s.plane_bytes() * static_cast<std::uint64_t>(z_begin),
                 final_path(), s.direct.get());
  s.next_z += z_count;
}

void MrcWriter::finish(const GridStats& stats) {
  Impl& s = *impl_;
  if (!s.meta || s.next_z != s.meta->grid.nz())
    throw UsageError(fmt::format("MrcWriter::finish(): {} of {} planes written to {}", s.next_z,
                                 s.meta ? s.meta->grid.nz() : 0, final_path()));
  const Header header = mrc_header(*s.meta, &stats);
  write_at(s.file.fd(), header.data(), header.size(), 0, final_path());
  s.finished = true;
}

void MrcWriter::sync() {
  Impl& s = *impl_;
  if (!s.finished) throw UsageError("MrcWriter::sync() before finish() for " + final_path());
  if (s.file.fd() >= 0) {  // not yet synced: the data written back by the writers, then fsync
    s.direct.reset();      // its writes are on the device already
    try {
      s.writes.write_back(s.file.fd(), 0,
                          kMrcHeaderBytes + s.plane_bytes() * static_cast<std::uint64_t>(s.next_z),
                          final_path());
    } catch (...) {
      s.file.discard();
      throw;
    }
  }
  s.file.sync();
}

void MrcWriter::commit() {
  if (!impl_->finished) throw UsageError("MrcWriter::commit() before finish() for " + final_path());
  sync();  // the writers' writeback first (AtomicFile::commit() would only fsync)
  impl_->file.commit();
}

void MrcWriter::abort() noexcept { impl_->file.discard(); }

MrcSink::MrcSink(std::string path, bool force, unsigned writers)
    : path_(std::move(path)), force_(force), writers_(writers) {}

MrcSink::~MrcSink() = default;

void MrcSink::begin(const MapMetadata& meta) {
  writer_ = std::make_unique<MrcWriter>(path_, force_, writers_);
  writer_->begin(meta);
}

void MrcSink::write_slab(const Slab& slab, const float* values, const StatsAccum* /*plane_stats*/) {
  writer_->write_slab(slab.z_begin, slab.z_count, values);
}

void MrcSink::finish(const MapMetadata& meta, MapReader& /*map*/) { writer_->finish(meta.stats); }

void MrcSink::sync() { writer_->sync(); }

void MrcSink::commit() { writer_->commit(); }

void MrcSink::abort() noexcept {
  if (writer_) writer_->abort();
  writer_.reset();
}

void write_mrc(const std::string& path, const float* values, const MapMetadata& meta, bool force) {
  MrcWriter writer(path, force);
  writer.begin(meta);
  writer.write_slab(0, meta.grid.nz(), values);
  writer.finish(finalize(cpu_statistics(values, meta.grid.points())));
  writer.commit();
}

}  // namespace dcs::io
