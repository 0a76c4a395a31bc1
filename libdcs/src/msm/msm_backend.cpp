// MSM behind the PotentialBackend interface (dcs/msm.hpp). prepare() bins the atoms and solves
// the lattice hierarchy once; compute_slab() gives each map point its short-range sum (exact
// over the atoms within a) plus the finest lattice interpolated, both in a fixed order, so a
// point's value never depends on its slab or on the thread count. The wrapped exact backend
// does the reductions (statistics(), difference()); points are refused (compute_points()).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/msm.hpp"
#include "dcs/parallel.hpp"
#include "dcs/timer.hpp"
#include "lattice.hpp"
#include "short_range.hpp"
#include "splitting.hpp"

namespace dcs {
namespace {

/// The basis weights of every grid coordinate on one axis: base index and `order` weights.
struct AxisWeights {
  std::vector<long> base;
  std::vector<double> w;
};

AxisWeights axis_weights(const msm::Basis& basis, double origin, double spacing, std::int64_t n,
                         double lattice_origin, double h) {
  AxisWeights a;
  a.base.resize(static_cast<std::size_t>(n));
  a.w.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(basis.order));
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = origin + static_cast<double>(i) * spacing;
    a.base[static_cast<std::size_t>(i)] =
        basis.weights((x - lattice_origin) / h, &a.w[static_cast<std::size_t>(i) * basis.order]);
  }
  return a;
}

class MsmBackend final : public PotentialBackend {
 public:
  MsmBackend(std::unique_ptr<PotentialBackend> exact, const MsmParameters& parameters,
             const BackendOptions& options)
      : exact_(std::move(exact)), parameters_(parameters), pool_(resolve_threads(options.threads)) {
    validate(parameters_);
  }

  std::string name() const override { return exact_->name() + "+msm"; }
  std::string kernel_name() const override { return describe(parameters_); }
  std::string reduction_name() const override { return exact_->reduction_name(); }
  std::string device_name() const override { return exact_->device_name(); }
  /// The target: a relative RMS error, so the largest error against max|V| (which sits at an
  /// atom) is below it too.
  double tolerance() const override { return parameters_.target; }

  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override {
    if (system.atoms.empty()) throw UsageError("no atoms to compute");
    if (pair_term(physics).kind != PairKind::kCoulomb)
      throw UsageError("--method msm supports the Coulomb model only; the " +
                       describe_model(physics) + " model needs --method exact");
    if (physics.min_distance >= 0.5 * parameters_.cutoff)
      throw UsageError("--method msm needs --min-distance below half the MSM cutoff (" +
                       std::to_string(parameters_.cutoff) + " A)");
    const auto start = std::chrono::steady_clock::now();
    timings_ = {};
    grid_ = grid;
    factor_ = coulomb_factor(physics);
    std::vector<msm::PointCharge> atoms;
    atoms.reserve(system.atoms.size());
    for (const Atom& atom : system.atoms)
      atoms.push_back({atom.position[0], atom.position[1], atom.position[2], atom.charge});
    // The lattice covers the atoms and the map.
    Vec3 lower = grid.origin, upper = grid.point(grid.nx() - 1, grid.ny() - 1, grid.nz() - 1);
    for (const msm::PointCharge& atom : atoms) {
      const double p[3] = {atom.x, atom.y, atom.z};
      for (int d = 0; d < 3; ++d) {
        lower[d] = std::min(lower[d], p[d]);
        upper[d] = std::max(upper[d], p[d]);
      }
    }
    // The finest lattice, the coarser ones (1/7 more) and a finest-sized temporary: in doubles.
    double lattice_points = 1.0;
    for (int d = 0; d < 3; ++d)
      lattice_points *= std::floor((upper[d] - lower[d]) / parameters_.spacing) + parameters_.order;
    check_fits_in_memory(static_cast<std::size_t>(lattice_points * 8.0 * (1.0 + 1.0 / 7.0 + 2.0)),
                         "the MSM lattices (" + describe(parameters_) + ")");
    const msm::Basis basis(parameters_.order);
    const msm::Splitting splitting(parameters_.split);
    long_range_.emplace(basis, splitting, parameters_.spacing, parameters_.cutoff);
    long_range_->solve(atoms, lower, upper, pool_);
    short_range_.emplace(splitting, parameters_.cutoff, physics.min_distance);
    short_range_->bin(atoms);
    const Vec3& o = long_range_->origin();
    const double h = parameters_.spacing;
    for (int d = 0; d < 3; ++d)
      weights_[d] = axis_weights(basis, grid.origin[d], grid.spacing[d], grid.counts[d], o[d], h);
    // Blocks of points along x about a long: a point's candidates are few more than its own.
    block_ = std::max<std::int64_t>(
        1, std::min<std::int64_t>(64,
                                  static_cast<std::int64_t>(parameters_.cutoff / grid.spacing[0])));
    timings_.upload = seconds_since(start);
  }

  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override {
    if (!long_range_) throw UsageError("msm: compute() called before prepare()");
    if (slab.z_begin < 0 || slab.z_count < 0 || slab.z_begin + slab.z_count > grid_.nz())
      throw UsageError("msm: slab [" + std::to_string(slab.z_begin) + ", " +
                       std::to_string(slab.z_begin + slab.z_count) + ") outside the grid's " +
                       std::to_string(grid_.nz()) + " planes");
    const auto start = std::chrono::steady_clock::now();
    const std::size_t rows = static_cast<std::size_t>(slab.z_count * grid_.ny());
    const msm::Lattice& e = long_range_->finest();
    const int p = parameters_.order;
    pool_.parallel_for(rows, [&](std::size_t begin, std::size_t end) {
      std::vector<double> line(static_cast<std::size_t>(e.n[0]));
      msm::Candidates candidates;
      for (std::size_t row = begin; row < end; ++row) {
        const std::int64_t k = slab.z_begin + static_cast<std::int64_t>(row) / grid_.ny();
        const std::int64_t j = static_cast<std::int64_t>(row) % grid_.ny();
        // The lattice contracted over y and z for this row: line[m] = sum wy wz e(m, ., .).
        std::fill(line.begin(), line.end(), 0.0);
        const long by = weights_[1].base[static_cast<std::size_t>(j)];
        const long bz = weights_[2].base[static_cast<std::size_t>(k)];
        const double* wy = &weights_[1].w[static_cast<std::size_t>(j) * p];
        const double* wz = &weights_[2].w[static_cast<std::size_t>(k) * p];
        for (int kk = 0; kk < p; ++kk)
          for (int jj = 0; jj < p; ++jj) {
            const double w = wz[kk] * wy[jj];
            const double* src = &e.v[e.offset(e.lo[0], by + jj, bz + kk)];
            for (std::size_t m = 0; m < line.size(); ++m) line[m] += w * src[m];
          }
        const Vec3 row_start = grid_.point(0, j, k);
        float* out_row = out + row * static_cast<std::size_t>(grid_.nx());
        for (std::int64_t i0 = 0; i0 < grid_.nx(); i0 += block_) {
          const std::int64_t i1 = std::min(grid_.nx(), i0 + block_);
          short_range_->gather(grid_.point(i0, j, k)[0], grid_.point(i1 - 1, j, k)[0], row_start[1],
                               row_start[2], candidates);
          for (std::int64_t i = i0; i < i1; ++i) {
            const double* wx = &weights_[0].w[static_cast<std::size_t>(i) * p];
            const std::size_t bx =
                static_cast<std::size_t>(weights_[0].base[static_cast<std::size_t>(i)] - e.lo[0]);
            double lr = 0.0;
            for (int ii = 0; ii < p; ++ii) lr += wx[ii] * line[bx + static_cast<std::size_t>(ii)];
            const double sr = short_range_->sum(grid_.point(i, j, k)[0], candidates);
            out_row[i] = static_cast<float>(factor_ * (sr + lr));
          }
        }
      }
    });
    timings_.kernels += seconds_since(start);
    // Each plane reduced on its own, as the CPU backends do (backend.hpp's determinism).
    const auto stats_start = std::chrono::steady_clock::now();
    const std::size_t plane = grid_.plane_points();
    pool_.parallel_for(static_cast<std::size_t>(slab.z_count),
                       [&](std::size_t begin, std::size_t end) {
                         for (std::size_t q = begin; q < end; ++q)
                           plane_stats[q] = cpu_statistics(out + q * plane, plane);
                       });
    timings_.statistics += seconds_since(stats_start);
  }

  StatsAccum statistics(const float* values, std::size_t n) override {
    return exact_->statistics(values, n);
  }
  DiffAccum difference(const float* values, const double* reference, std::size_t n) override {
    return exact_->difference(values, reference, n);
  }
  BackendTimings timings() const override { return timings_; }
  SlabHint slab_hint() const override { return exact_->slab_hint(); }

  // Points are not MSM's: the lattice would have to cover points not known in advance, and a
  // skipped atom's own long-range part would have to be taken out at its position. Refused
  // (run_config.cpp refuses --points/--at-atoms with --method msm first) rather than computed
  // exactly under an msm label.
  void prepare_points(const System&, const Physics&) override {
    throw UsageError("--method msm computes maps only; potentials at points need --method exact");
  }
  void compute_points(const Vec3*, const std::uint32_t*, std::size_t, float*) override {
    throw UsageError("--method msm computes maps only; potentials at points need --method exact");
  }
  PointsHint points_hint() const override { return exact_->points_hint(); }

 private:
  std::unique_ptr<PotentialBackend> exact_;
  MsmParameters parameters_;
  ThreadPool pool_;
  GridSpec grid_;
  double factor_ = 0.0;
  std::optional<msm::LongRange> long_range_;
  std::optional<msm::ShortRange> short_range_;
  AxisWeights weights_[3];
  std::int64_t block_ = 1;
  BackendTimings timings_;
};

}  // namespace

std::unique_ptr<PotentialBackend> make_msm_backend(std::unique_ptr<PotentialBackend> exact,
                                                   const MsmParameters& parameters,
                                                   const BackendOptions& options) {
  if (!exact) throw InternalError("make_msm_backend: no exact backend to wrap");
  return std::make_unique<MsmBackend>(std::move(exact), parameters, options);
}

}  // namespace dcs
