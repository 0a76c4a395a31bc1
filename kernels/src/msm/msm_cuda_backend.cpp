// MSM on one CUDA device (dcs/cuda/msm_backend.hpp): the lattice hierarchy and the bins are the
// CPU backend's (msm_prepare_host), uploaded once; each slab is one launch of the MSM kernel
// (msm_kernels.cu), then one reduction per plane and the download, as CudaBackend does.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "dcs/cuda/msm_backend.hpp"
#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "dcs/msm.hpp"
#include "dcs/parallel.hpp"
#include "dcs/timer.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "msm_kernels.hpp"
#include "reduce/reduce.hpp"
#include "stream.hpp"

namespace dcs::cuda {
namespace {

using detail::DeviceBuffer;
using detail::Event;
using detail::MsmAtom;
using detail::ScopedDevice;
using detail::Stream;

class MsmCudaBackend final : public PotentialBackend {
 public:
  MsmCudaBackend(std::unique_ptr<PotentialBackend> exact, const MsmParameters& parameters,
                 const BackendOptions& options)
      : exact_(std::move(exact)),
        parameters_(parameters),
        pool_(resolve_threads(options.threads)),
        reduction_(exact_->reduction_name()) {
    validate(parameters_);
    device_ = detail::query_device(options.device);
    ScopedDevice scoped(device_.ordinal);
    stream_ = std::make_unique<Stream>();
    start_ = std::make_unique<Event>();
    kernels_ = std::make_unique<Event>();
    statistics_ = std::make_unique<Event>();
    download_ = std::make_unique<Event>();
  }

  std::string name() const override { return exact_->name() + "+msm"; }
  std::string kernel_name() const override { return describe(parameters_); }
  std::string reduction_name() const override { return reduction_; }
  std::string device_name() const override { return exact_->device_name(); }
  double tolerance() const override { return parameters_.target; }

  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override {
    check_grid(grid);
    const auto start = std::chrono::steady_clock::now();
    timings_ = {};
    const MsmHostData data = msm_prepare_host(system, grid, physics, parameters_, pool_);
    if (data.atoms.size() >= std::numeric_limits<std::uint32_t>::max())
      throw UsageError("CUDA msm: " + std::to_string(data.atoms.size()) +
                       " atoms exceed the kernel's 32-bit bin offsets");
    for (int d = 0; d < 3; ++d)
      if (data.bins[static_cast<std::size_t>(d)] > INT_MAX ||
          data.lattice_n[static_cast<std::size_t>(d)] > INT_MAX)
        throw UsageError("CUDA msm: the bins or the lattice are too large for the kernel");

    // Host copies in the kernel's types.
    std::vector<MsmAtom> atoms(data.atoms.size());
    for (std::size_t i = 0; i < atoms.size(); ++i)
      atoms[i] = {data.atoms[i][0], data.atoms[i][1], data.atoms[i][2], data.atoms[i][3]};
    std::vector<std::uint32_t> starts(data.bin_start.size());
    for (std::size_t b = 0; b < starts.size(); ++b)
      starts[b] = static_cast<std::uint32_t>(data.bin_start[b]);
    std::array<std::vector<int>, 3> base;
    for (std::size_t d = 0; d < 3; ++d) {
      base[d].resize(data.base[d].size());
      for (std::size_t i = 0; i < base[d].size(); ++i)
        base[d][i] = static_cast<int>(data.base[d][i] - data.lattice_lo[d]);
    }

    ScopedDevice scoped(device_.ordinal);
    const detail::StreamView stream = stream_->view();
    d_atoms_ = DeviceBuffer<MsmAtom>(atoms.size());
    d_atoms_.upload(atoms.data(), atoms.size(), stream);
    d_bin_start_ = DeviceBuffer<std::uint32_t>(starts.size());
    d_bin_start_.upload(starts.data(), starts.size(), stream);
    d_lattice_ = DeviceBuffer<double>(data.lattice.size());
    d_lattice_.upload(data.lattice.data(), data.lattice.size(), stream);
    for (std::size_t d = 0; d < 3; ++d) {
      d_base_[d] = DeviceBuffer<int>(base[d].size());
      d_base_[d].upload(base[d].data(), base[d].size(), stream);
      d_weights_[d] = DeviceBuffer<double>(data.weights[d].size());
      d_weights_[d].upload(data.weights[d].data(), data.weights[d].size(), stream);
    }
    stream.synchronize();  // the host vectors go out of scope

    detail::MsmSlabLaunch& l = launch_;
    l = detail::MsmSlabLaunch{};
    l.d_atoms = d_atoms_.data();
    l.d_bin_start = d_bin_start_.data();
    for (std::size_t d = 0; d < 3; ++d) {
      l.bin_lower[d] = data.bin_lower[d];
      l.bins[d] = static_cast<int>(data.bins[d]);
      l.lattice_n[d] = static_cast<int>(data.lattice_n[d]);
      l.d_base[d] = d_base_[d].data();
      l.d_weights[d] = d_weights_[d].data();
      l.origin[d] = grid.origin[d];
      l.spacing[d] = grid.spacing[d];
    }
    l.bin_side = data.bin_side;
    l.split = parameters_.split;
    for (std::size_t n = 0; n < data.gamma.size(); ++n)
      l.poly[n] = static_cast<float>(data.gamma[n] / data.cutoff);
    l.a2 = static_cast<float>(data.cutoff * data.cutoff);
    l.inv_a2 = static_cast<float>(1.0 / (data.cutoff * data.cutoff));
    l.min_r2 = static_cast<float>(data.min_distance * data.min_distance);
    l.cutoff = data.cutoff;
    l.d_lattice = d_lattice_.data();
    l.order = data.order;
    l.nx = static_cast<int>(grid.nx());
    l.ny = static_cast<int>(grid.ny());
    l.nz = static_cast<int>(grid.nz());
    l.factor = data.factor;
    grid_ = grid;
    prepared_ = true;
    log().debug(
        "CUDA msm on device {}: {} atoms in {}x{}x{} bins of {} A, lattice {}x{}x{}, "
        "tiles of {}x{}x{} points",
        device_.ordinal, atoms.size(), l.bins[0], l.bins[1], l.bins[2], l.bin_side, l.lattice_n[0],
        l.lattice_n[1], l.lattice_n[2], detail::kMsmTileX, detail::kMsmTileY, detail::kMsmTileZ);
    timings_.upload = seconds_since(start);
  }

  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override {
    if (!prepared_) throw UsageError("CUDA msm: compute() before prepare()");
    if (slab.z_count < 1 || slab.z_begin < 0 || slab.z_begin + slab.z_count > grid_.nz())
      throw UsageError("CUDA msm: slab of planes [" + std::to_string(slab.z_begin) + ", " +
                       std::to_string(slab.z_begin + slab.z_count) + ") is not inside the grid's " +
                       std::to_string(grid_.nz()) + " planes");
    const std::size_t plane = grid_.plane_points();
    const auto planes = static_cast<std::size_t>(slab.z_count);
    const std::size_t n = plane * planes;

    ScopedDevice scoped(device_.ordinal);
    const detail::StreamView stream = stream_->view();
    ensure_size(d_slab_, n);
    ensure_size(d_plane_stats_, planes);
    if (h_plane_stats_.size() < planes) h_plane_stats_ = detail::PinnedBuffer<StatsAccum>(planes);
    if (detail::debug_sync_enabled())  // NaN bytes: a point the kernel forgets shows up
      DCS_CUDA_CHECK(cudaMemsetAsync(d_slab_.data(), 0xff, n * sizeof(float), stream.get()));

    start_->record(stream);
    detail::MsmSlabLaunch l = launch_;
    l.z_begin = static_cast<int>(slab.z_begin);
    l.z_count = static_cast<int>(slab.z_count);
    l.d_out = d_slab_.data();
    detail::launch_msm_slab(l, stream);
    kernels_->record(stream);
    // One reduction per plane (CudaBackend::compute_slab): a plane's statistics never depend on
    // the slab that computed it.
    for (std::size_t p = 0; p < planes; ++p)
      detail::enqueue_statistics(d_slab_.data() + p * plane, plane, reduction_, workspace_, stream,
                                 d_plane_stats_.data() + p);
    d_plane_stats_.download(h_plane_stats_.data(), planes, stream);
    statistics_->record(stream);
    d_slab_.download(out, n, stream);
    download_->record(stream);
    stream.synchronize();
    std::copy(h_plane_stats_.data(), h_plane_stats_.data() + planes, plane_stats);

    timings_.kernels += 1e-3 * kernels_->elapsed_ms_since(*start_);
    timings_.statistics += 1e-3 * statistics_->elapsed_ms_since(*kernels_);
    timings_.download += 1e-3 * download_->elapsed_ms_since(*statistics_);
  }

  std::unique_ptr<HostBuffer> allocate_host(std::size_t floats) override {
    return exact_->allocate_host(floats);
  }
  StatsAccum statistics(const float* values, std::size_t n) override {
    return exact_->statistics(values, n);
  }
  DiffAccum difference(const float* values, const double* reference, std::size_t n) override {
    return exact_->difference(values, reference, n);
  }
  BackendTimings timings() const override { return timings_; }
  /// The exact backend's (16 planes, a multiple of the kernel's 8-plane tiles, so slabs cut no
  /// tile in two; a cut tile would still give the same bits, at some wasted work).
  SlabHint slab_hint() const override { return exact_->slab_hint(); }

  // Points stay exact, as in the CPU MSM backend.
  void prepare_points(const System& system, const Physics& physics) override {
    exact_->prepare_points(system, physics);
  }
  void compute_points(const Vec3* points, const std::uint32_t* skip, std::size_t n,
                      float* out) override {
    exact_->compute_points(points, skip, n, out);
  }
  PointsHint points_hint() const override { return exact_->points_hint(); }
  std::string reference_points(const System& system, const Physics& physics, const Vec3* points,
                               std::size_t n, double* out, unsigned threads) override {
    return exact_->reference_points(system, physics, points, n, out, threads);
  }

 private:
  template <class T>
  static void ensure_size(DeviceBuffer<T>& buffer, std::size_t n) {
    if (buffer.size() >= n) return;
    buffer = DeviceBuffer<T>();
    buffer = DeviceBuffer<T>(n);
  }

  /// The kernel indexes points, rows and planes with 32-bit integers.
  static void check_grid(const GridSpec& grid) {
    if (grid.nx() < 1 || grid.ny() < 1 || grid.nz() < 1)
      throw UsageError("CUDA msm: empty grid " + grid.describe());
    if (grid.nx() > INT_MAX / 2 || grid.ny() > INT_MAX / 2 || grid.nz() > INT_MAX / 2 ||
        grid.plane_points() > static_cast<std::size_t>(INT_MAX / 2))
      throw UsageError("CUDA msm: a z-plane of " + std::to_string(grid.plane_points()) +
                       " points is more than the kernel indexes");
    for (int axis = 0; axis < 3; ++axis)
      if (!(grid.spacing[axis] > 0.0) || !std::isfinite(grid.spacing[axis]))
        throw UsageError("CUDA msm: grid spacing must be positive and finite");
  }

  std::unique_ptr<PotentialBackend> exact_;
  MsmParameters parameters_;
  ThreadPool pool_;
  std::string reduction_;
  DeviceInfo device_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Event> start_, kernels_, statistics_, download_;
  detail::ReduceWorkspace workspace_;
  DeviceBuffer<MsmAtom> d_atoms_;
  DeviceBuffer<std::uint32_t> d_bin_start_;
  DeviceBuffer<double> d_lattice_;
  DeviceBuffer<int> d_base_[3];
  DeviceBuffer<double> d_weights_[3];
  DeviceBuffer<float> d_slab_;
  DeviceBuffer<StatsAccum> d_plane_stats_;
  detail::PinnedBuffer<StatsAccum> h_plane_stats_;
  detail::MsmSlabLaunch launch_;
  GridSpec grid_;
  bool prepared_ = false;
  BackendTimings timings_;
};

}  // namespace

std::unique_ptr<PotentialBackend> make_msm_cuda_backend(std::unique_ptr<PotentialBackend> exact,
                                                        const MsmParameters& parameters,
                                                        const BackendOptions& options) {
  if (!exact) throw InternalError("make_msm_cuda_backend: no exact backend to wrap");
  return std::make_unique<MsmCudaBackend>(std::move(exact), parameters, options);
}

}  // namespace dcs::cuda
