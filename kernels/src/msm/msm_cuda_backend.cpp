// MSM on one CUDA device (dcs/cuda/msm_backend.hpp): prepare() uploads the atoms once, bins
// them (atom_bins.hpp) and solves the lattice hierarchy (device_lattice.hpp) on the device, on
// the plan the CPU solve uses (dcs/msm_plan.hpp); each slab is one launch of the MSM kernel
// (msm_kernels.cu), then one reduction per plane and the download, as CudaBackend does.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "atom_bins.hpp"
#include "cuda_check.hpp"
#include "dcs/cuda/msm_backend.hpp"
#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "dcs/msm.hpp"
#include "dcs/msm_plan.hpp"
#include "dcs/parallel.hpp"
#include "dcs/physics.hpp"
#include "dcs/timer.hpp"
#include "dcs/wrapping_backend.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "device_lattice.hpp"
#include "msm_kernels.hpp"
#include "reduce/reduce.hpp"
#include "slab_buffers.hpp"
#include "stream.hpp"

namespace dcs::cuda {
namespace {

using detail::DeviceBuffer;
using detail::Event;
using detail::MsmAtom;
using detail::ScopedDevice;
using detail::Stream;

// The wrapped exact CUDA backend keeps the reductions, the pinned host memory, the slab hint
// (16 planes, a multiple of the kernel's 8-plane tiles, so slabs cut no tile in two; a cut tile
// would still give the same bits, at some wasted work), the points and the device's reference.
class MsmCudaBackend final : public WrappingBackend {
 public:
  MsmCudaBackend(std::unique_ptr<PotentialBackend> exact, const MsmParameters& parameters,
                 const BackendOptions& options)
      : WrappingBackend(std::move(exact), "make_msm_cuda_backend"),
        parameters_(parameters),
        pool_(resolve_threads(options.threads)) {
    validate(parameters_);
    device_ = detail::query_device(options.device);
    ScopedDevice scoped(device_.ordinal);
    stream_ = std::make_unique<Stream>();
    steps_ = std::make_unique<detail::SlabSteps>(wrapped().reduction_name());
    for (auto& staged : staged_) staged = std::make_unique<Event>();
  }

  std::string name() const override { return wrapped().name() + "+msm"; }
  std::string kernel_name() const override { return describe(parameters_); }
  double tolerance() const override { return parameters_.target; }

  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override {
    check_grid(grid);
    check_msm_input(system, physics, parameters_);  // the CPU backend's, before device work
    const std::size_t n = system.atoms.size();
    if (n >= std::numeric_limits<std::uint32_t>::max())
      throw UsageError("CUDA msm: " + std::to_string(n) +
                       " atoms exceed the kernel's 32-bit bin offsets");
    const auto start = std::chrono::steady_clock::now();
    timings_ = {};
    prepare_timings_ = {};
    prepared_ = false;
    d_atoms_ = DeviceBuffer<MsmAtom>();
    d_bin_start_ = DeviceBuffer<std::uint32_t>();
    d_lattice_ = DeviceBuffer<double>();

    ScopedDevice scoped(device_.ordinal);
    // The box (the map and the charged atoms: atoms of charge 0 add nothing and are left out,
    // msm_box) and the device memory it takes, checked before anything is allocated.
    const MsmBox box = msm_box(system, grid);
    const MsmMemory memory = msm_memory(parameters_, box, grid, pool_.size());
    check_free_memory(box, memory);
    const detail::StreamView stream = stream_->view();
    const std::size_t taken = std::max<std::size_t>(box.charged, 1);
    DeviceBuffer<MsmAtom> d_input = upload_atoms(system, grid, box, stream);
    // The plan (as the CPU's Prepared::build): the lattice covers the charged atoms and the map.
    const MsmLatticePlan plan = msm_lattice_plan(parameters_, box.lower, box.upper);
    const MsmBins bins = msm_bins(parameters_.cutoff, box.atoms_lower, box.atoms_upper);
    const MsmExtent& finest = plan.levels[0];
    for (std::size_t d = 0; d < 3; ++d)
      if (bins.n[d] > INT_MAX || finest.n[d] > INT_MAX / 4)
        throw UsageError("CUDA msm: the bins or the lattice are too large for the kernel");
    std::array<std::vector<int>, 3> base;
    std::array<std::vector<double>, 3> weights;
    for (std::size_t d = 0; d < 3; ++d) {
      MsmAxisWeights w = msm_axis_weights(plan, grid, static_cast<int>(d));
      base[d].resize(w.base.size());
      for (std::size_t i = 0; i < base[d].size(); ++i)
        base[d][i] = static_cast<int>(w.base[i] - finest.lo[d]);
      weights[d] = std::move(w.w);
    }
    // Device memory at its peak, the cell sort (device_lattice.hpp): the input, the binned copy,
    // the cell-sorted copy (32 bytes an atom each), the sort's keys and indices (16), the cell
    // starts (4 a finest point) and the bin starts; later the lattices' ~23 bytes a finest point
    // beside the binned copy. 1e8 atoms (a 1000 A box) and a 2048^3 map: the finest lattice is
    // ~690^3 = 3.3e8 points, so 11.2 GB + 1.3 GB at the sort and 3.2 + 7.6 GB at the level sums,
    // ~12.5 GB, then 3.3 GB (binned atoms, finest potential) kept for the slabs.
    prepare_timings_.device_peak_bytes = static_cast<std::size_t>(memory.device_peak);
    prepare_timings_.levels = static_cast<int>(plan.levels.size());
    prepare_timings_.lattice_points = plan.lattice_points();
    prepare_timings_.host = seconds_since(start);

    // Short-range bins (stable: input order within a bin), then the lattice hierarchy.
    detail::MsmStepTimer timer;
    {
      detail::BoxBins box_bins;
      for (int d = 0; d < 3; ++d) {
        box_bins.lower[d] = bins.lower[d];
        box_bins.n[d] = bins.n[static_cast<std::size_t>(d)];
      }
      box_bins.side = bins.side;
      timer.begin(detail::MsmStep::Binning, stream);
      detail::bin_atoms(d_input.data(), taken, box_bins, d_atoms_, d_bin_start_, stream);
      timer.end(stream);
    }
    const char* direct = std::getenv("DCS_MSM_TESTING_DIRECT_SUMS");
    detail::solve_lattice_on_device(plan, std::move(d_input), direct != nullptr && *direct == '1',
                                    d_lattice_, stream, timer);
    for (std::size_t d = 0; d < 3; ++d) {
      d_base_[d] = DeviceBuffer<int>(base[d].size());
      d_base_[d].upload(base[d].data(), base[d].size(), stream);
      d_weights_[d] = DeviceBuffer<double>(weights[d].size());
      d_weights_[d].upload(weights[d].data(), weights[d].size(), stream);
    }
    stream.synchronize();  // the host vectors go out of scope
    record_steps(timer);
    lattice_extent_ = finest;
    fill_launch(bins, finest, grid, physics);
    grid_ = grid;
    prepared_ = true;
    prepare_timings_.total = seconds_since(start);
    timings_.upload = prepare_timings_.total;
    log_prepare(taken);
  }

  cuda::MsmCudaPrepareTimings prepare_timings() const {
    if (!prepared_) throw UsageError("CUDA msm: no prepare() yet");
    return prepare_timings_;
  }

  MsmLatticeValues finest_lattice() {
    if (!prepared_) throw UsageError("CUDA msm: no prepare() yet");
    ScopedDevice scoped(device_.ordinal);
    MsmLatticeValues values;
    values.extent = lattice_extent_;
    values.v.resize(d_lattice_.size());
    d_lattice_.download(values.v.data(), values.v.size(), stream_->view());
    stream_->synchronize();
    return values;
  }

  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override {
    if (!prepared_) throw UsageError("CUDA msm: compute() before prepare()");
    ScopedDevice scoped(device_.ordinal);
    const detail::StreamView stream = stream_->view();
    const auto kernel = [&](float* d_out) {
      detail::MsmSlabLaunch l = launch_;
      l.z_begin = static_cast<int>(slab.z_begin);
      l.z_count = static_cast<int>(slab.z_count);
      l.d_out = d_out;
      detail::launch_msm_slab(l, stream);
    };
    steps_->compute("CUDA msm", slab, grid_, stream, kernel, out, plane_stats, timings_);
  }

 private:
  /// Refuses (UsageError) a box whose lattices and atoms need more than the device has free.
  void check_free_memory(const MsmBox& box, const MsmMemory& memory) const {
    std::size_t free_bytes = 0, total_bytes = 0;
    DCS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (memory.device_peak > static_cast<double>(free_bytes))
      throw UsageError(msm_too_large(
          parameters_, box, memory.device_peak, "the device's lattices and atoms",
          detail::describe_device(device_) + " has " + format_bytes(free_bytes) + " free"));
  }

  /// The atoms taken, once on the device: all, or the charged ones by index; none charged: one
  /// zero charge at the map's origin (the bins must not be empty). Through two pinned staging
  /// buffers (conversion of one chunk on the pool overlaps the copy of the other).
  DeviceBuffer<MsmAtom> upload_atoms(const System& system, const GridSpec& grid, const MsmBox& box,
                                     detail::StreamView stream) {
    const std::size_t n = system.atoms.size();
    std::vector<std::size_t> keep;
    if (box.charged > 0 && box.charged < n) {
      keep.reserve(box.charged);
      for (std::size_t i = 0; i < n; ++i)
        if (system.atoms[i].charge != 0.0) keep.push_back(i);
    }
    const std::size_t taken = std::max<std::size_t>(box.charged, 1);
    auto atom_taken = [&](std::size_t i) -> MsmAtom {
      if (box.charged == 0) return {grid.origin[0], grid.origin[1], grid.origin[2], 0.0};
      const Atom& atom = system.atoms[keep.empty() ? i : keep[i]];
      return {atom.position[0], atom.position[1], atom.position[2], atom.charge};
    };
    DeviceBuffer<MsmAtom> d_input(taken);
    for (auto& staging : h_staging_)
      if (staging.size() < kStagingAtoms) staging = detail::PinnedBuffer<MsmAtom>(kStagingAtoms);
    for (std::size_t begin = 0, chunk = 0; begin < taken; begin += kStagingAtoms, ++chunk) {
      const std::size_t buffer = chunk % 2, count = std::min(kStagingAtoms, taken - begin);
      if (chunk >= 2) staged_[buffer]->synchronize();  // its previous copy has left it
      MsmAtom* out = h_staging_[buffer].data();
      pool_.parallel_for(
          count,
          [&](std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i) out[i] = atom_taken(begin + i);
          },
          4096);
      d_input.upload(out, count, stream, begin);
      staged_[buffer]->record(stream);
    }
    return d_input;
  }

  /// The device steps' times of prepare() (timer's, all complete).
  void record_steps(const detail::MsmStepTimer& timer) {
    const std::vector<double> step = timer.seconds();
    prepare_timings_.binning = step[static_cast<std::size_t>(detail::MsmStep::Binning)];
    prepare_timings_.anterpolation = step[static_cast<std::size_t>(detail::MsmStep::Anterpolation)];
    prepare_timings_.restriction = step[static_cast<std::size_t>(detail::MsmStep::Restriction)];
    prepare_timings_.level_sums = step[static_cast<std::size_t>(detail::MsmStep::LevelSums)];
    prepare_timings_.prolongation = step[static_cast<std::size_t>(detail::MsmStep::Prolongation)];
  }

  /// The slab kernel's launch, less the slab: the binned atoms, the finest lattice and its
  /// weights, the grid, the splitting polynomial and the unit's factor.
  void fill_launch(const MsmBins& bins, const MsmExtent& finest, const GridSpec& grid,
                   const Physics& physics) {
    detail::MsmSlabLaunch& l = launch_;
    l = detail::MsmSlabLaunch{};
    l.d_atoms = d_atoms_.data();
    l.d_bin_start = d_bin_start_.data();
    for (std::size_t d = 0; d < 3; ++d) {
      l.bin_lower[d] = bins.lower[d];
      l.bins[d] = static_cast<int>(bins.n[d]);
      l.lattice_n[d] = static_cast<int>(finest.n[d]);
      l.d_base[d] = d_base_[d].data();
      l.d_weights[d] = d_weights_[d].data();
      l.origin[d] = grid.origin[d];
      l.spacing[d] = grid.spacing[d];
    }
    l.bin_side = bins.side;
    l.split = parameters_.split;
    const std::array<double, 7> gamma = msm_gamma(parameters_);
    const double a = parameters_.cutoff;
    for (std::size_t k = 0; k < gamma.size(); ++k) l.poly[k] = static_cast<float>(gamma[k] / a);
    l.a2 = static_cast<float>(a * a);
    l.inv_a2 = static_cast<float>(1.0 / (a * a));
    l.min_r2 = static_cast<float>(physics.min_distance * physics.min_distance);
    l.cutoff = a;
    l.d_lattice = d_lattice_.data();
    l.order = parameters_.order;
    l.nx = static_cast<int>(grid.nx());
    l.ny = static_cast<int>(grid.ny());
    l.nz = static_cast<int>(grid.nz());
    l.factor = coulomb_factor(physics);
  }

  void log_prepare(std::size_t taken) const {
    const detail::MsmSlabLaunch& l = launch_;
    log().debug(
        "CUDA msm on device {}: {} atoms in {}x{}x{} bins of {} A, lattice {}x{}x{} on {} "
        "levels; prepare {:.3f} s (host {:.3f}, binning {:.3f}, anterpolation {:.3f}, "
        "restriction {:.3f}, level sums {:.3f}, prolongation {:.3f})",
        device_.ordinal, taken, l.bins[0], l.bins[1], l.bins[2], l.bin_side, l.lattice_n[0],
        l.lattice_n[1], l.lattice_n[2], prepare_timings_.levels, prepare_timings_.total,
        prepare_timings_.host, prepare_timings_.binning, prepare_timings_.anterpolation,
        prepare_timings_.restriction, prepare_timings_.level_sums, prepare_timings_.prolongation);
  }

  /// The kernel indexes points, rows and planes with 32-bit integers.
  static void check_grid(const GridSpec& grid) {
    require_axis_aligned(grid, "CUDA msm");
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

  MsmParameters parameters_;
  ThreadPool pool_;
  DeviceInfo device_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<detail::SlabSteps> steps_;
  static constexpr std::size_t kStagingAtoms = std::size_t{1} << 20;  ///< 32 MiB each
  detail::PinnedBuffer<MsmAtom> h_staging_[2];
  std::unique_ptr<Event> staged_[2];  ///< a staging buffer's copy has been issued
  DeviceBuffer<MsmAtom> d_atoms_;
  DeviceBuffer<std::uint32_t> d_bin_start_;
  DeviceBuffer<double> d_lattice_;
  DeviceBuffer<int> d_base_[3];
  DeviceBuffer<double> d_weights_[3];
  detail::MsmSlabLaunch launch_;
  GridSpec grid_;
  bool prepared_ = false;
  cuda::MsmCudaPrepareTimings prepare_timings_;
  MsmExtent lattice_extent_;
};

const MsmCudaBackend& msm_backend(const PotentialBackend& backend) {
  const auto* msm = dynamic_cast<const MsmCudaBackend*>(&backend);
  if (msm == nullptr) throw UsageError("not a CUDA msm backend: " + backend.name());
  return *msm;
}

}  // namespace

MsmCudaPrepareTimings msm_cuda_prepare_timings(const PotentialBackend& backend) {
  return msm_backend(backend).prepare_timings();
}

MsmLatticeValues msm_cuda_finest_lattice(const PotentialBackend& backend) {
  return const_cast<MsmCudaBackend&>(msm_backend(backend)).finest_lattice();
}

std::unique_ptr<PotentialBackend> make_msm_cuda_backend(std::unique_ptr<PotentialBackend> exact,
                                                        const MsmParameters& parameters,
                                                        const BackendOptions& options) {
  return std::make_unique<MsmCudaBackend>(std::move(exact), parameters, options);
}

}  // namespace dcs::cuda
