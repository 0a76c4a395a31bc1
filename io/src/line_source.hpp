// Line sources: the atom-file parsers see lines, whether they come from a stream, a file or
// zlib. Lines end at "\n", "\r\n" or a lone "\r" (classic Mac files would otherwise be one
// giant line) and are at most kMaxLineBytes long, so endless input (/dev/zero) fails fast with
// bounded memory. Every block read polls dcs::interrupt_requested(), so a signal stops the read
// of a huge file.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include <zlib.h>

#include "dcs/error.hpp"
#include "dcs/io/checksum.hpp"
#include "dcs/io/line_limit.hpp"

namespace dcs::io::detail {

/// A line longer than kMaxLineBytes: endless or binary input, where reading on is pointless.
class LineTooLong final : public InputError {
 public:
  using InputError::InputError;
};

/// An input file opened once and read once, front to back, through read(2): every byte read
/// also goes into a SHA-256, so the digest is of the very bytes parsed (a FIFO cannot be read
/// twice). A read or an open (a FIFO waits for a writer) interrupted by our own signal handler
/// (EINTR while dcs::interrupt_requested()) throws InterruptedError; other EINTRs are retried.
class InputFile {
 public:
  /// Throws InputError "cannot open: <reason>" (line 0) and InterruptedError.
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// Up to `capacity` bytes; 0 at the end of the file; -1 on a read error (errno tells).
  long long read(char* out, std::size_t capacity);
  /// Reads what is left of the file and returns the SHA-256 of all its bytes.
  std::string finish_sha256();
  /// The whole of a regular file (from the current offset) without hashing it, read in blocks
  /// that poll dcs::interrupt_requested(); false, and nothing read, for a FIFO, a device or a
  /// file too large to hold. The caller hashes the bytes (parallel_read.cpp).
  bool read_whole_regular(std::vector<char>& out);

 private:
  const std::string& path_;
  int fd_ = -1;
  Sha256 sha_;
};

class LineSource {
 public:
  virtual ~LineSource() = default;
  /// Next line without its line ending; false at the end of input. Throws InputError on read
  /// errors and InterruptedError when an interrupt was requested.
  bool next(std::string& line);
  std::uint64_t line_number() const noexcept { return line_number_; }
  /// Reads the rest of the input without parsing it (so that corrupt compressed data is
  /// reported as such rather than as the garbage line it decoded to).
  void drain() {
    while (refill()) pos_ = end_;
  }

 protected:
  static constexpr std::size_t kBlockSize = std::size_t{1} << 17;
  /// first_line: the number of lines before this source's first one (a chunk of a file).
  explicit LineSource(const std::string& name, std::uint64_t first_line = 0)
      : name_(name), buffer_(kBlockSize), line_number_(first_line) {}
  /// Fills `out` with up to `capacity` bytes; 0 at the end of input.
  virtual std::size_t read_block(char* out, std::size_t capacity) = 0;
  const std::string& name_;

 private:
  bool refill();

  std::vector<char> buffer_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  bool skip_newline_after_cr_ = false;
  std::uint64_t line_number_ = 0;
};

/// Lines of bytes already in memory: one chunk of a file read whole (parallel_read.cpp). The
/// chunk must start at a line start; its lines are numbered from first_line + 1.
class MemoryLineSource final : public LineSource {
 public:
  MemoryLineSource(const char* data, std::size_t size, const std::string& name,
                   std::uint64_t first_line)
      : LineSource(name, first_line), data_(data), left_(size) {}

 protected:
  std::size_t read_block(char* out, std::size_t capacity) override;

 private:
  const char* data_;
  std::size_t left_;
};

class StreamLineSource final : public LineSource {
 public:
  StreamLineSource(std::istream& in, const std::string& name) : LineSource(name), in_(in) {}

 protected:
  std::size_t read_block(char* out, std::size_t capacity) override;

 private:
  std::istream& in_;
};

// Streams a .gz file through zlib's inflate in blocks, so large inputs never sit in memory
// twice. Concatenated gzip members (what `cat a.gz b.gz` makes, and what gzip -d accepts) are
// read one after the other; anything else after the last member is refused, like corrupt or
// truncated data (trailing zero bytes, which some tape and transfer tools append, only warn).
class FileLineSource final : public LineSource {
 public:
  FileLineSource(InputFile& file, const std::string& name) : LineSource(name), file_(file) {}

 protected:
  std::size_t read_block(char* out, std::size_t capacity) override;

 private:
  InputFile& file_;
};

class GzLineSource final : public LineSource {
 public:
  GzLineSource(InputFile& file, const std::string& path);
  ~GzLineSource() override {
    if (initialised_) inflateEnd(&stream_);
  }
  GzLineSource(const GzLineSource&) = delete;
  GzLineSource& operator=(const GzLineSource&) = delete;

 protected:
  std::size_t read_block(char* out, std::size_t capacity) override;

 private:
  void fill_input();
  /// Compressed bytes from the file into `out`; throws on a read error.
  std::size_t read_file(char* out, std::size_t capacity);
  /// The next input bytes start a gzip member (1f 8b); needs two bytes, refilling if needed.
  bool at_gzip_magic();
  /// After the last member: zero bytes are tolerated with a warning, anything else refused.
  void check_trailing_bytes();

  InputFile& file_;
  std::vector<char> input_;
  z_stream stream_{};
  bool initialised_ = false;
  bool member_done_ = false;
  bool finished_ = false;
  std::uintmax_t consumed_ = 0;  ///< compressed bytes read from the file so far
};

}  // namespace dcs::io::detail
