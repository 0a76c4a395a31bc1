#include "dcs/io/pqr.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#include <zlib.h>

#include "dcs/error.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/limits.hpp"
#include "dcs/io/checksum.hpp"
#include "dcs/log.hpp"

namespace dcs::io {
namespace {

// ---------------------------------------------------------------------------------------------
// Line sources: the parsers see lines, whether they come from a stream or from zlib. Lines end
// at "\n", "\r\n" or a lone "\r" (classic Mac files would otherwise be one giant line). Every
// block read polls dcs::interrupt_requested(), so a signal stops the read of a huge file.

class LineSource {
 public:
  virtual ~LineSource() = default;
  /// Next line without its line ending; false at the end of input. Throws InputError on read
  /// errors and InterruptedError when an interrupt was requested.
  bool next(std::string& line) {
    line.clear();
    bool any = false;
    for (;;) {
      if (pos_ == end_) {
        if (!refill()) {
          if (!any) return false;
          break;
        }
      }
      if (skip_newline_after_cr_) {
        skip_newline_after_cr_ = false;
        if (buffer_[pos_] == '\n') {
          ++pos_;
          continue;
        }
      }
      const char* begin = buffer_.data() + pos_;
      const char* stop = begin;
      const char* limit = buffer_.data() + end_;
      while (stop != limit && *stop != '\n' && *stop != '\r') ++stop;
      line.append(begin, static_cast<std::size_t>(stop - begin));
      any = true;
      pos_ += static_cast<std::size_t>(stop - begin);
      if (stop != limit) {
        skip_newline_after_cr_ = *stop == '\r';
        ++pos_;
        break;
      }
    }
    ++line_number_;
    return true;
  }
  std::uint64_t line_number() const noexcept { return line_number_; }
  /// Reads the rest of the input without parsing it (so that corrupt compressed data is
  /// reported as such rather than as the garbage line it decoded to).
  void drain() {
    while (refill()) pos_ = end_;
  }

 protected:
  static constexpr std::size_t kBlockSize = std::size_t{1} << 17;
  explicit LineSource(const std::string& name) : name_(name), buffer_(kBlockSize) {}
  /// Fills `out` with up to `capacity` bytes; 0 at the end of input.
  virtual std::size_t read_block(char* out, std::size_t capacity) = 0;
  const std::string& name_;

 private:
  bool refill() {
    if (interrupt_requested())
      throw InterruptedError(name_ + ": interrupted while reading (after line " +
                             std::to_string(line_number_) + ")");
    end_ = read_block(buffer_.data(), buffer_.size());
    pos_ = 0;
    return end_ > 0;
  }

  std::vector<char> buffer_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  bool skip_newline_after_cr_ = false;
  std::uint64_t line_number_ = 0;
};

class StreamLineSource final : public LineSource {
 public:
  StreamLineSource(std::istream& in, const std::string& name) : LineSource(name), in_(in) {}

 protected:
  std::size_t read_block(char* out, std::size_t capacity) override {
    in_.read(out, static_cast<std::streamsize>(capacity));
    const auto got = static_cast<std::size_t>(in_.gcount());
    if (in_.bad()) throw InputError(name_, 0, "read error after line " + std::to_string(line_number()));
    return got;
  }

 private:
  std::istream& in_;
};

// Streams a .gz file through zlib's inflate in blocks, so large inputs never sit in memory
// twice. Concatenated gzip members (what `cat a.gz b.gz` makes, and what gzip -d accepts) are
// read one after the other; anything else after the last member is refused, like corrupt or
// truncated data (trailing zero bytes, which some tape and transfer tools append, only warn).
class GzLineSource final : public LineSource {
 public:
  explicit GzLineSource(const std::string& path) : LineSource(path), input_(kBlockSize) {
    errno = 0;
    file_.reset(std::fopen(path.c_str(), "rb"));
    if (!file_) {
      throw InputError(path, 0, std::string("cannot open: ") +
                                    (errno != 0 ? std::strerror(errno) : "unknown error"));
    }
    // The checks that may throw come before inflateInit2: a constructor that throws runs no
    // destructor, so nothing here may throw once zlib holds memory (a leak per refused file).
    fill_input();
    // A .gz name that does not hold gzip data is more likely a mistake than a convenience.
    if (stream_.avail_in < 2 || !at_gzip_magic())
      throw InputError(path, 0, "not gzip-compressed data, although the name ends in '.gz'");
    Bytef* const next_in = stream_.next_in;  // zlib may touch them; the bytes read stay
    const uInt avail_in = stream_.avail_in;
    if (inflateInit2(&stream_, 15 + 16) != Z_OK)  // gzip wrapper only
      throw InputError(path, 0, "zlib could not allocate its state");
    initialised_ = true;
    stream_.next_in = next_in;
    stream_.avail_in = avail_in;
  }
  ~GzLineSource() override {
    if (initialised_) inflateEnd(&stream_);
  }
  GzLineSource(const GzLineSource&) = delete;
  GzLineSource& operator=(const GzLineSource&) = delete;

 protected:
  std::size_t read_block(char* out, std::size_t capacity) override {
    stream_.next_out = reinterpret_cast<Bytef*>(out);
    stream_.avail_out = static_cast<uInt>(capacity);
    // Fill the whole block (as gzread did): corrupt data is then usually reported as such
    // before the garbage it decodes to reaches the parser.
    while (stream_.avail_out > 0 && !finished_) {
      if (stream_.avail_in == 0) fill_input();
      if (stream_.avail_in == 0) {
        if (member_done_) {
          finished_ = true;
          break;
        }
        throw InputError(name_, 0, "truncated gzip data: the compressed stream ends after line " +
                                       std::to_string(line_number()));
      }
      if (member_done_) {  // more bytes after a complete member: another member, or garbage
        if (!at_gzip_magic()) {
          check_trailing_bytes();
          finished_ = true;
          break;
        }
        inflateReset(&stream_);
        member_done_ = false;
      }
      const int code = inflate(&stream_, Z_NO_FLUSH);
      if (code == Z_STREAM_END) {
        member_done_ = true;
      } else if (code != Z_OK && code != Z_BUF_ERROR) {
        throw InputError(name_, 0, "corrupt gzip data after line " + std::to_string(line_number()) +
                                       ": " + (stream_.msg != nullptr ? stream_.msg : zError(code)));
      }
    }
    return capacity - stream_.avail_out;
  }

 private:
  void fill_input() {
    if (stream_.avail_in > 0) return;
    const std::size_t got = std::fread(input_.data(), 1, input_.size(), file_.get());
    if (std::ferror(file_.get()) != 0)
      throw InputError(name_, 0, "read error after line " + std::to_string(line_number()));
    consumed_ += got;
    stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
    stream_.avail_in = static_cast<uInt>(got);
  }

  /// The next input bytes start a gzip member (1f 8b); needs two bytes, refilling if needed.
  bool at_gzip_magic() {
    if (stream_.avail_in == 1) {  // keep the one byte and read on
      const Bytef first = stream_.next_in[0];
      input_[0] = static_cast<char>(first);
      const std::size_t got = std::fread(input_.data() + 1, 1, input_.size() - 1, file_.get());
      consumed_ += got;
      stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
      stream_.avail_in = static_cast<uInt>(got + 1);
    }
    return stream_.avail_in >= 2 && stream_.next_in[0] == 0x1f && stream_.next_in[1] == 0x8b;
  }

  /// After the last member: zero bytes are tolerated with a warning, anything else refused.
  void check_trailing_bytes() {
    const std::uintmax_t offset = consumed_ - stream_.avail_in;
    std::uintmax_t trailing = 0;
    bool all_zero = true;
    for (;;) {
      for (uInt i = 0; i < stream_.avail_in; ++i) all_zero = all_zero && stream_.next_in[i] == 0;
      trailing += stream_.avail_in;
      stream_.avail_in = 0;
      if (!all_zero) break;
      fill_input();
      if (stream_.avail_in == 0) break;
    }
    if (!all_zero)
      throw InputError(name_, 0, "trailing garbage after the gzip data (at byte " +
                                     std::to_string(offset) +
                                     "): the file is damaged or not a single .gz file");
    log().warn("{}: ignored {} zero byte(s) after the gzip data", name_, trailing);
  }

  struct FileCloser {
    void operator()(std::FILE* file) const noexcept { std::fclose(file); }
  };

  std::unique_ptr<std::FILE, FileCloser> file_;
  std::vector<char> input_;
  z_stream stream_{};
  bool initialised_ = false;
  bool member_done_ = false;
  bool finished_ = false;
  std::uintmax_t consumed_ = 0;  ///< compressed bytes read from the file so far
};

// ---------------------------------------------------------------------------------------------
// Small text helpers.

bool is_blank(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_alpha(char c) noexcept { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

std::string_view trim(std::string_view text) noexcept {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

bool all_blank(std::string_view text) noexcept {
  return std::all_of(text.begin(), text.end(), is_blank);
}

bool has_blank(std::string_view text) noexcept {
  return std::any_of(text.begin(), text.end(), is_blank);
}

// A field for an error message: quoted, control bytes replaced, long fields shortened.
std::string quote(std::string_view field) {
  constexpr std::size_t kMaxShown = 40;
  std::string out = "'";
  for (std::size_t i = 0; i < field.size() && i < kMaxShown; ++i) {
    const auto byte = static_cast<unsigned char>(field[i]);
    out.push_back(byte >= 0x20 && byte < 0x7f ? field[i] : '?');
  }
  if (field.size() > kMaxShown) out += "...";
  out += "'";
  return out;
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

enum class NumberStatus { kOk, kNotNumber, kNotFinite };

NumberStatus parse_double(std::string_view text, double& value) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  if (text.empty()) return NumberStatus::kNotNumber;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, value, std::chars_format::general);
  if (ptr != last || ec == std::errc::invalid_argument) return NumberStatus::kNotNumber;
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves the value unset for overflow and underflow alike; strtod tells them
    // apart (an underflow to ~0 is a harmless value, an overflow is not finite).
    const std::string copy(text);
    value = std::strtod(copy.c_str(), nullptr);
  }
  return std::isfinite(value) ? NumberStatus::kOk : NumberStatus::kNotFinite;
}

bool parse_integer(std::string_view text, long long& value) {
  if (text.size() > 1 && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), last, value);
  return ec == std::errc() && ptr == last;
}

// A residue number, optionally followed by a one-letter insertion code ("52A").
bool parse_residue_number(std::string_view text, long long& value) {
  if (text.size() > 1 && is_alpha(text.back()) && is_digit(text[text.size() - 2])) {
    text.remove_suffix(1);
  }
  return parse_integer(text, value);
}

// ---------------------------------------------------------------------------------------------
// PQR records.

struct Field {
  std::string_view text;
  std::size_t pos = 0;  // offset of text in the line
};

void split_fields(std::string_view line, std::size_t begin, std::size_t end,
                  std::vector<Field>& out) {
  out.clear();
  std::size_t i = begin;
  while (i < end) {
    while (i < end && is_blank(line[i])) ++i;
    const std::size_t start = i;
    while (i < end && !is_blank(line[i])) ++i;
    if (i > start) out.push_back({line.substr(start, i - start), start});
  }
}

// "0.500010.0000" -> "0.5000", "10.0000": numbers written with one %.Nf format and no room for
// a blank between them (pdb2pqr: radius >= 10 Å; %8.3f coordinates >= 1000 Å). Every number
// then has as many decimals as the last one. Returns false when the field has no such shape.
bool split_equal_decimals(const Field& field, std::vector<Field>& out) {
  const std::string_view text = field.text;
  const std::size_t last_dot = text.rfind('.');
  if (last_dot == std::string_view::npos || text.find('.') == last_dot) return false;
  const std::size_t decimals = text.size() - last_dot - 1;
  if (decimals == 0) return false;
  for (const char c : text.substr(1)) {
    if (!is_digit(c) && c != '.') return false;
  }
  const std::size_t first_out = out.size();
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = text.find('.', start);
    const std::size_t cut = dot + 1 + decimals;
    if (dot == last_dot) {
      out.push_back({text.substr(start), field.pos + start});
      return true;
    }
    // The next number needs at least one integer digit before its own '.'.
    if (cut >= text.find('.', dot + 1)) {
      out.resize(first_out);
      return false;
    }
    out.push_back({text.substr(start, cut - start), field.pos + start});
    start = cut;
  }
}

// Splits a field into the numbers fused in it: at every '-' that follows a digit or '.'
// (so "1e-5" stays whole), then by the equal-decimals rule. A plain field yields itself.
void split_fused(const Field& field, std::vector<Field>& out) {
  out.clear();
  const std::string_view text = field.text;
  const auto emit = [&](std::size_t begin, std::size_t end) {
    const Field piece{text.substr(begin, end - begin), field.pos + begin};
    if (!split_equal_decimals(piece, out)) out.push_back(piece);
  };
  std::size_t start = 0;
  for (std::size_t i = 1; i < text.size(); ++i) {
    if (text[i] == '-' && (is_digit(text[i - 1]) || text[i - 1] == '.')) {
      emit(start, i);
      start = i;
    }
  }
  emit(start, text.size());
}

// Values beyond dcs/limits.hpp would overflow or blur the float32 computation (coordinates
// ±1e6 Å, charges ±1e6 e, radii up to 1e6 Å). values: x y z charge [radius]; "" when all fit.
std::string out_of_range(const double* values, std::size_t count) {
  static constexpr std::array<const char*, 5> kNames = {"x coordinate", "y coordinate",
                                                        "z coordinate", "charge", "radius"};
  static constexpr std::array<double, 5> kLimits = {limits::kMaxCoordinate, limits::kMaxCoordinate,
                                                    limits::kMaxCoordinate, limits::kMaxCharge,
                                                    limits::kMaxRadius};
  static constexpr std::array<const char*, 5> kUnits = {" Å", " Å", " Å", " e", " Å"};
  for (std::size_t i = 0; i < count; ++i) {
    if (std::fabs(values[i]) <= kLimits[i]) continue;
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, values[i]).ptr;
    char limit[32];
    const auto limit_end = std::to_chars(limit, limit + sizeof limit, kLimits[i]).ptr;
    return std::string(kNames[i]) + " " + std::string(buffer, end) + " is outside the accepted ±" +
           std::string(limit, limit_end) + kUnits[i] +
           " (larger values overflow the float32 computation; see README, What dcs refuses)";
  }
  return {};
}

constexpr std::array<const char*, 5> kTailNames = {"x coordinate", "y coordinate",
                                                   "z coordinate", "charge", "radius"};
constexpr const char* kPqrFields = "serial name resName [chainID] resSeq x y z charge radius";
constexpr const char* kIdFields = "serial name resName [chainID] resSeq";
constexpr std::size_t kMinPqrFields = 9;  // without the optional chain ID

class PqrLineParser {
 public:
  explicit PqrLineParser(const std::string& file) : file_(file) {}

  // `line` holds one ATOM/HETATM record whose name occupies [record_begin, record_end).
  Atom parse(std::string_view line, std::size_t record_begin, std::size_t record_end,
             std::uint64_t line_number, bool hetatm) {
    line_number_ = line_number;
    Atom atom;
    atom.hetatm = hetatm;
    const std::string_view record = line.substr(record_begin, record_end - record_begin);
    split_fields(line, record_end, line.size(), fields_);

    // The numeric tail, taken from the end: radius, charge, z, y, x.
    std::array<double, 5> values{};
    std::size_t needed = values.size();
    std::size_t id_end = record_end;
    bool tail_done = false;
    for (std::size_t f = fields_.size(); f-- > 0 && !tail_done;) {
      split_fused(fields_[f], pieces_);
      for (std::size_t p = pieces_.size(); p-- > 0;) {
        const std::size_t slot = needed - 1;
        double value = 0.0;
        switch (parse_double(pieces_[p].text, value)) {
          case NumberStatus::kOk:
            break;
          case NumberStatus::kNotFinite:
            fail(std::string(kTailNames[slot]) + " " + quote(pieces_[p].text) +
                 " is not a finite number");
          case NumberStatus::kNotNumber:
            if (count_fields() < kMinPqrFields) fail_too_few(record);
            fail(std::string(kTailNames[slot]) + " " + quote(fields_[f].text) +
                 " is not a number (expected " + kPqrFields + ")");
        }
        values[slot] = value;
        --needed;
        if (needed == 0) {
          id_end = pieces_[p].pos;
          tail_done = true;
          break;
        }
      }
    }
    if (!tail_done) fail_too_few(record);
    if (values[4] < 0.0) fail("negative radius " + format_value(values[4]));
    if (const std::string reason = out_of_range(values.data(), values.size()); !reason.empty())
      fail(reason);
    atom.position = {values[0], values[1], values[2]};
    atom.charge = values[3];
    atom.radius = values[4];

    if (!parse_columns(line, record_begin, record_end, id_end, atom)) {
      parse_id_fields(line, record, record_end, id_end, atom);
    }
    return atom;
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const {
    throw InputError(file_, line_number_, reason);
  }

  [[noreturn]] void fail_too_few(std::string_view record) {
    fail("too few fields: found " + std::to_string(count_fields()) + " after " + upper(record) +
         ", expected " + kPqrFields);
  }

  static std::string format_value(double value) {
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return quote(std::string_view(buffer, static_cast<std::size_t>(result.ptr - buffer)));
  }

  // Fields after the record name, counting the numbers of a fused field separately.
  std::size_t count_fields() {
    std::size_t count = 0;
    std::vector<Field> pieces;
    for (const Field& field : fields_) {
      split_fused(field, pieces);
      bool numeric = pieces.size() > 1;
      for (const Field& piece : pieces) {
        double value = 0.0;
        if (parse_double(piece.text, value) == NumberStatus::kNotNumber) numeric = false;
      }
      count += numeric ? pieces.size() : 1;
    }
    return count;
  }

  // pdb2pqr's fixed columns (0-based): serial [6,11), name [12,16), resName [16,20), chain 21,
  // resSeq [22,26), insertion code 26. Used only when the line visibly has that layout, because
  // only columns can separate what fixed-width writing fuses ("OH2TIP3", "A1000").
  static bool parse_columns(std::string_view line, std::size_t record_begin,
                            std::size_t record_end, std::size_t id_end, Atom& atom) {
    if (record_begin != 0 || record_end > 6 || id_end < 27) return false;
    if (line.substr(0, id_end).find('\t') != std::string_view::npos) return false;
    if (!all_blank(line.substr(record_end, 6 - record_end))) return false;
    if (line[11] != ' ' || line[20] != ' ' || !all_blank(line.substr(27, id_end - 27))) {
      return false;
    }
    long long serial = 0;
    long long res_seq = 0;
    if (!parse_integer(trim(line.substr(6, 5)), serial)) return false;
    if (!parse_integer(trim(line.substr(22, 4)), res_seq)) return false;
    const std::string_view name = trim(line.substr(12, 4));
    const std::string_view res_name = trim(line.substr(16, 4));
    if (name.empty() || res_name.empty() || has_blank(name) || has_blank(res_name)) return false;
    const char insertion = line[26];
    if (insertion != ' ' && !is_alpha(insertion) && !is_digit(insertion)) return false;
    atom.serial = serial;
    atom.name = name;
    atom.res_name = res_name;
    atom.chain = line[21] == ' ' ? std::string() : std::string(1, line[21]);
    atom.res_seq = res_seq;
    return true;
  }

  void parse_id_fields(std::string_view line, std::string_view record, std::size_t record_end,
                       std::size_t id_end, Atom& atom) {
    split_fields(line, record_end, id_end, id_fields_);
    const std::size_t count = id_fields_.size();
    if (count < 4) fail_too_few(record);  // the tail took 5 numbers, so fewer than 9 in all
    if (count > 5) {
      fail("too many fields before the coordinates: found " + std::to_string(count) +
           " after " + upper(record) + ", expected " + kIdFields + " (first extra field " +
           quote(id_fields_[5].text) + ")");
    }
    if (!parse_integer(id_fields_[0].text, atom.serial)) {
      fail("serial number " + quote(id_fields_[0].text) + " is not an integer");
    }
    atom.name = id_fields_[1].text;
    atom.res_name = id_fields_[2].text;
    std::string_view res_seq = id_fields_[count - 1].text;
    if (count == 5) {
      atom.chain = id_fields_[3].text;
    } else if (res_seq.size() > 1 && is_alpha(res_seq[0]) &&
               (is_digit(res_seq[1]) || res_seq[1] == '-')) {
      // A one-letter chain ID fused with the residue number ("A1000").
      atom.chain = res_seq.substr(0, 1);
      res_seq.remove_prefix(1);
    }
    if (!parse_residue_number(res_seq, atom.res_seq)) {
      fail("residue number " + quote(id_fields_[count - 1].text) +
           " is not an integer (expected " + kPqrFields + ")");
    }
  }

  const std::string& file_;
  std::uint64_t line_number_ = 0;
  std::vector<Field> fields_;
  std::vector<Field> pieces_;
  std::vector<Field> id_fields_;
};

// Record names of the PDB format (letters only: "CRYST1" is read as "CRYST"), plus USER
// (MolProbity/Reduce) and LINKR (Refmac). They are skipped without a word.
bool is_known_record(std::string_view letters) {
  static constexpr std::array<std::string_view, 47> kRecords = {
      "ANISOU", "AUTHOR", "CAVEAT", "CISPEP", "COMPND", "CONECT", "CRYST",  "DBREF",
      "END",    "ENDMDL", "EXPDTA", "FORMUL", "HEADER", "HELIX",  "HET",    "HETNAM",
      "HETSYN", "JRNL",   "KEYWDS", "LINK",   "LINKR",  "MASTER", "MDLTYP", "MODEL",
      "MODRES", "MTRIX",  "NUMMDL", "OBSLTE", "ORIGX",  "REMARK", "REVDAT", "SCALE",
      "SEQADV", "SEQRES", "SHEET",  "SIGATM", "SIGUIJ", "SITE",   "SOURCE", "SPLIT",
      "SPRSDE", "SSBOND", "TER",    "TITLE",  "TVECT",  "USER",   "ATOM"};
  return std::find(kRecords.begin(), kRecords.end(), letters) != kRecords.end();
}

/// How a PQR file's models are read.
struct ModelRead {
  bool all = false;         ///< every model, MODEL/ENDMDL pairing checked; else the first only
  bool same_atoms = false;  ///< all: every model must repeat the first one's atoms
};

/// "'CA ALA 12'": an atom as the model comparison names it.
std::string atom_identity(const Atom& atom) {
  return quote(atom.name + " " + atom.res_name + " " + std::to_string(atom.res_seq));
}

/// The serial number of a MODEL record (the first field after the record name); nullopt when
/// the record has none. `rest` is the line after the record name.
std::optional<long long> model_number(std::string_view rest, const std::string& name,
                                      std::uint64_t line) {
  rest = trim(rest);
  if (rest.empty()) return std::nullopt;
  std::size_t end = 0;
  while (end < rest.size() && !is_blank(rest[end])) ++end;
  long long number = 0;
  if (!parse_integer(rest.substr(0, end), number) || number < 0)
    throw InputError(name, line, "MODEL serial number " + quote(rest.substr(0, end)) +
                                     " is not a non-negative integer");
  return number;
}

std::vector<System> parse_pqr_lines(LineSource& source, const std::string& name,
                                    const ModelRead& how) {
  const auto empty_model = [&] {
    System system;
    system.source_path = name;
    system.source_format = "pqr";
    return system;
  };
  std::vector<System> models{empty_model()};
  PqrLineParser parser(name);
  std::string line;
  bool any_content = false;
  std::map<std::string, std::uint64_t> unknown_records;
  // The first model only (how.all false): later models are checked but not kept.
  bool first_model_closed = false;
  std::uint64_t ignored_records = 0;
  std::uint64_t ignored_models = 0;
  long long first_number = 1;  // of the MODEL record before the first atom, if any
  // Every model (how.all): the pairing state.
  bool in_model = false;           // between MODEL and ENDMDL
  bool any_model_record = false;
  std::uint64_t model_line = 0;    // of the open (or last) MODEL record
  std::uint64_t endmdl_line = 0;   // of the last ENDMDL
  std::uint64_t outside_line = 0;  // of the first atom read outside MODEL ... ENDMDL
  std::map<long long, std::uint64_t> model_lines;  // number -> line of its MODEL record
  std::vector<std::uint64_t> first_model_atom_lines;  // how.same_atoms: for the messages

  while (source.next(line)) {
    const std::string_view text = line;
    const std::uint64_t line_number = source.line_number();
    std::size_t begin = 0;
    while (begin < text.size() && is_blank(text[begin])) ++begin;
    if (begin == text.size()) continue;
    any_content = true;
    std::size_t end = begin;
    while (end < text.size() && is_alpha(text[end])) ++end;
    if (end == begin) {
      std::size_t word_end = begin;
      while (word_end < text.size() && !is_blank(text[word_end])) ++word_end;
      throw InputError(name, line_number,
                       "not a PDB record: the line starts with " +
                           quote(text.substr(begin, word_end - begin)) +
                           " instead of a record name such as ATOM, HETATM or REMARK");
    }
    const std::string record = upper(text.substr(begin, end - begin));
    if (record == "ATOM" || record == "HETATM") {
      Atom atom = parser.parse(text, begin, end, line_number, record == "HETATM");
      if (!how.all) {
        if (first_model_closed) {
          ++ignored_records;
        } else {
          models.front().atoms.push_back(std::move(atom));
        }
        continue;
      }
      if (!in_model) {
        if (any_model_record)
          throw InputError(name, line_number,
                           record + " record between ENDMDL (line " + std::to_string(endmdl_line) +
                               ") and the next MODEL: in a file with MODEL records every atom "
                               "must lie inside MODEL ... ENDMDL");
        if (outside_line == 0) outside_line = line_number;
      }
      System& model = models.back();
      if (how.same_atoms && models.size() > 1) {
        const System& first = models.front();
        const std::size_t index = model.atoms.size();
        if (index >= first.atoms.size())
          throw InputError(name, line_number,
                           "model " + std::to_string(model.model) + " has more atoms than model " +
                               std::to_string(first.model) + " (" +
                               std::to_string(first.atoms.size()) +
                               "): --models average needs every model to hold the same atoms "
                               "in the same order");
        const Atom& expected = first.atoms[index];
        if (atom.name != expected.name || atom.res_name != expected.res_name ||
            atom.res_seq != expected.res_seq)
          throw InputError(name, line_number,
                           "atom " + std::to_string(index + 1) + " of model " +
                               std::to_string(model.model) + " is " + atom_identity(atom) +
                               " but atom " + std::to_string(index + 1) + " of model " +
                               std::to_string(first.model) + " (line " +
                               std::to_string(first_model_atom_lines[index]) + ") is " +
                               atom_identity(expected) +
                               ": --models average needs every model to hold the same atoms "
                               "(name, residue name, residue number) in the same order");
      }
      if (how.same_atoms && models.size() == 1) first_model_atom_lines.push_back(line_number);
      model.atoms.push_back(std::move(atom));
    } else if (record == "MODEL") {
      if (!how.all) {
        if (!models.front().atoms.empty()) {
          first_model_closed = true;
          ++ignored_models;
        } else if (!first_model_closed) {
          try {
            first_number = model_number(text.substr(end), name, line_number).value_or(1);
          } catch (const InputError&) {  // the first model only: a bad number is not fatal
            first_number = 1;
          }
        }
        continue;
      }
      if (in_model)
        throw InputError(name, line_number,
                         "MODEL record inside model " + std::to_string(models.back().model) +
                             " (MODEL at line " + std::to_string(model_line) +
                             "): its ENDMDL is missing");
      if (outside_line != 0)
        throw InputError(name, outside_line,
                         "ATOM/HETATM record before the first MODEL (line " +
                             std::to_string(line_number) +
                             "): in a file with MODEL records every atom must lie inside "
                             "MODEL ... ENDMDL");
      if (any_model_record) models.push_back(empty_model());
      const long long number = model_number(text.substr(end), name, line_number)
                                   .value_or(static_cast<long long>(models.size()));
      const auto [where, inserted] = model_lines.emplace(number, line_number);
      if (!inserted)
        throw InputError(name, line_number,
                         "model " + std::to_string(number) + " appears twice (MODEL at line " +
                             std::to_string(where->second) + " and here)");
      models.back().model = number;
      in_model = true;
      any_model_record = true;
      model_line = line_number;
    } else if (record == "ENDMDL") {
      if (!how.all) {
        if (!models.front().atoms.empty()) first_model_closed = true;
        continue;
      }
      if (!in_model)
        throw InputError(name, line_number,
                         any_model_record
                             ? "ENDMDL without MODEL (the previous model ended at line " +
                                   std::to_string(endmdl_line) + ")"
                             : std::string("ENDMDL without MODEL"));
      const System& model = models.back();
      if (model.atoms.empty())
        throw InputError(name, line_number,
                         "model " + std::to_string(model.model) + " (MODEL at line " +
                             std::to_string(model_line) + ") has no ATOM or HETATM records");
      if (how.same_atoms && models.size() > 1 &&
          model.atoms.size() < models.front().atoms.size())
        throw InputError(name, line_number,
                         "model " + std::to_string(model.model) + " ends after " +
                             std::to_string(model.atoms.size()) + " atoms but model " +
                             std::to_string(models.front().model) + " has " +
                             std::to_string(models.front().atoms.size()) +
                             ": --models average needs every model to hold the same atoms in "
                             "the same order");
      in_model = false;
      endmdl_line = line_number;
    } else if (!is_known_record(record)) {
      // A damaged ATOM/HETATM name ("AT0M", "HETATN") must not drop an atom silently: a record
      // of unknown type whose fields parse as an atom is an error; others are counted.
      std::size_t word_end = begin;
      while (word_end < text.size() && !is_blank(text[word_end])) ++word_end;
      const std::string word = upper(text.substr(begin, word_end - begin));
      bool atom_like = false;
      try {
        parser.parse(text, begin, word_end, line_number, false);
        atom_like = true;
      } catch (const InputError&) {
      }
      if (atom_like)
        throw InputError(name, line_number,
                         "unknown record name " + quote(text.substr(begin, word_end - begin)) +
                             " on a line with the fields of an atom record (" + kPqrFields +
                             "); a damaged ATOM or HETATM?");
      ++unknown_records[word];
    }
  }
  for (const auto& [word, count] : unknown_records)
    log().warn("{}: ignored {} record(s) of unknown type {}", name, count, quote(word));

  if (!any_content) throw InputError(name, 0, "empty file");
  if (in_model)
    throw InputError(name, model_line,
                     "model " + std::to_string(models.back().model) +
                         " has no ENDMDL: the file ends inside it (truncated?)");
  if (models.front().atoms.empty()) throw InputError(name, 0, "no ATOM or HETATM records");
  if (!how.all) {
    System& system = models.front();
    system.model = first_number;
    const bool more = ignored_records > 0 || ignored_models > 0;
    system.model_count = more ? 1 + std::max<std::size_t>(ignored_models, 1) : 1;
    if (more)
      log().warn("{}: read only the first model ({} atoms); ignored {} ATOM/HETATM record(s) in "
                 "{} later model(s) (--models each or --models average reads every model)",
                 name, system.atoms.size(), ignored_records,
                 std::max<std::uint64_t>(ignored_models, 1));
    return models;
  }
  for (System& model : models) model.model_count = models.size();
  return models;
}

// ---------------------------------------------------------------------------------------------
// xyzq.

System parse_xyzq_lines(LineSource& source, const std::string& name) {
  static constexpr std::array<const char*, 4> kNames = {"x coordinate", "y coordinate",
                                                        "z coordinate", "charge"};
  System system;
  system.source_path = name;
  system.source_format = "xyzq";
  std::string line;
  std::vector<Field> fields;
  bool any_content = false;
  while (source.next(line)) {
    std::string_view text = line;
    if (trim(text).empty()) continue;
    any_content = true;
    text = text.substr(0, text.find('#'));
    split_fields(text, 0, text.size(), fields);
    if (fields.empty()) continue;
    if (fields.size() != 4) {
      throw InputError(name, source.line_number(),
                       std::string(fields.size() < 4 ? "too few" : "too many") +
                           " fields: found " + std::to_string(fields.size()) +
                           ", expected 4 (x y z q)");
    }
    std::array<double, 4> values{};
    for (std::size_t i = 0; i < 4; ++i) {
      switch (parse_double(fields[i].text, values[i])) {
        case NumberStatus::kOk:
          break;
        case NumberStatus::kNotFinite:
          throw InputError(name, source.line_number(),
                           std::string(kNames[i]) + " " + quote(fields[i].text) +
                               " is not a finite number");
        case NumberStatus::kNotNumber:
          throw InputError(name, source.line_number(),
                           std::string(kNames[i]) + " " + quote(fields[i].text) +
                               " is not a number (expected x y z q)");
      }
    }
    if (const std::string reason = out_of_range(values.data(), values.size()); !reason.empty())
      throw InputError(name, source.line_number(), reason);
    Atom atom;
    atom.position = {values[0], values[1], values[2]};
    atom.charge = values[3];
    atom.serial = static_cast<long long>(system.atoms.size()) + 1;
    system.atoms.push_back(std::move(atom));
  }
  if (!any_content) throw InputError(name, 0, "empty file");
  if (system.atoms.empty()) throw InputError(name, 0, "no atoms: only comments");
  return system;
}

// ---------------------------------------------------------------------------------------------
// Files.

enum class Format { kPqr, kXyzq };

struct FileKind {
  Format format;
  bool gzip;
};

std::optional<FileKind> file_kind(const std::string& path) {
  const std::string name = upper(std::filesystem::path(path).filename().string());
  const auto ends_with = [&](std::string_view suffix) {
    return name.size() > suffix.size() && std::string_view(name).ends_with(suffix);
  };
  if (ends_with(".PQR")) return FileKind{Format::kPqr, false};
  if (ends_with(".PQR.GZ")) return FileKind{Format::kPqr, true};
  if (ends_with(".XYZQ")) return FileKind{Format::kXyzq, false};
  if (ends_with(".XYZQ.GZ")) return FileKind{Format::kXyzq, true};
  return std::nullopt;
}

std::vector<System> parse_lines(Format format, LineSource& source, const std::string& name,
                                const ModelRead& how) {
  if (format == Format::kPqr) return parse_pqr_lines(source, name, how);
  return {parse_xyzq_lines(source, name)};
}

/// Reads every model (or the first) of an atom file: the shared body of read_atoms and
/// read_models.
std::vector<System> read_file(const std::string& path, const ModelRead& how) {
  const std::optional<FileKind> kind = file_kind(path);
  if (!kind) {
    std::string supported;
    for (std::string_view extension : kAtomFileExtensions) {
      supported += supported.empty() ? "" : ", ";
      supported += extension;
    }
    throw InputError(path, 0, "unknown atom file type; the name must end in one of " + supported);
  }

  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) {
    throw InputError(path, 0,
                     error && error != std::errc::no_such_file_or_directory
                         ? "cannot access the file: " + error.message()
                         : "no such file");
  }
  if (fs::is_directory(status)) throw InputError(path, 0, "is a directory, not an atom file");
  const std::uintmax_t size = fs::file_size(path, error);
  if (!error && size == 0) throw InputError(path, 0, "empty file");

  std::vector<System> models;
  if (kind->gzip) {
    GzLineSource source(path);
    try {
      models = parse_lines(kind->format, source, path, how);
    } catch (const InputError& parse_error) {
      // Corrupt deflate data can decode to plausible bytes that only the CRC at the end
      // exposes; a parse error in them is a symptom, the corruption the cause.
      if (parse_error.line() > 0) source.drain();
      throw;
    }
  } else {
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      throw InputError(path, 0,
                       std::string("cannot open: ") +
                           (errno != 0 ? std::strerror(errno) : "unknown error"));
    }
    StreamLineSource source(in, path);
    models = parse_lines(kind->format, source, path, how);
  }
  const std::string sha256 = sha256_file(path);
  for (System& model : models) model.source_sha256 = sha256;
  return models;
}

}  // namespace

System parse_pqr(std::istream& in, const std::string& name) {
  StreamLineSource source(in, name);
  return std::move(parse_pqr_lines(source, name, ModelRead{}).front());
}

std::vector<System> parse_pqr_models(std::istream& in, const std::string& name,
                                     ModelCheck check) {
  StreamLineSource source(in, name);
  return parse_pqr_lines(source, name,
                         ModelRead{.all = true, .same_atoms = check == ModelCheck::kSameAtoms});
}

System parse_xyzq(std::istream& in, const std::string& name) {
  StreamLineSource source(in, name);
  return parse_xyzq_lines(source, name);
}

System read_atoms(const std::string& path) {
  System system = std::move(read_file(path, ModelRead{}).front());
  log().debug("read {} atoms ({}) from {}", system.size(), system.source_format, path);
  return system;
}

std::vector<System> read_models(const std::string& path, ModelCheck check) {
  std::vector<System> models =
      read_file(path, ModelRead{.all = true, .same_atoms = check == ModelCheck::kSameAtoms});
  log().debug("read {} model(s) of {} atoms ({}) from {}", models.size(),
              models.front().size(), models.front().source_format, path);
  return models;
}

System average_models(const std::vector<System>& models) {
  if (models.empty()) throw Error("internal error: average_models() of no models");
  System merged;
  merged.source_path = models.front().source_path;
  merged.source_format = models.front().source_format;
  merged.source_sha256 = models.front().source_sha256;
  merged.model = 0;
  merged.model_count = models.size();
  std::size_t total = 0;
  for (const System& model : models) total += model.size();
  merged.atoms.reserve(total);
  const auto count = static_cast<double>(models.size());
  for (const System& model : models) {
    for (const Atom& atom : model.atoms) {
      merged.atoms.push_back(atom);
      merged.atoms.back().charge = atom.charge / count;
    }
  }
  return merged;
}

}  // namespace dcs::io
