// An open file descriptor with one owner: closed when the owner is destroyed, moved with it, so
// that the files holding one (frame statistics, frame maps, profile frames) need no move and
// destructor code of their own.
#pragma once

#include <utility>

namespace dcs::io {

class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { reset(); }

  int get() const noexcept { return fd_; }
  bool is_open() const noexcept { return fd_ >= 0; }
  /// Closes it (if open); the owner holds none after.
  void reset() noexcept;

 private:
  int fd_ = -1;
};

}  // namespace dcs::io
