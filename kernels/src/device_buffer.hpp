// RAII device and pinned host memory (private to dcs::cuda). The only place that calls
// cudaMalloc/cudaFree and cudaMallocHost/cudaFreeHost.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "cuda_check.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

template <class T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "DeviceBuffer holds trivially copyable types");

 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t size) : size_(size) {
    if (size_ == 0) return;
    const cudaError_t status = cudaMalloc(reinterpret_cast<void**>(&data_), size_ * sizeof(T));
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw CudaError("cudaMalloc of " + std::to_string(size_ * sizeof(T)) + " bytes failed: " +
                      cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
    }
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }

  /// Copies count elements from host memory (pinned for true asynchrony) into the buffer at
  /// `offset`. Stream-ordered: the host memory must stay valid until the stream reaches it.
  void upload(const T* host, std::size_t count, StreamView stream, std::size_t offset = 0) {
    check_range(offset, count);
    if (count != 0)
      DCS_CUDA_CHECK(cudaMemcpyAsync(data_ + offset, host, count * sizeof(T),
                                     cudaMemcpyHostToDevice, stream.get()));
  }
  void download(T* host, std::size_t count, StreamView stream, std::size_t offset = 0) const {
    check_range(offset, count);
    if (count != 0)
      DCS_CUDA_CHECK(cudaMemcpyAsync(host, data_ + offset, count * sizeof(T),
                                     cudaMemcpyDeviceToHost, stream.get()));
  }
  void fill_zero(StreamView stream) {
    if (size_ != 0) DCS_CUDA_CHECK(cudaMemsetAsync(data_, 0, bytes(), stream.get()));
  }

 private:
  void check_range(std::size_t offset, std::size_t count) const {
    if (offset > size_ || count > size_ - offset)
      throw CudaError("DeviceBuffer copy of " + std::to_string(count) + " elements at offset " +
                      std::to_string(offset) + " exceeds its size " + std::to_string(size_));
  }
  void release() noexcept {
    if (data_ != nullptr) DCS_CUDA_CHECK_NOTHROW(cudaFree(data_));
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Page-locked host memory for asynchronous copies.
template <class T>
class PinnedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "PinnedBuffer holds trivially copyable types");

 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t size) : size_(size) {
    if (size_ != 0)
      DCS_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), size_ * sizeof(T)));
  }
  ~PinnedBuffer() {
    if (data_ != nullptr) DCS_CUDA_CHECK_NOTHROW(cudaFreeHost(data_));
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    if (this != &other) {
      if (data_ != nullptr) DCS_CUDA_CHECK_NOTHROW(cudaFreeHost(data_));
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace dcs::cuda::detail
