#include "line_source.hpp"

#include <cerrno>
#include <cstring>

#include "dcs/error.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/log.hpp"

namespace dcs::io::detail {

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
  if (in_.bad()) throw InputError(name_, 0, "read error after line " + std::to_string(line_number()));
  return got;
}

GzLineSource::GzLineSource(const std::string& path) : LineSource(path), input_(kBlockSize) {
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

void GzLineSource::fill_input() {
  if (stream_.avail_in > 0) return;
  const std::size_t got = std::fread(input_.data(), 1, input_.size(), file_.get());
  if (std::ferror(file_.get()) != 0)
    throw InputError(name_, 0, "read error after line " + std::to_string(line_number()));
  consumed_ += got;
  stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
  stream_.avail_in = static_cast<uInt>(got);
}

bool GzLineSource::at_gzip_magic() {
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
    throw InputError(name_, 0, "trailing garbage after the gzip data (at byte " +
                                   std::to_string(offset) +
                                   "): the file is damaged or not a single .gz file");
  log().warn("{}: ignored {} zero byte(s) after the gzip data", name_, trailing);
}

}  // namespace dcs::io::detail
