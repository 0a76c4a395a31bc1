// The buffers a CUDA map backend (CudaBackend, the MSM and Ewald backends) computes one slab in,
// and the steps all take around their kernels: the slab's check and clearing, the per-plane
// statistics, the copies; SlabSteps runs them in order around one kernel, timed.
// Private to dcs::cuda; host code, asynchronous on the stream given.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include "cuda_check.hpp"
#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/map_source.hpp"
#include "dcs/stats.hpp"
#include "device_buffer.hpp"
#include "reduce/reduce.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

/// The buffer grown to at least n elements (contents lost when it grows; never shrunk): the
/// smaller one is freed first, so that the two need not coexist.
template <class T>
void grow_to(DeviceBuffer<T>& buffer, std::size_t n) {
  if (buffer.size() >= n) return;
  buffer = DeviceBuffer<T>();
  buffer = DeviceBuffer<T>(n);
}

/// A slab's values on the device and each plane's statistics on the device and in pinned host
/// memory, grown to the largest slab seen.
struct SlabBuffers {
  DeviceBuffer<float> values;
  DeviceBuffer<StatsAccum> plane_stats;
  PinnedBuffer<StatsAccum> host_plane_stats;

  /// Refuses a slab whose planes are not inside the grid's (UsageError; `who` names the
  /// backend), then grows the buffers to the slab's planes.
  void fit(const char* who, const Slab& slab, const GridSpec& grid) {
    if (slab.z_count < 1 || slab.z_begin < 0 || slab.z_begin + slab.z_count > grid.nz())
      throw UsageError(std::string(who) + ": slab of planes [" + std::to_string(slab.z_begin) +
                       ", " + std::to_string(slab.z_begin + slab.z_count) +
                       ") is not inside the grid's " + std::to_string(grid.nz()) + " planes");
    const auto planes = static_cast<std::size_t>(slab.z_count);
    grow_to(values, grid.plane_points() * planes);
    grow_to(plane_stats, planes);
    if (host_plane_stats.size() < planes) host_plane_stats = PinnedBuffer<StatsAccum>(planes);
  }

  /// fit(), then the slab's values cleared on `stream`: zeroed for a kernel that adds into them
  /// (`zeroed`), else under DCS_DEBUG_SYNC set to all-ones bytes (NaN), so that a point the
  /// kernel forgets to write shows up in the statistics. Returns the slab's value count.
  std::size_t begin(const char* who, const Slab& slab, const GridSpec& grid, bool zeroed,
                    StreamView stream) {
    fit(who, slab, grid);
    const std::size_t n = grid.plane_points() * static_cast<std::size_t>(slab.z_count);
    if (zeroed) DCS_CUDA_CHECK(cudaMemsetAsync(values.data(), 0, n * sizeof(float), stream.get()));
    else if (debug_sync_enabled())
      DCS_CUDA_CHECK(cudaMemsetAsync(values.data(), 0xff, n * sizeof(float), stream.get()));
    return n;
  }

  /// Enqueues one reduction per plane of the slab's values, so that a plane's statistics never
  /// depend on the slab it was computed in (bit-identical statistics for any slab plan, device
  /// count or resumption), and their copy to host_plane_stats.
  void enqueue_plane_statistics(std::size_t plane_points, std::size_t planes,
                                const std::string& reduction, ReduceWorkspace& workspace,
                                StreamView stream) {
    for (std::size_t p = 0; p < planes; ++p)
      enqueue_statistics(values.data() + p * plane_points, plane_points, reduction, workspace,
                         stream, plane_stats.data() + p);
    plane_stats.download(host_plane_stats.data(), planes, stream);
  }
};

/// The events that time a slab's steps on its stream, recorded before the kernel, after it,
/// after the statistics and after the download. Created on the current device.
struct SlabEvents {
  Event start, kernels, statistics, download;
};

/// What a map backend whose kernel writes every value of a slab once (the MSM and Ewald
/// backends) computes its slabs with: the buffers, the reduction (by name) and its workspace,
/// the events. Created on the backend's device (under its ScopedDevice).
struct SlabSteps {
  explicit SlabSteps(std::string reduction_name) : reduction(std::move(reduction_name)) {}

  /// One slab: begin() (not zeroed), `kernel(d_out)` enqueued on the stream to write the slab's
  /// values at d_out, the per-plane statistics, the download into out and plane_stats, waited
  /// for; each step's time added to timings.
  template <class Kernel>
  void compute(const char* who, const Slab& slab, const GridSpec& grid, StreamView stream,
               Kernel&& kernel, float* out, StatsAccum* plane_stats, BackendTimings& timings) {
    const std::size_t plane = grid.plane_points();
    const auto planes = static_cast<std::size_t>(slab.z_count);
    const std::size_t n = buffers.begin(who, slab, grid, false, stream);
    events.start.record(stream);
    kernel(buffers.values.data());
    events.kernels.record(stream);
    buffers.enqueue_plane_statistics(plane, planes, reduction, workspace, stream);
    events.statistics.record(stream);
    buffers.values.download(out, n, stream);
    events.download.record(stream);
    stream.synchronize();
    std::copy(buffers.host_plane_stats.data(), buffers.host_plane_stats.data() + planes,
              plane_stats);
    timings.kernels += 1e-3 * events.kernels.elapsed_ms_since(events.start);
    timings.statistics += 1e-3 * events.statistics.elapsed_ms_since(events.kernels);
    timings.download += 1e-3 * events.download.elapsed_ms_since(events.statistics);
  }

  SlabBuffers buffers;
  std::string reduction;
  ReduceWorkspace workspace;
  SlabEvents events;
};

}  // namespace dcs::cuda::detail
