#include "dcs/io/opendx.hpp"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <string_view>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "map_checks.hpp"

namespace dcs::io {
namespace {

constexpr std::size_t kFlushBytes = std::size_t{1} << 20;      // write in 1 MiB blocks
constexpr std::size_t kTransposeBytes = std::size_t{4} << 20;  // x-block buffer, see below
constexpr std::size_t kCommentWidth = 77;  // "# " + 77 = 79 columns; VMD dislikes > 80

/// Appends `value` as printf's "%12.6e" (right-aligned in 12 columns, 6 decimals, exponent of
/// at least two digits). std::to_chars is locale-independent and rounds correctly, as glibc's
/// printf does, so the bytes equal APBS's.
void append_e12_6(std::string& out, double value) {
  char digits[32];
  const auto result =
      std::to_chars(digits, digits + sizeof digits, value, std::chars_format::scientific, 6);
  const auto length = static_cast<std::size_t>(result.ptr - digits);
  if (length < 12) out.append(12 - length, ' ');
  out.append(digits, length);
}

}  // namespace

// Named, not anonymous: OpenDxWriter::Impl holds one, and GCC flags a member of anonymous
// type in a class of wider linkage (-Wsubobject-linkage) once this file is in a unity batch.
namespace dx_detail {

/// Where the formatted text goes: the AtomicFile directly, or a gzip stream on a duplicate of
/// its descriptor.
class DxSink {
 public:
  DxSink(AtomicFile& file, bool gzip, int gzip_level) : file_(file) {
    buffer_.reserve(kFlushBytes + 4096);
    if (!gzip) return;
    const int fd = ::dup(file.fd());
    if (fd < 0)
      throw IoError(
          fmt::format("error writing {}: dup failed: {}", file.final_path(), std::strerror(errno)));
    const std::string mode = fmt::format("wb{}", gzip_level);
    gz_ = ::gzdopen(fd, mode.c_str());
    if (gz_ == nullptr) {
      ::close(fd);
      throw IoError(
          fmt::format("error writing {}: cannot start gzip compression", file.final_path()));
    }
    ::gzbuffer(gz_, 256 * 1024);
  }
  ~DxSink() {
    if (gz_ != nullptr) ::gzclose(gz_);  // only on error paths; finish() closes normally
  }
  DxSink(const DxSink&) = delete;
  DxSink& operator=(const DxSink&) = delete;

  std::string& buffer() { return buffer_; }
  void maybe_flush() {
    if (buffer_.size() >= kFlushBytes) flush();
  }
  void flush() {
    if (buffer_.empty()) return;
    if (gz_ == nullptr) {
      file_.write(buffer_.data(), buffer_.size());
    } else {
      const int written = ::gzwrite(gz_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
      if (written <= 0 || static_cast<std::size_t>(written) != buffer_.size()) throw gz_error();
    }
    buffer_.clear();
  }
  /// Flushes everything and ends the gzip stream; the caller then commits the file.
  void finish() {
    flush();
    if (gz_ != nullptr) {
      gzFile gz = gz_;
      gz_ = nullptr;
      const int status = ::gzclose(gz);
      if (status != Z_OK)
        throw IoError(
            fmt::format("error writing {}: the gzip stream could not be completed "
                        "(zlib status {}; {})",
                        file_.final_path(), status, std::strerror(errno)));
    }
  }

 private:
  IoError gz_error() const {
    int code = 0;
    const char* message = ::gzerror(gz_, &code);
    if (code == Z_ERRNO) message = std::strerror(errno);
    return IoError(fmt::format("error writing {}: {}", file_.final_path(), message));
  }

  AtomicFile& file_;
  gzFile gz_ = nullptr;
  std::string buffer_;
};

}  // namespace dx_detail

namespace {

std::string sanitize(std::string_view text) {
  std::string clean(text);
  for (char& c : clean)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return clean;
}

/// Appends "# <text>" lines, wrapping `text` at spaces (or hard) so no line exceeds 79 columns.
void append_comment(std::string& out, std::string_view raw) {
  const std::string text = sanitize(raw);
  std::string_view rest(text);
  bool first = true;
  do {
    const std::size_t width = first ? kCommentWidth : kCommentWidth - 2;
    std::size_t take = rest.size();
    if (take > width) {
      const std::size_t space = rest.rfind(' ', width);
      take = (space != std::string_view::npos && space > width / 2) ? space : width;
    }
    out += first ? "# " : "#   ";
    out.append(rest.substr(0, take));
    out += '\n';
    rest.remove_prefix(take);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    first = false;
  } while (!rest.empty());
}

std::string header_comments(const MapMetadata& meta) {
  const Provenance& prov = meta.provenance;
  const Physics& physics = meta.physics;
  const std::string unit(unit_name(physics.unit));
  std::string out;
  // The four lines APBS writes (its "# " lines keep their trailing space).
  out += fmt::format("# Data from {} {}\n", prov.program.empty() ? "dcs" : sanitize(prov.program),
                     prov.version.empty() ? "(unknown version)" : sanitize(prov.version));
  out += "# \n";
  out += fmt::format("# POTENTIAL ({})\n", unit);
  out += "# \n";

  // The plain Coulomb map keeps its one-line formula; other models name theirs.
  if (pair_term(physics).kind == PairKind::kCoulomb && physics.preset.empty()) {
    append_comment(out, "Direct Coulomb summation: V(p) = C * sum_i q_i / max(|p - r_i|, r_min)");
  } else {
    append_comment(out, fmt::format("Direct Coulomb summation: V(p) = C * sum_i q_i g(max(|p - "
                                    "r_i|, r_min)), g(r) = {}",
                                    pair_formula(physics)));
    append_comment(out, "model: " + describe_model(physics));
  }
  append_comment(out, fmt::format("units: {} (temperature {:.6g} K, dielectric {:.6g})", unit,
                                  physics.temperature, physics.dielectric));
  append_comment(
      out, fmt::format("C = {:.10g} {}; distances clamped at r_min = {:.6g} A", meta.coulomb_factor,
                       factor_unit(physics.unit, physics.dielectric_model), physics.min_distance));
  append_comment(out, fmt::format("grid: {} x {} x {} points, node-centred, origin and deltas in "
                                  "Angstrom; values listed z fastest",
                                  meta.grid.nx(), meta.grid.ny(), meta.grid.nz()));
  if (!prov.input_path.empty()) append_comment(out, "input: " + prov.input_path);
  // "sha256: " + 64 hex digits fits one comment line, so the digest is never split.
  if (!prov.input_sha256.empty()) append_comment(out, "sha256: " + prov.input_sha256);
  if (const std::string models = describe(meta.models); !models.empty())
    append_comment(out, "models: " + models);
  if (!prov.command_line.empty()) append_comment(out, "command: " + prov.command_line);
  std::string compute;
  if (!prov.backend.empty()) compute += "backend " + prov.backend;
  if (!prov.kernel.empty()) compute += (compute.empty() ? "" : ", ") + ("kernel " + prov.kernel);
  if (!prov.reduction.empty())
    compute += (compute.empty() ? "" : ", ") + ("reduction " + prov.reduction);
  if (!compute.empty()) append_comment(out, compute);
  if (!prov.device.empty()) append_comment(out, "device: " + prov.device);
  std::string run;
  if (!prov.hostname.empty()) run += "host " + prov.hostname;
  if (!prov.created.empty()) run += (run.empty() ? "" : ", ") + ("created " + prov.created);
  if (!run.empty()) append_comment(out, run);
  const GridStats& stats = meta.stats;
  if (stats.count > 0)
    append_comment(out, fmt::format("statistics: min {:.6g}, max {:.6g}, mean {:.6g}, rms {:.6g} "
                                    "{}",
                                    stats.min, stats.max, stats.mean, stats.rms, unit));
  const Validation& validation = meta.validation;
  if (validation.performed)
    append_comment(
        out, fmt::format("validation against the float64 reference: {} ({} points): "
                         "max abs error {:.3g}, max rel error {:.3g}, tolerance {:.3g}",
                         validation.passed ? "passed" : "FAILED", validation.points,
                         validation.max_abs_error, validation.max_rel_error, validation.tolerance));
  return out;
}

}  // namespace

struct OpenDxWriter::Impl {
  Impl(const std::string& path, const MapMetadata& meta, bool force, bool gzip, int level)
      : grid(meta.grid), file(path, force), sink(file, gzip, level) {}
  GridSpec grid;
  AtomicFile file;
  dx_detail::DxSink sink;
  int on_line = 0;
  std::int64_t next_x = 0;
  bool synced = false;
};

OpenDxWriter::OpenDxWriter(const std::string& path, const MapMetadata& meta,
                           const OpenDxOptions& opts) {
  const GridSpec& grid = meta.grid;
  detail::check_map_grid(path, grid);
  const bool gzip = opts.gzip || std::string_view(path).ends_with(".gz");
  if (gzip && (opts.gzip_level < 1 || opts.gzip_level > 9))
    throw UsageError(fmt::format("OpenDX gzip level must be 1-9, got {}", opts.gzip_level));
  impl_ = std::make_unique<Impl>(path, meta, opts.force, gzip, opts.gzip_level);
  std::string& out = impl_->sink.buffer();

  out += header_comments(meta);
  out += fmt::format("object 1 class gridpositions counts {} {} {}\n", grid.nx(), grid.ny(),
                     grid.nz());
  out += "origin ";
  for (std::size_t axis = 0; axis < 3; ++axis) {
    if (axis > 0) out += ' ';
    append_e12_6(out, grid.origin[axis]);
  }
  out += '\n';
  for (std::size_t axis = 0; axis < 3; ++axis) {
    out += "delta ";
    for (std::size_t column = 0; column < 3; ++column) {
      if (column > 0) out += ' ';
      append_e12_6(out, grid.step(axis)[column]);  // skewed rows for a cell-axis grid
    }
    out += '\n';
  }
  out += fmt::format("object 2 class gridconnections counts {} {} {}\n", grid.nx(), grid.ny(),
                     grid.nz());
  out +=
      fmt::format("object 3 class array type double rank 0 items {} data follows\n", grid.points());
}

OpenDxWriter::~OpenDxWriter() = default;

void OpenDxWriter::write_x_columns(std::int64_t x_begin, std::int64_t count, const float* values) {
  Impl& s = *impl_;
  if (x_begin != s.next_x || count < 1 || x_begin + count > s.grid.nx())
    throw InternalError(fmt::format("OpenDX columns [{}, {}) out of order (next {})", x_begin,
                                    x_begin + count, s.next_x));
  const auto nx = static_cast<std::size_t>(s.grid.nx());
  const auto ny = static_cast<std::size_t>(s.grid.ny());
  const auto nz = static_cast<std::size_t>(s.grid.nz());
  const auto width = static_cast<std::size_t>(count);
  std::string& out = s.sink.buffer();
  // DX lists z fastest: for each x, each y, every z; `values` is [k][j][di].
  for (std::size_t di = 0; di < width; ++di)
    for (std::size_t j = 0; j < ny; ++j) {
      for (std::size_t k = 0; k < nz; ++k) {
        const float value = values[(k * ny + j) * width + di];
        if (!std::isfinite(value))
          throw detail::nonfinite_value_error(
              s.file.final_path(), value, s.grid,
              (k * ny + j) * nx + static_cast<std::size_t>(x_begin) + di);
        append_e12_6(out, static_cast<double>(value));
        out += ' ';  // APBS's "%12.6e " leaves a space after every value
        if (++s.on_line == 3) {
          out += '\n';
          s.on_line = 0;
        }
      }
      s.sink.maybe_flush();
    }
  s.next_x += count;
}

void OpenDxWriter::sync() {
  Impl& s = *impl_;
  if (s.synced) return;
  if (s.next_x != s.grid.nx())
    throw InternalError(fmt::format("OpenDX file {} committed after {} of {} x-columns",
                                    s.file.final_path(), s.next_x, s.grid.nx()));
  std::string& out = s.sink.buffer();
  if (s.on_line != 0) out += '\n';
  out += "attribute \"dep\" string \"positions\"\n";
  out += "object \"regular positions regular connections\" class field\n";
  out += "component \"positions\" value 1\n";
  out += "component \"connections\" value 2\n";
  out += "component \"data\" value 3\n";
  s.sink.finish();
  s.file.sync();
  s.synced = true;
}

void OpenDxWriter::commit() {
  sync();
  impl_->file.commit();
}

void OpenDxWriter::discard() noexcept { impl_.reset(); }

void write_opendx(const std::string& path, const float* values, const MapMetadata& meta,
                  const OpenDxOptions& opts) {
  const GridSpec& grid = meta.grid;
  detail::check_map_input(path, values, grid);
  OpenDxWriter writer(path, meta, opts);
  // Our map is x fastest: copy a block of up to 16 x-columns at a time into [k][j][di] order
  // (the layout the streaming writer takes), then format it.
  const auto nx = static_cast<std::size_t>(grid.nx());
  const auto ny = static_cast<std::size_t>(grid.ny());
  const auto nz = static_cast<std::size_t>(grid.nz());
  const std::size_t column_floats = ny * nz;
  const std::size_t block =
      std::clamp<std::size_t>(kTransposeBytes / (column_floats * sizeof(float)), 1, 16);
  std::vector<float> columns(block * column_floats);
  for (std::size_t i0 = 0; i0 < nx; i0 += block) {
    const std::size_t width = std::min(block, nx - i0);
    for (std::size_t k = 0; k < nz; ++k)
      for (std::size_t j = 0; j < ny; ++j) {
        const float* row = values + (k * ny + j) * nx + i0;
        std::copy(row, row + width, columns.data() + (k * ny + j) * width);
      }
    writer.write_x_columns(static_cast<std::int64_t>(i0), static_cast<std::int64_t>(width),
                           columns.data());
  }
  writer.commit();
}

// --- Reader ----------------------------------------------------------------------------------

namespace {

std::string read_all(const std::string& path) {
  errno = 0;
  gzFile gz = ::gzopen(path.c_str(), "rb");
  if (gz == nullptr) {
    throw InputError(
        path, 0,
        fmt::format("cannot open: {}", errno != 0 ? std::strerror(errno) : "out of memory"));
  }
  std::string content;
  std::vector<char> chunk(std::size_t{1} << 20);
  for (;;) {
    const int got = ::gzread(gz, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (got < 0) {
      int code = 0;
      std::string message = ::gzerror(gz, &code);
      if (code == Z_ERRNO) message = std::strerror(errno);
      ::gzclose(gz);
      throw InputError(path, 0, "read error: " + message);
    }
    if (got == 0) break;
    content.append(chunk.data(), static_cast<std::size_t>(got));
  }
  ::gzclose(gz);
  return content;
}

bool is_separator(char c) { return c == ' ' || c == '\t' || c == ','; }

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && is_separator(line[pos])) ++pos;
    const std::size_t start = pos;
    while (pos < line.size() && !is_separator(line[pos])) ++pos;
    if (pos > start) {
      std::string_view word = line.substr(start, pos - start);
      if (word.size() >= 2 && word.front() == '"' && word.back() == '"')
        word = word.substr(1, word.size() - 2);  // GridDataFormats writes type "double"
      words.push_back(word);
    }
  }
  return words;
}

bool parse_double(std::string_view word, double& value) {
  // from_chars takes no '+'; drop one, but not in front of a sign ("+-5" is not a number).
  if (word.size() > 1 && word[0] == '+' && word[1] != '-' && word[1] != '+') word.remove_prefix(1);
  const auto result = std::from_chars(word.data(), word.data() + word.size(), value);
  return result.ec == std::errc() && result.ptr == word.data() + word.size();
}

bool parse_count(std::string_view word, std::int64_t& value) {
  const auto result = std::from_chars(word.data(), word.data() + word.size(), value);
  return result.ec == std::errc() && result.ptr == word.data() + word.size();
}

class DxParser {
 public:
  DxParser(std::string path, std::string_view content) : path_(std::move(path)), text_(content) {}

  OpenDxMap parse() {
    std::size_t pos = 0;
    while (pos < text_.size()) {
      std::size_t end = text_.find('\n', pos);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view line = text_.substr(pos, end - pos);
      pos = end + 1;
      ++line_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      handle(line);
    }
    finish();
    return std::move(map_);
  }

 private:
  enum class Stage { Positions, Origin, Delta, Connections, Array, Data, Trailer };

  [[noreturn]] void fail(const std::string& reason) const {
    throw InputError(path_, line_, reason);
  }

  std::array<std::int64_t, 3> parse_counts(const std::vector<std::string_view>& words,
                                           std::string_view klass) const {
    // object <id> class <klass> counts nx ny nz
    if (words.size() != 8 || words[0] != "object" || words[2] != "class" || words[3] != klass ||
        words[4] != "counts")
      fail(fmt::format("expected 'object <id> class {} counts nx ny nz'", klass));
    std::array<std::int64_t, 3> counts{};
    for (std::size_t axis = 0; axis < 3; ++axis) {
      if (!parse_count(words[5 + axis], counts[axis]) || counts[axis] < 1)
        fail(fmt::format("grid count '{}' is not a positive integer", words[5 + axis]));
    }
    return counts;
  }

  Vec3 parse_vector(const std::vector<std::string_view>& words, std::string_view keyword) const {
    if (words.size() != 4 || words[0] != keyword) fail(fmt::format("expected '{} x y z'", keyword));
    Vec3 v{};
    for (std::size_t axis = 0; axis < 3; ++axis)
      if (!parse_double(words[1 + axis], v[axis]) || !std::isfinite(v[axis]))
        fail(fmt::format("'{}' is not a finite number", words[1 + axis]));
    return v;
  }

  void handle(std::string_view line) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) return;  // blank
    if (line[first] == '#') {
      std::string_view comment = line.substr(first + 1);
      if (!comment.empty() && comment.front() == ' ') comment.remove_prefix(1);
      while (!comment.empty() && (comment.back() == ' ' || comment.back() == '\t'))
        comment.remove_suffix(1);
      map_.comments.emplace_back(comment);
      return;
    }
    const std::vector<std::string_view> words = split_words(line);
    if (words.empty()) return;  // only separators
    switch (stage_) {
      case Stage::Positions: {
        map_.grid.counts = parse_counts(words, "gridpositions");
        const auto nx = static_cast<std::uint64_t>(map_.grid.counts[0]);
        const auto ny = static_cast<std::uint64_t>(map_.grid.counts[1]);
        const auto nz = static_cast<std::uint64_t>(map_.grid.counts[2]);
        // Every value takes at least two bytes ("0 "): a bound that also stops absurd counts
        // from allocating before the data is seen.
        const std::uint64_t limit = text_.size() / 2 + 1;
        if (nx > limit || ny > limit || nz > limit || nx * ny > limit || nx * ny * nz > limit)
          fail(fmt::format("counts {} {} {} need more values than the file can hold", nx, ny, nz));
        stage_ = Stage::Origin;
        return;
      }
      case Stage::Origin:
        map_.grid.origin = parse_vector(words, "origin");
        stage_ = Stage::Delta;
        return;
      case Stage::Delta: {
        // Axis-aligned rows, or the skewed rows of a grid along a triclinic cell's vectors.
        const Vec3 delta = parse_vector(words, "delta");
        deltas_[delta_row_] = delta;
        bool aligned = true;
        for (std::size_t column = 0; column < 3; ++column)
          aligned = aligned && (column == delta_row_ || delta[column] == 0.0);
        const double h = aligned ? delta[delta_row_] : std::hypot(delta[0], delta[1], delta[2]);
        if (!(h > 0.0)) fail(fmt::format("grid spacing {} is not positive", h));
        if (!aligned) map_.grid.axes = deltas_;  // completed by the next rows
        map_.grid.spacing[delta_row_] = h;
        if (++delta_row_ == 3) {
          if (map_.grid.axes) {
            const Mat3& d = deltas_;
            const double volume = d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) -
                                  d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                                  d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
            if (!(volume > 0.0))
              fail(
                  "the delta rows span no right-handed volume (a skewed grid's steps must be "
                  "three independent vectors, a, b, c in order)");
            map_.grid.axes = deltas_;
          }
          stage_ = Stage::Connections;
        }
        return;
      }
      case Stage::Connections:
        if (parse_counts(words, "gridconnections") != map_.grid.counts)
          fail("gridconnections counts differ from gridpositions counts");
        stage_ = Stage::Array;
        return;
      case Stage::Array:
        parse_array_header(words);
        stage_ = Stage::Data;
        return;
      case Stage::Data: parse_values(words); return;
      case Stage::Trailer: {
        const std::string_view lead = words.front();
        if (lead == "attribute" || lead == "object" || lead == "component" || lead == "end") return;
        double ignored = 0.0;
        if (parse_double(lead, ignored))
          fail(fmt::format("more than the {} values the header announces", expected_));
        fail(fmt::format("unexpected text after the data: '{}'", lead));
      }
    }
  }

  void parse_array_header(const std::vector<std::string_view>& words) {
    // object <id> class array type <double|float> rank 0 items N data follows
    if (words.size() < 4 || words[0] != "object" || words[2] != "class" || words[3] != "array")
      fail("expected 'object <id> class array type double rank 0 items N data follows'");
    bool have_items = false;
    bool data_follows = false;
    for (std::size_t index = 4; index < words.size(); ++index) {
      const std::string_view key = words[index];
      const bool has_value = index + 1 < words.size();
      if (key == "type" && has_value) {
        const std::string_view type = words[++index];
        if (type != "double" && type != "float")
          fail(fmt::format("array type '{}' is not supported (double or float)", type));
      } else if (key == "rank" && has_value) {
        if (words[++index] != "0") fail("only scalar data (rank 0) is supported");
      } else if (key == "shape" && has_value) {
        if (words[++index] != "1") fail("only scalar data (shape 1) is supported");
      } else if (key == "items" && has_value) {
        std::int64_t items = 0;
        if (!parse_count(words[++index], items) || items < 1)
          fail(fmt::format("'{}' is not a positive item count", words[index]));
        expected_ = static_cast<std::size_t>(items);
        have_items = true;
      } else if (key == "data" && has_value && words[index + 1] == "follows") {
        data_follows = true;
        ++index;
      } else {
        fail(fmt::format("unexpected '{}' in the array header", key));
      }
    }
    if (!have_items) fail("the array header has no 'items N'");
    if (!data_follows) fail("the array header must end in 'data follows' (no external data)");
    if (expected_ != map_.grid.points())
      fail(fmt::format("items {} differ from the grid's {} x {} x {} = {} points", expected_,
                       map_.grid.nx(), map_.grid.ny(), map_.grid.nz(), map_.grid.points()));
    map_.values.resize(expected_);
  }

  void parse_values(const std::vector<std::string_view>& words) {
    const std::string_view lead = words.front();
    if (lead == "attribute" || lead == "object" || lead == "component")
      fail(fmt::format("expected {} values, found only {}", expected_, read_));
    // The file lists z fastest, n = (i*ny + j)*nz + k; store x fastest as we go.
    const auto ny = static_cast<std::size_t>(map_.grid.ny());
    const auto nz = static_cast<std::size_t>(map_.grid.nz());
    for (const std::string_view word : words) {
      double value = 0.0;
      if (!parse_double(word, value)) fail(fmt::format("'{}' is not a number", word));
      if (read_ == expected_)
        fail(fmt::format("more than the {} values the header announces", expected_));
      const std::size_t k = read_ % nz;
      const std::size_t j = (read_ / nz) % ny;
      const std::size_t i = read_ / (nz * ny);
      map_.values[map_.grid.index(static_cast<std::int64_t>(i), static_cast<std::int64_t>(j),
                                  static_cast<std::int64_t>(k))] = value;
      ++read_;
    }
    if (read_ == expected_) stage_ = Stage::Trailer;
  }

  void finish() {
    switch (stage_) {
      case Stage::Positions:
        fail("no 'object 1 class gridpositions counts nx ny nz' line (empty, or not OpenDX)");
      case Stage::Origin: fail("unexpected end of file: missing 'origin'");
      case Stage::Delta: fail("unexpected end of file: missing 'delta' lines");
      case Stage::Connections: fail("unexpected end of file: missing 'gridconnections'");
      case Stage::Array: fail("unexpected end of file: missing the data array header");
      case Stage::Data:
        fail(fmt::format("unexpected end of file: expected {} values, found {}", expected_, read_));
      case Stage::Trailer: break;
    }
  }

  std::string path_;
  std::string_view text_;
  std::uint64_t line_ = 0;
  Stage stage_ = Stage::Positions;
  std::size_t delta_row_ = 0;
  Mat3 deltas_{};  ///< the delta rows read so far
  std::size_t expected_ = 0;
  std::size_t read_ = 0;  // values stored so far, counted in file order
  OpenDxMap map_;
};

}  // namespace

OpenDxMap read_opendx(const std::string& path) {
  const std::string content = read_all(path);
  return DxParser(path, content).parse();
}

}  // namespace dcs::io
