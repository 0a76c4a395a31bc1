// The CUDA backend: dcs::PotentialBackend on one device and one stream. Everything inside is
// asynchronous on that stream; each public call synchronises once, where its results leave the
// backend. Kernels come from the registry (potential/registry.hpp), statistics from the
// reduction family (reduce/reduce.hpp), both chosen by name.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "dcs/atoms.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/error.hpp"
#include "dcs/limits.hpp"
#include "dcs/timer.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "points/points_kernel.hpp"
#include "potential/registry.hpp"
#include "reduce/reduce.hpp"
#include "reference/reference_kernel.hpp"
#include "slab_buffers.hpp"
#include "stream.hpp"

namespace dcs::cuda {
namespace {

using detail::DeviceBuffer;
using detail::Event;
using detail::PotentialKernel;
using detail::ScopedDevice;
using detail::Stream;

/// Page-locked host memory that every device copies into at full speed (portable).
/// Pinned host memory kept for reuse by one backend's buffers: a library caller (the Python
/// module, which keeps its workers) runs the engine again and again, and cudaHostAlloc of a
/// slab buffer costs milliseconds (tens on the lent machines). A returned block waits for the
/// next request it fits (at most twice its size); at most kKept blocks wait, the rest and all
/// of them at the end go back to CUDA. Shared by the backend and its buffers, so a buffer may
/// outlive the backend.
class PinnedPool {
 public:
  static constexpr std::size_t kKept = 8;
  PinnedPool() = default;
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;
  ~PinnedPool() {
    for (const Block& block : free_) DCS_CUDA_CHECK_NOTHROW(cudaFreeHost(block.data));
  }

  struct Block {
    float* data = nullptr;
    std::size_t floats = 0;  ///< capacity
  };

  Block take(std::size_t floats) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->floats >= floats && it->floats / 2 <= floats &&
            (best == free_.end() || it->floats < best->floats))
          best = it;
      if (best != free_.end()) {
        const Block block = *best;
        free_.erase(best);
        return block;
      }
    }
    Block block{nullptr, floats};
    const cudaError_t status = cudaHostAlloc(reinterpret_cast<void**>(&block.data),
                                             floats * sizeof(float), cudaHostAllocPortable);
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw CudaError("cudaHostAlloc of " + std::to_string(floats * sizeof(float)) +
                      " bytes failed: " + cudaGetErrorString(status));
    }
    return block;
  }

  void give(const Block& block) noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (free_.size() < kKept) {
        free_.push_back(block);
        return;
      }
    }
    DCS_CUDA_CHECK_NOTHROW(cudaFreeHost(block.data));
  }

 private:
  std::mutex mutex_;
  std::vector<Block> free_;
};

class PinnedHostBuffer final : public HostBuffer {
 public:
  PinnedHostBuffer(std::shared_ptr<PinnedPool> pool, std::size_t floats) : pool_(std::move(pool)) {
    if (floats == 0) return;
    block_ = pool_->take(floats);
    data_ = block_.data;
    size_ = floats;
  }
  ~PinnedHostBuffer() override {
    if (block_.data != nullptr) pool_->give(block_);
  }
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;

 private:
  std::shared_ptr<PinnedPool> pool_;
  PinnedPool::Block block_;
};

/// Largest plane index a kernel turns into an exact float (dcs/atoms.hpp).
constexpr std::int64_t kMaxPlanes = std::int64_t{1} << 22;

class CudaBackend final : public PotentialBackend {
 public:
  explicit CudaBackend(const BackendOptions& options)
      : kernel_(&detail::find_potential_kernel(options.kernel)),
        reduction_(options.reduction.empty() ? detail::default_reduction() : options.reduction) {
    detail::check_reduction_name(reduction_);
    device_ = detail::query_device(options.device);
    if (options.debug_sync) detail::set_debug_sync(true);
    ScopedDevice scoped(device_.ordinal);  // the stream and events belong to this device
    stream_ = std::make_unique<Stream>();
    events_ = std::make_unique<Events>();
  }

  std::string name() const override { return "cuda"; }
  std::string kernel_name() const override { return std::string(kernel_->name); }
  std::string reduction_name() const override { return reduction_; }
  std::string device_name() const override { return detail::describe_device(device_); }
  double tolerance() const override { return 1e-5; }

  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override {
    validate(physics);
    if (system.atoms.empty()) throw UsageError("no atoms to compute");
    check_grid(grid);
    const PairTerm term = pair_term(physics);
    if (term.kind != PairKind::kCoulomb && !kernel_->requirements.every_model)
      throw UsageError("--kernel " + std::string(kernel_->name) +
                       " computes the constant-dielectric Coulomb term only; "
                       "use a production kernel for --ionic-strength or --dielectric-model "
                       "distance");
    const std::vector<GridAtom> atoms = pack_grid_atoms(system, grid, coulomb_factor(physics));

    ScopedDevice scoped(device_.ordinal);
    const auto start = std::chrono::steady_clock::now();
    d_atoms_ = DeviceBuffer<GridAtom>(atoms.size());
    d_atoms_.upload(atoms.data(), atoms.size(), stream_->view());
    stream_->synchronize();
    timings_ = BackendTimings{};
    timings_.upload = seconds_since(start);

    grid_ = grid;
    min_r2_ = static_cast<float>(physics.min_distance * physics.min_distance);
    pair_ = term.kind;
    screen_c_ = static_cast<float>(screened_exponent_scale(term.kappa));  // lengths in Å
    atom_count_ = atoms.size();
  }

  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override {
    if (atom_count_ == 0) throw UsageError("CUDA backend: compute() before prepare()");
    const std::size_t plane = grid_.plane_points();
    const auto planes = static_cast<std::size_t>(slab.z_count);
    ScopedDevice scoped(device_.ordinal);
    const detail::StreamView stream = stream_->view();
    const std::size_t n =
        slab_.begin("CUDA backend", slab, grid_, kernel_->requirements.zeroed_output, stream);

    events_->start.record(stream);
    detail::enqueue_potential(*kernel_, grid_, slab, min_r2_, d_atoms_.data(), atom_count_,
                              slab_.values.data(), stream, pair_, screen_c_);
    events_->kernels.record(stream);

    slab_.enqueue_plane_statistics(plane, planes, reduction_, workspace_, stream);
    events_->statistics.record(stream);
    slab_.values.download(out, n, stream);
    events_->download.record(stream);
    stream.synchronize();
    std::copy(slab_.host_plane_stats.data(), slab_.host_plane_stats.data() + planes, plane_stats);

    timings_.kernels += 1e-3 * events_->kernels.elapsed_ms_since(events_->start);
    timings_.statistics += 1e-3 * events_->statistics.elapsed_ms_since(events_->kernels);
    timings_.download += 1e-3 * events_->download.elapsed_ms_since(events_->statistics);
  }

  std::unique_ptr<HostBuffer> allocate_host(std::size_t floats) override {
    return std::make_unique<PinnedHostBuffer>(pinned_, floats);
  }

  StatsAccum statistics(const float* values, std::size_t n) override {
    ScopedDevice scoped(device_.ordinal);
    const auto start = std::chrono::steady_clock::now();
    detail::grow_to(d_values_, n);
    d_values_.upload(values, n, stream_->view());
    const StatsAccum accum =
        detail::device_statistics(d_values_.data(), n, reduction_, workspace_, stream_->view());
    timings_.statistics += seconds_since(start);
    return accum;
  }

  DiffAccum difference(const float* values, const double* reference, std::size_t n) override {
    ScopedDevice scoped(device_.ordinal);
    const auto start = std::chrono::steady_clock::now();
    detail::grow_to(d_values_, n);
    detail::grow_to(d_reference_, n);
    d_values_.upload(values, n, stream_->view());
    d_reference_.upload(reference, n, stream_->view());
    const DiffAccum accum = detail::device_difference(d_values_.data(), d_reference_.data(), n,
                                                      reduction_, workspace_, stream_->view());
    timings_.statistics += seconds_since(start);
    return accum;
  }

  BackendTimings timings() const override { return timings_; }

  // 4 Mi points keep all SMs busy for several waves; 16 planes is the production kernel's
  // z-coarsening, so no thread column is cut short between slabs.
  SlabHint slab_hint() const override { return {std::size_t{1} << 22, 16}; }

  // --- Points (points/points_kernel.cu) ---------------------------------------------------

  void prepare_points(const System& system, const Physics& physics) override {
    validate(physics);
    if (system.atoms.empty()) throw UsageError("no atoms to compute");
    if (system.atoms.size() > static_cast<std::size_t>(INT_MAX))
      throw UsageError("CUDA backend: " + std::to_string(system.atoms.size()) +
                       " atoms exceed the points kernel's 31-bit atom index");
    const double factor = coulomb_factor(physics);
    // In Z order (pack_points_atoms); the skips are translated with points_atom_rank_.
    const std::vector<detail::PointsAtom> atoms =
        detail::pack_points_atoms(system, factor, points_atom_rank_);
    const PairTerm term = pair_term(physics);

    ScopedDevice scoped(device_.ordinal);
    const auto start = std::chrono::steady_clock::now();
    d_points_atoms_ = DeviceBuffer<detail::PointsAtom>(atoms.size());
    d_points_atoms_.upload(atoms.data(), atoms.size(), stream_->view());
    stream_->synchronize();
    timings_ = BackendTimings{};
    timings_.upload = seconds_since(start);
    points_physics_ = physics;
    points_pair_ = term.kind;
    points_screen_c_ = static_cast<float>(screened_exponent_scale(term.kappa));  // per Å
  }

  void compute_points(const Vec3* points, const std::uint32_t* skip, std::size_t n,
                      float* out) override {
    if (n == 0) return;
    if (d_points_atoms_.size() == 0)
      throw UsageError("CUDA backend: compute_points() before prepare_points()");
    if (points == nullptr || out == nullptr)
      throw UsageError("CUDA backend: compute_points() of " + std::to_string(n) +
                       " points without points or output");
    check_points(points, n);
    static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 is three packed doubles");

    ScopedDevice scoped(device_.ordinal);
    const detail::StreamView stream = stream_->view();
    detail::grow_to(d_point_coordinates_, 3 * n);
    detail::grow_to(d_point_values_, n);
    if (skip != nullptr) detail::grow_to(d_point_skips_, n);
    events_->start.record(stream);
    d_point_coordinates_.upload(points->data(), 3 * n, stream);
    if (skip != nullptr) {
      // Skips name atoms by their index in the system; the device holds them in Z order.
      points_skips_.resize(n);
      for (std::size_t i = 0; i < n; ++i)
        points_skips_[i] =
            skip[i] < points_atom_rank_.size() ? points_atom_rank_[skip[i]] : kNoAtom;
      d_point_skips_.upload(points_skips_.data(), n, stream);
    }
    events_->kernels.record(stream);  // the end of the upload, the start of the kernel

    detail::PointsLaunch launch;
    launch.d_points = d_point_coordinates_.data();
    launch.d_skip = skip != nullptr ? d_point_skips_.data() : nullptr;
    launch.d_out = d_point_values_.data();
    launch.n = n;
    launch.d_atoms = d_points_atoms_.data();
    launch.atom_count = d_points_atoms_.size();
    launch.chunk_atoms = detail::kProductionChunkAtoms;
    launch.min_distance = points_physics_.min_distance;
    launch.pair = points_pair_;
    launch.screen_c = points_screen_c_;
    detail::launch_points(launch, stream);
    events_->statistics.record(stream);  // the end of the kernel
    d_point_values_.download(out, n, stream);
    events_->download.record(stream);
    stream.synchronize();

    timings_.upload += 1e-3 * events_->kernels.elapsed_ms_since(events_->start);
    timings_.kernels += 1e-3 * events_->statistics.elapsed_ms_since(events_->kernels);
    timings_.download += 1e-3 * events_->download.elapsed_ms_since(events_->statistics);
  }

  // A value depends on its block of 256 points (four warps share a centre), so calls may start
  // at any multiple of it; 1 Mi points is about eight waves of the kernel on an H100 (132 SMs x
  // 4 blocks x 256 points).
  PointsHint points_hint() const override {
    return {static_cast<std::size_t>(detail::kPointsBlock), std::size_t{1} << 20};
  }

  // --- The float64 reference (reference/reference_kernel.cu) --------------------------------

  std::string reference_points(const System& system, const Physics& physics, const Vec3* points,
                               std::size_t n, double* out, unsigned /*threads*/) override {
    validate(physics);
    ScopedDevice scoped(device_.ordinal);
    detail::reference_points_on_device(system, physics, points, n, out, stream_->view());
    return detail::describe_device(device_) + ", float64";
  }

 private:
  struct Events {
    Event start, kernels, statistics, download;
  };

  /// Points beyond kMaxGridCoordinate (or infinite) would make their whole group's float offsets
  /// coarse; NaN points are accepted and give NaN values.
  static void check_points(const Vec3* points, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      for (int axis = 0; axis < 3; ++axis) {
        const double v = points[i][static_cast<std::size_t>(axis)];
        if (std::fabs(v) > limits::kMaxGridCoordinate)
          throw UsageError("CUDA backend: point " + std::to_string(i) + " has a coordinate of " +
                           std::to_string(v) + " Å, beyond the " +
                           std::to_string(limits::kMaxGridCoordinate) + " Å limit");
      }
  }

  /// The kernels index points and planes with 32-bit integers and exact floats.
  static void check_grid(const GridSpec& grid) {
    require_axis_aligned(grid, "CUDA backend");
    if (grid.nx() < 1 || grid.ny() < 1 || grid.nz() < 1)
      throw UsageError("CUDA backend: empty grid " + grid.describe());
    if (grid.plane_points() > static_cast<std::size_t>(INT_MAX / 2))
      throw UsageError("CUDA backend: a z-plane of " + std::to_string(grid.plane_points()) +
                       " points is more than the kernels index (" + std::to_string(INT_MAX / 2) +
                       ")");
    if (grid.nz() > kMaxPlanes)
      throw UsageError("CUDA backend: " + std::to_string(grid.nz()) + " z-planes exceed " +
                       std::to_string(kMaxPlanes));
    for (int axis = 0; axis < 3; ++axis)
      if (!(grid.spacing[axis] > 0.0) || !std::isfinite(grid.spacing[axis]))
        throw UsageError("CUDA backend: grid spacing must be positive and finite");
  }

  const PotentialKernel* kernel_;
  std::string reduction_;
  DeviceInfo device_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Events> events_;
  std::shared_ptr<PinnedPool> pinned_ = std::make_shared<PinnedPool>();  ///< allocate_host()'s
  detail::ReduceWorkspace workspace_;
  DeviceBuffer<GridAtom> d_atoms_;
  detail::SlabBuffers slab_;
  DeviceBuffer<float> d_values_;
  DeviceBuffer<double> d_reference_;
  GridSpec grid_;
  float min_r2_ = 0.0f;
  PairKind pair_ = PairKind::kCoulomb;
  float screen_c_ = 0.0f;
  std::size_t atom_count_ = 0;
  // compute_points(): the atoms of prepare_points() and the buffers of the last call.
  DeviceBuffer<detail::PointsAtom> d_points_atoms_;
  std::vector<std::uint32_t> points_atom_rank_;  ///< atom index -> its place in Z order
  std::vector<std::uint32_t> points_skips_;      ///< the call's skips as places (host staging)
  DeviceBuffer<double> d_point_coordinates_;
  DeviceBuffer<std::uint32_t> d_point_skips_;
  DeviceBuffer<float> d_point_values_;
  Physics points_physics_;
  PairKind points_pair_ = PairKind::kCoulomb;
  float points_screen_c_ = 0.0f;
  BackendTimings timings_;
};

}  // namespace

std::unique_ptr<PotentialBackend> make_cuda_backend(const BackendOptions& options) {
  return std::make_unique<CudaBackend>(options);
}

// The registry's rows carry the catalog's names and summaries in its order (static_assert in
// registry.cu), so the catalog is the list.
std::vector<VariantInfo> cuda_kernel_variants() {
  return variant_infos(BackendKind::Cuda, VariantKind::Potential);
}

std::vector<VariantInfo> cuda_reduction_variants() {
  return variant_infos(BackendKind::Cuda, VariantKind::Reduction);
}

}  // namespace dcs::cuda
