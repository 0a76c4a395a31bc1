#include "line_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "dcs/error.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/log.hpp"

namespace dcs::io::detail {

InputFile::InputFile(const std::string& path) : path_(path) {
  for (;;) {
    // Checked first: a signal that came before open() would not interrupt it.
    if (interrupt_requested()) throw InterruptedError(path + ": interrupted while reading");
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ >= 0) return;
    if (errno != EINTR)
      throw InputError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

long long InputFile::read(char* out, std::size_t capacity) {
  for (;;) {
    const ssize_t got = ::read(fd_, out, capacity);
    if (got >= 0) {
      sha_.update(out, static_cast<std::size_t>(got));
      return got;
    }
    if (errno != EINTR) return -1;
    if (interrupt_requested()) throw InterruptedError(path_ + ": interrupted while reading");
  }
}

std::string InputFile::finish_sha256() {
  std::vector<char> block(std::size_t{1} << 16);
  for (;;) {
    const long long got = read(block.data(), block.size());
    if (got == 0) break;
    if (got < 0) throw InputError(path_, 0, std::string("read error: ") + std::strerror(errno));
    if (interrupt_requested()) throw InterruptedError(path_ + ": interrupted while reading");
  }
  return sha_.hex();
}

bool InputFile::read_whole_regular(std::vector<char>& out) {
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) return false;
  // The file's bytes are held once, next to the atoms parsed from them; a larger file is
  // read serially in 128 KiB blocks (its atoms alone would take over 10 GiB).
  constexpr std::uintmax_t kMaxWhole = std::uintmax_t{4} << 30;
  const auto size = static_cast<std::uintmax_t>(info.st_size);
  if (size > kMaxWhole) return false;
  // Binary data or text without line endings is left to the serial reader, which refuses it
  // after its first 64 KiB (the same error) without reading the whole file into memory: a NUL
  // byte, or no line ending, in the first kMaxLineBytes + 1 bytes (read without moving on).
  {
    std::vector<char> probe(
        static_cast<std::size_t>(std::min<std::uintmax_t>(size, kMaxLineBytes + 1)));
    ssize_t got = 0;
    do {
      got = ::pread(fd_, probe.data(), probe.size(), 0);
    } while (got < 0 && errno == EINTR && !interrupt_requested());
    if (got < 0) return false;  // the serial reader reports it
    probe.resize(static_cast<std::size_t>(got));
    const bool nul = std::find(probe.begin(), probe.end(), '\0') != probe.end();
    const bool line_end = std::find_if(probe.begin(), probe.end(), [](char c) {
                            return c == '\n' || c == '\r';
                          }) != probe.end();
    if (nul || (!line_end && probe.size() > kMaxLineBytes)) return false;
  }
  constexpr std::size_t kBlock = std::size_t{8} << 20;
  out.resize(static_cast<std::size_t>(size) + 1);  // + 1: sees the end without a second read
  std::size_t total = 0;
  for (;;) {
    if (interrupt_requested()) throw InterruptedError(path_ + ": interrupted while reading");
    if (total == out.size()) out.resize(out.size() + kBlock);  // the file grew meanwhile
    const ssize_t got = ::read(fd_, out.data() + total, std::min(kBlock, out.size() - total));
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      throw InputError(path_, 0, std::string("read error: ") + std::strerror(errno));
    }
    total += static_cast<std::size_t>(got);
  }
  out.resize(total);
  return true;
}

bool LineSource::next(std::string& line) {
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
    if (line.size() + static_cast<std::size_t>(stop - begin) > kMaxLineBytes)
      throw LineTooLong(name_, line_number_ + 1,
                        "line longer than " + std::to_string(kMaxLineBytes) +
                            " bytes: not a PQR or xyzq file (or a damaged one)");
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

bool LineSource::refill() {
  if (interrupt_requested())
    throw InterruptedError(name_ + ": interrupted while reading (after line " +
                           std::to_string(line_number_) + ")");
  end_ = read_block(buffer_.data(), buffer_.size());
  pos_ = 0;
  return end_ > 0;
}

std::size_t StreamLineSource::read_block(char* out, std::size_t capacity) {
  in_.read(out, static_cast<std::streamsize>(capacity));
  const auto got = static_cast<std::size_t>(in_.gcount());
  if (in_.bad())
    throw InputError(name_, 0, "read error after line " + std::to_string(line_number()));
  return got;
}

std::size_t MemoryLineSource::read_block(char* out, std::size_t capacity) {
  const std::size_t n = std::min(capacity, left_);
  std::memcpy(out, data_, n);
  data_ += n;
  left_ -= n;
  return n;
}

std::size_t FileLineSource::read_block(char* out, std::size_t capacity) {
  const long long got = file_.read(out, capacity);
  if (got < 0) throw InputError(name_, 0, "read error after line " + std::to_string(line_number()));
  return static_cast<std::size_t>(got);
}

GzLineSource::GzLineSource(InputFile& file, const std::string& path)
    : LineSource(path), file_(file), input_(kBlockSize) {
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

std::size_t GzLineSource::read_block(char* out, std::size_t capacity) {
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
      throw InputError(name_, 0,
                       "truncated gzip data: the compressed stream ends after line " +
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
      throw InputError(name_, 0,
                       "corrupt gzip data after line " + std::to_string(line_number()) + ": " +
                           (stream_.msg != nullptr ? stream_.msg : zError(code)));
    }
  }
  return capacity - stream_.avail_out;
}

void GzLineSource::fill_input() {
  if (stream_.avail_in > 0) return;
  const std::size_t got = read_file(input_.data(), input_.size());
  consumed_ += got;
  stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
  stream_.avail_in = static_cast<uInt>(got);
}

// Like fread: a FIFO or pipe may return less than asked before the end.
std::size_t GzLineSource::read_file(char* out, std::size_t capacity) {
  std::size_t total = 0;
  while (total < capacity) {
    const long long got = file_.read(out + total, capacity - total);
    if (got < 0)
      throw InputError(name_, 0, "read error after line " + std::to_string(line_number()));
    if (got == 0) break;
    total += static_cast<std::size_t>(got);
  }
  return total;
}

bool GzLineSource::at_gzip_magic() {
  if (stream_.avail_in == 1) {  // keep the one byte and read on
    const Bytef first = stream_.next_in[0];
    input_[0] = static_cast<char>(first);
    const std::size_t got = read_file(input_.data() + 1, input_.size() - 1);
    consumed_ += got;
    stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
    stream_.avail_in = static_cast<uInt>(got + 1);
  }
  return stream_.avail_in >= 2 && stream_.next_in[0] == 0x1f && stream_.next_in[1] == 0x8b;
}

void GzLineSource::check_trailing_bytes() {
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
    throw InputError(name_, 0,
                     "trailing garbage after the gzip data (at byte " + std::to_string(offset) +
                         "): the file is damaged or not a single .gz file");
  log().warn("{}: ignored {} zero byte(s) after the gzip data", name_, trailing);
}

}  // namespace dcs::io::detail
