// MSM behind the PotentialBackend interface (dcs/msm.hpp). prepare() bins the atoms and solves
// the lattice hierarchy once; compute_slab() gives each map point its short-range sum (exact
// over the atoms within a) plus the finest lattice interpolated, both in a fixed order, so a
// point's value never depends on its slab or on the thread count. The wrapped exact backend
// does the rest (dcs/wrapping_backend.hpp); points with --method msm are refused by
// check_config() (the lattice would have to cover points not known in advance, and a skipped
// atom's own long-range part would have to be taken out at its position).
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
#include "dcs/wrapping_backend.hpp"
#include "prepared.hpp"

namespace dcs {
namespace {

class MsmBackend final : public WrappingBackend {
 public:
  MsmBackend(std::unique_ptr<PotentialBackend> exact, const MsmParameters& parameters,
             const BackendOptions& options, std::size_t memory_limit)
      : WrappingBackend(std::move(exact), "make_msm_backend"),
        parameters_(parameters),
        memory_limit_(memory_limit),
        pool_(resolve_threads(options.threads)) {
    validate(parameters_);
  }

  std::string name() const override { return wrapped().name() + "+msm"; }
  std::string kernel_name() const override { return describe(parameters_); }
  /// The target: a relative RMS error, so the largest error against max|V| (which sits at an
  /// atom) is below it too.
  double tolerance() const override { return parameters_.target; }

  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override {
    const auto start = std::chrono::steady_clock::now();
    timings_ = {};
    require_axis_aligned(grid, "the msm backend");
    prepared_.build(system, grid, physics, parameters_, pool_, memory_limit_);
    // Blocks of points along x about a long: a point's candidates are few more than its own.
    block_ = std::max<std::int64_t>(
        1, std::min<std::int64_t>(64,
                                  static_cast<std::int64_t>(parameters_.cutoff / grid.spacing[0])));
    timings_.upload = seconds_since(start);
  }

  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override {
    if (!prepared_.long_range) throw UsageError("msm: compute() called before prepare()");
    const GridSpec& grid = prepared_.grid;
    const double factor = prepared_.factor;
    const msm::ShortRange& short_range = *prepared_.short_range;
    const std::array<msm::AxisWeights, 3>& weights = prepared_.weights;
    check_slab("msm", slab, grid);
    const auto start = std::chrono::steady_clock::now();
    const std::size_t rows = static_cast<std::size_t>(slab.z_count * grid.ny());
    const msm::Lattice& e = prepared_.long_range->finest();
    const int p = parameters_.order;
    pool_.parallel_for(rows, [&](std::size_t begin, std::size_t end) {
      std::vector<double> line(static_cast<std::size_t>(e.n[0]));
      msm::Candidates candidates;
      for (std::size_t row = begin; row < end; ++row) {
        const std::int64_t k = slab.z_begin + static_cast<std::int64_t>(row) / grid.ny();
        const std::int64_t j = static_cast<std::int64_t>(row) % grid.ny();
        // The lattice contracted over y and z for this row: line[m] = sum wy wz e(m, ., .).
        std::fill(line.begin(), line.end(), 0.0);
        const long by = weights[1].base[static_cast<std::size_t>(j)];
        const long bz = weights[2].base[static_cast<std::size_t>(k)];
        const double* wy = &weights[1].w[static_cast<std::size_t>(j) * p];
        const double* wz = &weights[2].w[static_cast<std::size_t>(k) * p];
        for (int kk = 0; kk < p; ++kk)
          for (int jj = 0; jj < p; ++jj) {
            const double w = wz[kk] * wy[jj];
            const double* src = &e.v[e.offset(e.lo[0], by + jj, bz + kk)];
            for (std::size_t m = 0; m < line.size(); ++m) line[m] += w * src[m];
          }
        const Vec3 row_start = grid.point(0, j, k);
        float* out_row = out + row * static_cast<std::size_t>(grid.nx());
        for (std::int64_t i0 = 0; i0 < grid.nx(); i0 += block_) {
          const std::int64_t i1 = std::min(grid.nx(), i0 + block_);
          short_range.gather(grid.point(i0, j, k)[0], grid.point(i1 - 1, j, k)[0], row_start[1],
                             row_start[2], candidates);
          for (std::int64_t i = i0; i < i1; ++i) {
            const double* wx = &weights[0].w[static_cast<std::size_t>(i) * p];
            const std::size_t bx =
                static_cast<std::size_t>(weights[0].base[static_cast<std::size_t>(i)] - e.lo[0]);
            double lr = 0.0;
            for (int ii = 0; ii < p; ++ii) lr += wx[ii] * line[bx + static_cast<std::size_t>(ii)];
            const double sr = short_range.sum(grid.point(i, j, k)[0], candidates);
            out_row[i] = static_cast<float>(factor * (sr + lr));
          }
        }
      }
    });
    timings_.kernels += seconds_since(start);
    // Each plane reduced on its own, as the CPU backends do (backend.hpp's determinism).
    const auto stats_start = std::chrono::steady_clock::now();
    const std::size_t plane = grid.plane_points();
    pool_.parallel_for(static_cast<std::size_t>(slab.z_count),
                       [&](std::size_t begin, std::size_t end) {
                         for (std::size_t q = begin; q < end; ++q)
                           plane_stats[q] = cpu_statistics(out + q * plane, plane);
                       });
    timings_.statistics += seconds_since(stats_start);
  }

 private:
  MsmParameters parameters_;
  std::size_t memory_limit_;  ///< bytes prepare() may take (0: none given)
  ThreadPool pool_;
  msm::Prepared prepared_;
  std::int64_t block_ = 1;
};

}  // namespace

std::unique_ptr<PotentialBackend> make_msm_backend(std::unique_ptr<PotentialBackend> exact,
                                                   const MsmParameters& parameters,
                                                   const BackendOptions& options,
                                                   std::size_t memory_limit) {
  return std::make_unique<MsmBackend>(std::move(exact), parameters, options, memory_limit);
}

}  // namespace dcs
