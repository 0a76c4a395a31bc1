// Private interface between the CUDA backend and the reduction family (kernels/src/reduce/).
// The backend computes statistics and validation metrics of device arrays through these
// functions; the reduction variant is chosen by name from the registry (--reduction).
//
// Layers, as in CUB: warp_reduce.cuh (shuffle tree, unrolled last warp) -> block_reduce.cuh
// (the books' trees, BlockReduceAlgo) -> device_reduce.cuh/.cu (grid level: second pass or
// atomics, leaves in scratch, coarsening). reduce_ops.cuh says what is reduced (statistics,
// validation metrics, float sums). textbook.hpp runs the books' own float-sum kernels.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "dcs/stats.hpp"
#include "dcs/variants.hpp"
#include "device_buffer.hpp"
#include "reduction_registry.hpp"  // reduction_variants(), default_reduction(), check_reduction_name()
#include "stream.hpp"

namespace dcs::cuda::detail {

/// Scratch memory the reductions reuse between calls: the leaves of the in-place kernels, block
/// partials, the device result and its pinned host mirror. Grows on demand (growing frees the old
/// buffer, which waits for the device); owned by the backend, one per stream and device. Not
/// thread-safe.
class ReduceWorkspace {
 public:
  ReduceWorkspace() = default;
  ReduceWorkspace(const ReduceWorkspace&) = delete;
  ReduceWorkspace& operator=(const ReduceWorkspace&) = delete;
  ReduceWorkspace(ReduceWorkspace&&) = default;
  ReduceWorkspace& operator=(ReduceWorkspace&&) = default;

  /// Device memory for `count` T (256-byte aligned, contents unspecified).
  template <class T>
  T* scratch(std::size_t count) {
    return static_cast<T*>(grow(scratch_, count * sizeof(T)));
  }
  template <class T>
  T* partials(std::size_t count) {
    return static_cast<T*>(grow(partials_, count * sizeof(T)));
  }
  /// One T of device memory for a reduction's final result.
  template <class T>
  T* result() {
    return static_cast<T*>(grow(result_, sizeof(T)));
  }
  /// One T of pinned host memory (the result's download target).
  template <class T>
  T* host_result() {
    static_assert(sizeof(T) <= kHostResultBytes);
    if (!host_result_) host_result_ = std::make_unique<PinnedBuffer<std::byte>>(kHostResultBytes);
    return reinterpret_cast<T*>(host_result_->data());
  }
  /// Multiprocessors of the current device (queried once).
  int multiprocessors();

 private:
  static constexpr std::size_t kHostResultBytes = 256;
  static void* grow(DeviceBuffer<std::byte>& buffer, std::size_t bytes);

  DeviceBuffer<std::byte> scratch_, partials_, result_;
  std::unique_ptr<PinnedBuffer<std::byte>> host_result_;  // PinnedBuffer is not move-assignable
  int multiprocessors_ = 0;
};

/// Statistics (min, max, sum, sum of squares in double, count, non-finite count) of n device
/// floats in one pass with the named variant. Never modifies d_values. Blocks until the
/// result is on the host. Throws UsageError for an unknown variant, CudaError on failure.
StatsAccum device_statistics(const float* d_values, std::size_t n, const std::string& variant,
                             ReduceWorkspace& workspace, StreamView stream);

/// max|a - ref|, sum (a - ref)^2, max|ref| and counts of n device values against a device
/// float64 reference. Blocks until the result is on the host.
DiffAccum device_difference(const float* d_values, const double* d_reference, std::size_t n,
                            const std::string& variant, ReduceWorkspace& workspace,
                            StreamView stream);

/// As device_statistics, without blocking: enqueues the kernels on `stream`; the result is
/// written to *d_result (device memory outside the workspace's scratch and partials, e.g.
/// workspace.result<StatsAccum>()) when the stream reaches it. n == 0 writes an empty StatsAccum.
void enqueue_statistics(const float* d_values, std::size_t n, const std::string& variant,
                        ReduceWorkspace& workspace, StreamView stream, StatsAccum* d_result);
/// As device_difference, without blocking (see enqueue_statistics).
void enqueue_difference(const float* d_values, const double* d_reference, std::size_t n,
                        const std::string& variant, ReduceWorkspace& workspace, StreamView stream,
                        DiffAccum* d_result);

}  // namespace dcs::cuda::detail
