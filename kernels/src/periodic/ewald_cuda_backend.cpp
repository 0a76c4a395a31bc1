// The periodic (Ewald) method on one CUDA device (dcs/cuda/ewald_backend.hpp): prepare() uploads
// the atoms, bins the images near the map (ghost_atoms.hpp) and solves smooth PME with cuFFT
// (pme_mesh.hpp) on the CPU backend's parameters; each slab is one launch of the map kernel
// (ewald_sums.cu), then one reduction per plane and the download, as the MSM backend does.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "dcs/cuda/ewald_backend.hpp"
#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/log.hpp"
#include "dcs/parallel.hpp"
#include "dcs/periodic/ewald_backend.hpp"
#include "dcs/physics.hpp"
#include "dcs/timer.hpp"
#include "dcs/wrapping_backend.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "ewald_kernels.hpp"
#include "ghost_atoms.hpp"
#include "pme_mesh.hpp"
#include "reduce/reduce.hpp"
#include "slab_buffers.hpp"
#include "stream.hpp"

namespace dcs::cuda {
namespace {

using detail::DeviceBuffer;
using detail::ScopedDevice;
using detail::Stream;

/// The grid's step vectors, rows along i, j, k (GridSpec's axes today; the kernels take any).
std::array<Vec3, 3> step_vectors(const GridSpec& grid) {
  return {grid.step(0), grid.step(1), grid.step(2)};  // skewed along a triclinic cell's vectors
}

detail::CellRows cell_rows(const UnitCell& cell) {
  detail::CellRows rows;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      rows.v[i][j] = cell.vectors()[i][j];
      rows.star[i][j] = cell.reciprocal()[i][j];
    }
  return rows;
}

/// The box around the cell's corners (and the map's, when given), grown by `margin`.
detail::Region work_region(const UnitCell& cell, const GridSpec* grid, double margin) {
  detail::Region region;
  for (int d = 0; d < 3; ++d) {
    region.lower[d] = std::numeric_limits<double>::infinity();
    region.upper[d] = -region.lower[d];
  }
  auto take = [&](const Vec3& r) {
    for (int d = 0; d < 3; ++d) {
      region.lower[d] = std::min(region.lower[d], r[d]);
      region.upper[d] = std::max(region.upper[d], r[d]);
    }
  };
  const Mat3& v = cell.vectors();
  const std::array<Vec3, 3> steps = grid ? step_vectors(*grid) : std::array<Vec3, 3>{};
  for (int corner = 0; corner < 8; ++corner) {
    Vec3 c{}, g{};
    for (int axis = 0; axis < 3; ++axis) {
      const bool far = (corner >> axis) & 1;
      const double cells = far ? 1.0 : 0.0;
      const double points = far && grid ? double(grid->counts[std::size_t(axis)] - 1) : 0.0;
      for (int d = 0; d < 3; ++d) {
        c[d] += cells * v[axis][d];
        g[d] += points * steps[std::size_t(axis)][d];
      }
    }
    take(c);
    if (grid) take(Vec3{grid->origin[0] + g[0], grid->origin[1] + g[1], grid->origin[2] + g[2]});
  }
  for (int d = 0; d < 3; ++d) {
    region.lower[d] -= margin;
    region.upper[d] += margin;
  }
  return region;
}

/// The bins' side as a fraction of the real-space cutoff: 0.5; testing aid (benchmarks of the
/// tiles' pruning): DCS_EWALD_TESTING_BIN_SIDE="f", f in [0.2, 1]. Any side gives a point's value
/// in one fixed order (not the same bits as another side: the order follows the bins).
double bin_fraction() {
  const char* text = std::getenv("DCS_EWALD_TESTING_BIN_SIDE");
  if (text == nullptr || *text == '\0') return 0.5;
  char* end = nullptr;
  const double f = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(f >= 0.2 && f <= 1.0))
    throw UsageError(
        fmt::format("DCS_EWALD_TESTING_BIN_SIDE={} is not a number in [0.2, 1]", text));
  return f;
}

class EwaldCudaBackend final : public WrappingBackend {
 public:
  EwaldCudaBackend(std::unique_ptr<PotentialBackend> exact,
                   const periodic::PeriodicSettings& settings, const BackendOptions& options)
      : WrappingBackend(std::move(exact), "make_ewald_cuda_backend"),
        settings_(settings),
        pool_(resolve_threads(options.threads)) {
    settings_.threads = options.threads;
    device_ = detail::query_device(options.device);
    ScopedDevice scoped(device_.ordinal);
    stream_ = std::make_unique<Stream>();
    steps_ = std::make_unique<detail::SlabSteps>(wrapped().reduction_name());
  }

  std::string name() const override { return wrapped().name() + "+ewald"; }
  std::string kernel_name() const override {
    return "ewald (real space on binned images + smooth PME with cuFFT, on the GPU)";
  }

  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override {
    check_grid(grid);
    const auto start = std::chrono::steady_clock::now();
    timings_ = {};
    build(system, physics, &grid);
    grid_ = grid;
    detail::EwaldSlabLaunch& l = slab_launch_;
    l = detail::EwaldSlabLaunch{};
    l.bins = bins_;
    l.pme = pme_.read();
    l.term = term_;
    const std::array<Vec3, 3> steps = step_vectors(grid);
    for (int d = 0; d < 3; ++d) {
      l.origin[d] = grid.origin[std::size_t(d)];
      for (int axis = 0; axis < 3; ++axis)
        l.step[axis][d] = steps[std::size_t(axis)][std::size_t(d)];
    }
    l.nx = static_cast<int>(grid.nx());
    l.ny = static_cast<int>(grid.ny());
    l.nz = static_cast<int>(grid.nz());
    l.background = background_;
    l.factor = factor_;
    map_ready_ = true;
    timings_.upload = seconds_since(start);
  }

  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override {
    if (!map_ready_) throw UsageError("CUDA ewald: compute() before prepare()");
    ScopedDevice scoped(device_.ordinal);
    const detail::StreamView stream = stream_->view();
    const auto kernel = [&](float* d_out) {
      detail::EwaldSlabLaunch l = slab_launch_;
      l.z_begin = static_cast<int>(slab.z_begin);
      l.z_count = static_cast<int>(slab.z_count);
      l.d_out = d_out;
      detail::launch_ewald_slab(l, stream);
    };
    steps_->compute("CUDA ewald", slab, grid_, stream, kernel, out, plane_stats, timings_);
  }

  // The host memory, statistics, differences, timings and the slab hint are the wrapped exact
  // backend's (its 16 planes are whole 8-plane tiles, so slabs cut no tile in two; a cut tile
  // would still give the same bits, at some wasted work).

  void prepare_points(const System& system, const Physics& physics) override {
    build(system, physics, nullptr);
    map_ready_ = false;
    points_ready_ = true;
  }

  void compute_points(const Vec3* points, const std::uint32_t* skip, std::size_t n,
                      float* out) override {
    if (!points_ready_) throw UsageError("CUDA ewald: compute_points() before prepare_points()");
    if (n == 0) return;
    ScopedDevice scoped(device_.ordinal);
    const detail::StreamView stream = stream_->view();
    std::vector<double> xyz(3 * n);
    for (std::size_t i = 0; i < n; ++i) {
      for (int d = 0; d < 3; ++d) {
        const double c = points[i][std::size_t(d)];
        if (!std::isfinite(c)) throw Error(fmt::format("point {} is not a finite position", i));
        xyz[3 * i + std::size_t(d)] = c;
      }
      if (skip != nullptr && skip[i] != kNoAtom && skip[i] >= atoms_)
        throw InternalError(
            fmt::format("CUDA ewald: point {} skips atom {} of {}", i, skip[i], atoms_));
    }
    detail::grow_to(d_points_, 3 * n);
    detail::grow_to(d_point_values_, n);
    d_points_.upload(xyz.data(), 3 * n, stream);
    if (skip != nullptr) {
      detail::grow_to(d_skip_, n);
      d_skip_.upload(skip, n, stream);
    }
    detail::EwaldPointsLaunch l;
    l.bins = bins_;
    l.pme = pme_.read();
    l.term = term_;
    l.d_points = d_points_.data();
    l.d_skip = skip != nullptr ? d_skip_.data() : nullptr;
    l.d_charges = d_charges_.data();
    l.n = n;
    l.background = background_;
    l.self = -2.0 * parameters_.beta / std::sqrt(std::numbers::pi);
    l.factor = factor_;
    l.d_out = d_point_values_.data();
    detail::launch_ewald_points(l, stream);
    d_point_values_.download(out, n, stream);
    stream.synchronize();
  }

  EwaldCudaPrepareTimings prepare_timings() const {
    if (!map_ready_ && !points_ready_) throw UsageError("CUDA ewald: no prepare() yet");
    return prepare_timings_;
  }

  std::string reference_points(const System& system, const Physics& physics, const Vec3* points,
                               std::size_t n, double* out, unsigned threads) override {
    return periodic::ewald_reference_points(settings_, system, physics, points, n, out, threads);
  }

 private:
  static_assert(kNoAtom == detail::kGhost, "the points' 'no atom' is the kernels' kGhost");

  /// The kernels index points, rows and planes with 32-bit integers.
  static void check_grid(const GridSpec& grid) {
    if (grid.nx() < 1 || grid.ny() < 1 || grid.nz() < 1)
      throw UsageError("CUDA ewald: empty grid " + grid.describe());
    if (grid.nx() > INT_MAX / 2 || grid.ny() > INT_MAX / 2 || grid.nz() > INT_MAX / 2 ||
        grid.plane_points() > static_cast<std::size_t>(INT_MAX / 2))
      throw UsageError("CUDA ewald: a z-plane of " + std::to_string(grid.plane_points()) +
                       " points is more than the kernel indexes");
  }

  /// One frame's state: parameters, atoms on the device, binned images around the cell (and
  /// the map, when given) and the solved PME mesh.
  void build(const System& system, const Physics& physics, const GridSpec* grid);

  periodic::PeriodicSettings settings_;
  ThreadPool pool_;
  DeviceInfo device_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<detail::SlabSteps> steps_;  ///< its events also time build()'s steps
  periodic::EwaldParameters parameters_;
  std::size_t atoms_ = 0;
  detail::PinnedBuffer<double> h_xyz_, h_q_;
  DeviceBuffer<double> d_positions_, d_charges_;
  DeviceBuffer<detail::EwaldAtom> d_images_;
  DeviceBuffer<std::uint32_t> d_bin_start_;
  detail::EwaldBins bins_;
  detail::PmeMesh pme_;
  detail::RealTerm term_;
  double background_ = 0.0, factor_ = 0.0;
  detail::EwaldSlabLaunch slab_launch_;
  DeviceBuffer<double> d_points_;
  DeviceBuffer<std::uint32_t> d_skip_;
  DeviceBuffer<float> d_point_values_;
  GridSpec grid_;
  bool map_ready_ = false, points_ready_ = false;
  EwaldCudaPrepareTimings prepare_timings_;
};

void EwaldCudaBackend::build(const System& system, const Physics& physics, const GridSpec* grid) {
  periodic::check_ewald_input(system, physics);
  map_ready_ = points_ready_ = false;
  periodic::PeriodicSettings settings = settings_;
  settings.min_distance = physics.min_distance;
  const UnitCell& cell = system.cell;
  parameters_ = periodic::choose_ewald_parameters(cell, settings);
  const std::size_t n = system.atoms.size();
  if (n >= std::numeric_limits<std::uint32_t>::max())
    throw UsageError(fmt::format("CUDA ewald: {} atoms exceed the kernels' 32-bit indices", n));
  const auto start = std::chrono::steady_clock::now();
  prepare_timings_ = {};
  // The atoms as x, y, z and q arrays in pinned staging kept from frame to frame, converted on
  // the pool's threads (a 1e6-atom System is ~200 MB of Atom records to stream through).
  if (h_xyz_.size() < 3 * n) h_xyz_ = detail::PinnedBuffer<double>(3 * n);
  if (h_q_.size() < n) h_q_ = detail::PinnedBuffer<double>(n);
  double* xyz = h_xyz_.data();
  double* q = h_q_.data();
  std::atomic<bool> finite{true};
  pool_.parallel_for(
      n,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          const Atom& atom = system.atoms[i];
          for (int d = 0; d < 3; ++d) xyz[3 * i + std::size_t(d)] = atom.position[std::size_t(d)];
          q[i] = atom.charge;
          if (!std::isfinite(atom.position[0]) || !std::isfinite(atom.position[1]) ||
              !std::isfinite(atom.position[2]) || !std::isfinite(atom.charge))
            finite = false;
        }
      },
      16384);
  if (!finite)
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(q[i]) || !std::isfinite(xyz[3 * i]) || !std::isfinite(xyz[3 * i + 1]) ||
          !std::isfinite(xyz[3 * i + 2]))
        throw Error(fmt::format("atom {} has a position or charge that is not a finite number", i));
  double total = 0.0, abs_total = 0.0;  // in atom order: the same sums on every run
  for (std::size_t i = 0; i < n; ++i) {
    total += q[i];
    abs_total += std::fabs(q[i]);
  }
  const detail::Region region =
      work_region(cell, grid, parameters_.real_cutoff * (1.0 + 1e-6) + 1e-3);
  ScopedDevice scoped(device_.ordinal);
  const detail::StreamView stream = stream_->view();
  // Device memory: the mesh, then what is left for the images (about 100 bytes each while
  // they are sorted: two copies, keys and indices twice, cub's work area).
  std::size_t free_bytes = 0, total_bytes = 0;
  DCS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t mesh_bytes = detail::PmeMesh::bytes(parameters_.mesh);
  const std::size_t atom_bytes = 40 * n + (std::size_t{64} << 20);
  if (mesh_bytes + atom_bytes > free_bytes)
    throw UsageError(
        fmt::format("CUDA ewald: the PME mesh {} x {} x {} and the atoms need {}, {} has {} free",
                    parameters_.mesh[0], parameters_.mesh[1], parameters_.mesh[2],
                    format_bytes(mesh_bytes + atom_bytes), detail::describe_device(device_),
                    format_bytes(free_bytes)));
  const std::size_t max_images = (free_bytes - mesh_bytes - atom_bytes) / 100;
  detail::grow_to(d_positions_, 3 * n);
  detail::grow_to(d_charges_, n);
  d_positions_.upload(xyz, 3 * n, stream);
  d_charges_.upload(q, n, stream);
  const detail::CellRows rows = cell_rows(cell);
  detail::SlabEvents& events = steps_->events;
  events.start.record(stream);
  prepare_timings_.host = seconds_since(start);
  // Bins of half the cutoff: a tile's rows then cover little more than its reach.
  bins_ = detail::bin_images(d_positions_.data(), d_charges_.data(), n, rows, region,
                             bin_fraction() * parameters_.real_cutoff, max_images, d_images_,
                             d_bin_start_, stream);
  events.kernels.record(stream);
  pme_.solve(d_positions_.data(), d_charges_.data(), n, abs_total, rows, cell.volume(),
             parameters_.beta, parameters_.mesh, parameters_.order, stream);
  events.statistics.record(stream);
  stream.synchronize();  // the staging is written again by the next frame
  prepare_timings_.binning = 1e-3 * events.kernels.elapsed_ms_since(events.start);
  prepare_timings_.pme = 1e-3 * events.statistics.elapsed_ms_since(events.kernels);
  prepare_timings_.images = d_images_.size();
  prepare_timings_.mesh = std::size_t(parameters_.mesh[0]) * std::size_t(parameters_.mesh[1]) *
                          std::size_t(parameters_.mesh[2]);
  prepare_timings_.total = seconds_since(start);
  atoms_ = n;
  term_.beta = static_cast<float>(parameters_.beta);
  term_.cutoff2 = static_cast<float>(parameters_.real_cutoff * parameters_.real_cutoff);
  term_.min_r2 = static_cast<float>(physics.min_distance * physics.min_distance);
  term_.cutoff = parameters_.real_cutoff;
  background_ = -std::numbers::pi * total / (parameters_.beta * parameters_.beta * cell.volume());
  factor_ = coulomb_factor(physics);
  log().debug("CUDA ewald on device {}: {} atoms, {} ({})", device_.ordinal, n,
              parameters_.describe(), detail::describe_device(device_));
}

}  // namespace

EwaldCudaPrepareTimings ewald_cuda_prepare_timings(const PotentialBackend& backend) {
  const auto* ewald = dynamic_cast<const EwaldCudaBackend*>(&backend);
  if (ewald == nullptr) throw UsageError("not a CUDA ewald backend: " + backend.name());
  return ewald->prepare_timings();
}

std::unique_ptr<PotentialBackend> make_ewald_cuda_backend(
    std::unique_ptr<PotentialBackend> exact, const periodic::PeriodicSettings& settings,
    const BackendOptions& options) {
  if (!exact) throw InternalError("make_ewald_cuda_backend: no exact backend to wrap");
  return std::make_unique<EwaldCudaBackend>(std::move(exact), settings, options);
}

}  // namespace dcs::cuda
