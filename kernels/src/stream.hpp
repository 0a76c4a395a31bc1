// RAII streams and events (private to dcs::cuda). StreamView is non-owning and cannot be made
// from 0/nullptr, so the legacy default stream is never used by accident (RMM's cuda_stream_view).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda_check.hpp"

namespace dcs::cuda::detail {

class StreamView {
 public:
  StreamView() = delete;
  StreamView(std::nullptr_t) = delete;
  StreamView(int) = delete;
  explicit StreamView(cudaStream_t stream) noexcept : stream_(stream) {}
  cudaStream_t get() const noexcept { return stream_; }
  void synchronize() const { DCS_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_;
};

/// Owning, non-blocking stream.
class Stream {
 public:
  Stream() { DCS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (stream_ != nullptr) DCS_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    std::swap(stream_, other.stream_);
    return *this;
  }
  StreamView view() const noexcept { return StreamView(stream_); }
  cudaStream_t get() const noexcept { return stream_; }
  void synchronize() const { view().synchronize(); }

 private:
  cudaStream_t stream_ = nullptr;
};

/// Timing event.
class Event {
 public:
  Event() { DCS_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() {
    if (event_ != nullptr) DCS_CUDA_CHECK_NOTHROW(cudaEventDestroy(event_));
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  void record(StreamView stream) { DCS_CUDA_CHECK(cudaEventRecord(event_, stream.get())); }
  void synchronize() const { DCS_CUDA_CHECK(cudaEventSynchronize(event_)); }
  /// Milliseconds from `start` to this event (both recorded and complete).
  float elapsed_ms_since(const Event& start) const {
    float ms = 0.0f;
    DCS_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }
  cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

/// Sets the current device for its lifetime and restores the previous one.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    DCS_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) DCS_CUDA_CHECK(cudaSetDevice(device));
  }
  ~ScopedDevice() { DCS_CUDA_CHECK_NOTHROW(cudaSetDevice(previous_)); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace dcs::cuda::detail
