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

/// cudaMalloc and cudaFree for OwnedMemory: device memory.
struct DeviceMemory {
  static void* allocate(std::size_t bytes) {
    void* data = nullptr;
    const cudaError_t status = cudaMalloc(&data, bytes);
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw CudaError("cudaMalloc of " + std::to_string(bytes) + " bytes failed: " +
                      cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
    }
    return data;
  }
  static void release(void* data) noexcept { DCS_CUDA_CHECK_NOTHROW(cudaFree(data)); }
};

/// cudaMallocHost and cudaFreeHost for OwnedMemory: page-locked host memory.
struct PinnedMemory {
  static void* allocate(std::size_t bytes) {
    void* data = nullptr;
    DCS_CUDA_CHECK(cudaMallocHost(&data, bytes));
    return data;
  }
  static void release(void* data) noexcept { DCS_CUDA_CHECK_NOTHROW(cudaFreeHost(data)); }
};

/// `size` elements of the memory that Memory::allocate makes and Memory::release frees: owned,
/// moved, never copied. What DeviceBuffer and PinnedBuffer share.
template <class T, class Memory>
class OwnedMemory {
  static_assert(std::is_trivially_copyable_v<T>, "CUDA buffers hold trivially copyable types");

 public:
  OwnedMemory() = default;
  explicit OwnedMemory(std::size_t size) {
    if (size == 0) return;
    data_ = static_cast<T*>(Memory::allocate(size * sizeof(T)));
    size_ = size;
  }
  ~OwnedMemory() { release(); }
  OwnedMemory(const OwnedMemory&) = delete;
  OwnedMemory& operator=(const OwnedMemory&) = delete;
  OwnedMemory(OwnedMemory&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  OwnedMemory& operator=(OwnedMemory&& other) noexcept {
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

 private:
  void release() noexcept {
    if (data_ != nullptr) Memory::release(data_);
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Device memory, with stream-ordered copies from and to the host.
template <class T>
class DeviceBuffer : public OwnedMemory<T, DeviceMemory> {
 public:
  using OwnedMemory<T, DeviceMemory>::OwnedMemory;
  using OwnedMemory<T, DeviceMemory>::data;
  using OwnedMemory<T, DeviceMemory>::size;
  using OwnedMemory<T, DeviceMemory>::bytes;

  /// Copies count elements from host memory (pinned for true asynchrony) into the buffer at
  /// `offset`. Stream-ordered: the host memory must stay valid until the stream reaches it.
  void upload(const T* host, std::size_t count, StreamView stream, std::size_t offset = 0) {
    check_range(offset, count);
    if (count != 0)
      DCS_CUDA_CHECK(cudaMemcpyAsync(data() + offset, host, count * sizeof(T),
                                     cudaMemcpyHostToDevice, stream.get()));
  }
  void download(T* host, std::size_t count, StreamView stream, std::size_t offset = 0) const {
    check_range(offset, count);
    if (count != 0)
      DCS_CUDA_CHECK(cudaMemcpyAsync(host, data() + offset, count * sizeof(T),
                                     cudaMemcpyDeviceToHost, stream.get()));
  }
  void fill_zero(StreamView stream) {
    if (size() != 0) DCS_CUDA_CHECK(cudaMemsetAsync(data(), 0, bytes(), stream.get()));
  }

 private:
  void check_range(std::size_t offset, std::size_t count) const {
    if (offset > size() || count > size() - offset)
      throw CudaError("DeviceBuffer copy of " + std::to_string(count) + " elements at offset " +
                      std::to_string(offset) + " exceeds its size " + std::to_string(size()));
  }
};

/// Page-locked host memory for asynchronous copies.
template <class T>
using PinnedBuffer = OwnedMemory<T, PinnedMemory>;

}  // namespace dcs::cuda::detail
