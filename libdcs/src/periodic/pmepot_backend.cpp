// The pmepot backend (dcs/periodic/pmepot_backend.hpp): smooth PME's reciprocal part at
// PMEpot's parameters on the map's own grid, read plane by plane.
#include "dcs/periodic/pmepot_backend.hpp"

#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/parallel.hpp"
#include "dcs/periodic/ewald_backend.hpp"
#include "dcs/periodic/ewald_reference.hpp"
#include "dcs/periodic/periodic_potential.hpp"
#include "dcs/periodic/pme.hpp"
#include "dcs/timer.hpp"
#include "dcs/wrapping_backend.hpp"
#include "slab_planes.hpp"

namespace dcs::periodic {
namespace {

/// The float64 reference's k cutoff: exp(-k²/4β²) = 1e-13.
double reference_k_cutoff() { return 2.0 * kPmepotBeta * std::sqrt(-std::log(1e-13)); }

class PmepotBackend final : public WrappingBackend {
 public:
  PmepotBackend(std::unique_ptr<PotentialBackend> exact, const BackendOptions& options)
      : WrappingBackend(std::move(exact), "make_pmepot_backend"),
        threads_(resolve_threads(options.threads)) {}

  std::string name() const override { return wrapped().name() + "+pmepot"; }
  std::string kernel_name() const override {
    return fmt::format("pmepot (smooth PME reciprocal part, beta {:g} 1/A, order {})", kPmepotBeta,
                       kPmepotOrder);
  }

  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override {
    const auto start = std::chrono::steady_clock::now();
    check_ewald_input(system, physics);
    // The mesh has the grid's counts along the cell vectors of this system's cell: on the
    // cell's grid (the command line allows no other) it is the grid itself, as PMEpot's; a
    // trajectory's later frames keep it over their own cells.
    mesh_ = {};
    for (std::size_t a = 0; a < 3; ++a) {
      if (grid.counts[a] < 2 * kPmepotOrder || grid.counts[a] > (1 << 20))
        throw UsageError(fmt::format(
            "--preset pmepot: {} points along the cell's {} vector; the PME mesh needs at "
            "least {} (a finer --spacing or a larger --grid)",
            grid.counts[a], "abc"[a], 2 * kPmepotOrder));
      mesh_[a] = static_cast<int>(grid.counts[a]);
    }
    pme_.reset();
    pme_.emplace(system.cell, kPmepotBeta, mesh_, kPmepotOrder);
    pme_->solve(positions_of(system), charges_of(system), threads_);
    grid_ = grid;
    factor_ = coulomb_factor(physics);
    timings_ = {};
    timings_.upload = seconds_since(start);
  }

  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override {
    if (!pme_) throw UsageError("pmepot: compute() called before prepare()");
    check_slab("pmepot", slab, grid_);
    detail::fill_slab_planes(grid_, slab, factor_, out, plane_stats, timings_,
                             [&](std::span<const Vec3> points, std::span<double> values) {
                               pme_->potential_at(points, values, threads_);
                             });
  }

  // Statistics, differences, timings, the slab and points hints: the wrapped exact backend's.
  // Points are refused: the map is PMEpot's smoothed one (check_config() refuses them first).
  void prepare_points(const System&, const Physics&) override {
    throw UsageError(
        "--preset pmepot makes maps (PMEpot's); for potentials at points or atoms use "
        "--periodic, the exact periodic potential");
  }
  void compute_points(const Vec3*, const std::uint32_t*, std::size_t, float*) override {
    throw UsageError("--preset pmepot makes maps only");
  }

  /// The float64 reciprocal-only sum at PMEpot's β, the oracle of the measured error.
  std::string reference_points(const System& system, const Physics& physics, const Vec3* points,
                               std::size_t n, double* out, unsigned threads) override {
    check_ewald_input(system, physics);
    EwaldParameters parameters;
    parameters.beta = kPmepotBeta;
    parameters.k_cutoff = reference_k_cutoff();
    const std::vector<double> values =
        reciprocal_reference_at(positions_of(system), charges_of(system), system.cell,
                                std::span<const Vec3>(points, n), parameters, threads);
    const double factor = coulomb_factor(physics);
    for (std::size_t i = 0; i < n; ++i) out[i] = factor * values[i];
    return fmt::format(
        "CPU, {} threads, float64 reciprocal Ewald sum (beta {:g} 1/A, |k| up to "
        "{:.3f} 1/A)",
        resolve_threads(threads), kPmepotBeta, parameters.k_cutoff);
  }

 private:
  unsigned threads_;
  std::array<int, 3> mesh_{};
  std::optional<PmeReciprocal> pme_;
  GridSpec grid_;
  double factor_ = 0.0;
};

}  // namespace

std::unique_ptr<PotentialBackend> make_pmepot_backend(std::unique_ptr<PotentialBackend> exact,
                                                      const BackendOptions& options) {
  return std::make_unique<PmepotBackend>(std::move(exact), options);
}

}  // namespace dcs::periodic
