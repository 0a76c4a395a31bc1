// The ewald backend (dcs/periodic/ewald_backend.hpp): one PeriodicPotential per prepare(), read
// plane by plane for a map and at the atoms for --at-atoms. Every value is one point's own sum
// (real space over a fixed bin order, the PME mesh interpolated), so it never depends on the
// slab, the worker or the thread count.
#include "dcs/periodic/ewald_backend.hpp"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/method.hpp"
#include "dcs/parallel.hpp"
#include "dcs/periodic/ewald_reference.hpp"
#include "dcs/periodic/periodic_potential.hpp"
#include "dcs/timer.hpp"
#include "dcs/wrapping_backend.hpp"
#include "slab_planes.hpp"

namespace dcs::periodic {
namespace {

constexpr double kMinTarget = 1e-8, kMaxTarget = 1e-2;

class EwaldBackend final : public WrappingBackend {
 public:
  EwaldBackend(std::unique_ptr<PotentialBackend> exact, const PeriodicSettings& settings,
               const BackendOptions& options)
      : WrappingBackend(std::move(exact), "make_ewald_backend"), settings_(settings) {
    settings_.threads = resolve_threads(options.threads);
  }

  std::string name() const override { return wrapped().name() + "+ewald"; }
  std::string kernel_name() const override {
    return "ewald (real space on a cell list + smooth PME)";
  }

  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override {
    const auto start = std::chrono::steady_clock::now();
    timings_ = {};
    build(system, physics);
    grid_ = grid;
    timings_.upload = seconds_since(start);
  }

  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override {
    if (!potential_) throw UsageError("ewald: compute() called before prepare()");
    check_slab("ewald", slab, grid_);
    detail::fill_slab_planes(grid_, slab, factor_, out, plane_stats, timings_,
                             [&](std::span<const Vec3> points, std::span<double> values) {
                               potential_->potential_at(points, values);
                             });
  }

  // Points: the same potential; at an atom (skip) its own n = 0 term left out and the Ewald
  // self term added (potential_at_atoms(), computed once per prepare_points()).
  void prepare_points(const System& system, const Physics& physics) override {
    build(system, physics);
    at_atoms_ = potential_->potential_at_atoms();
  }

  void compute_points(const Vec3* points, const std::uint32_t* skip, std::size_t n,
                      float* out) override {
    if (!potential_) throw UsageError("ewald: compute_points() called before prepare_points()");
    std::vector<Vec3> free;
    std::vector<std::size_t> where;
    for (std::size_t i = 0; i < n; ++i) {
      if (skip != nullptr && skip[i] != kNoAtom) {
        if (skip[i] >= at_atoms_.size())
          throw InternalError(
              fmt::format("ewald: point {} skips atom {} of {}", i, skip[i], at_atoms_.size()));
        out[i] = static_cast<float>(factor_ * at_atoms_[skip[i]]);
      } else {
        free.push_back(points[i]);
        where.push_back(i);
      }
    }
    if (free.empty()) return;
    const std::vector<double> values = potential_->potential_at(free);
    for (std::size_t m = 0; m < free.size(); ++m)
      out[where[m]] = static_cast<float>(factor_ * values[m]);
  }

  /// The float64 Ewald sum at reference_parameters(), the oracle of the measured error.
  std::string reference_points(const System& system, const Physics& physics, const Vec3* points,
                               std::size_t n, double* out, unsigned threads) override {
    return ewald_reference_points(settings_, system, physics, points, n, out, threads);
  }

 private:
  void build(const System& system, const Physics& physics) {
    check_ewald_input(system, physics);
    PeriodicSettings settings = settings_;
    settings.min_distance = physics.min_distance;
    potential_.reset();
    potential_.emplace(positions_of(system), charges_of(system), system.cell, settings);
    factor_ = coulomb_factor(physics);
  }

  PeriodicSettings settings_;
  std::optional<PeriodicPotential> potential_;
  std::vector<double> at_atoms_;
  GridSpec grid_;
  double factor_ = 0.0;
};

}  // namespace

PeriodicSettings ewald_settings(double target) {
  if (!(target >= kMinTarget && target <= kMaxTarget))
    throw UsageError(fmt::format("--ewald-error must be a number from {:g} to {:g}, got {:g}",
                                 kMinTarget, kMaxTarget, target));
  PeriodicSettings settings;
  settings.accuracy = target;
  if (const char* testing = std::getenv("DCS_EWALD_TESTING_ACCURACY");
      testing != nullptr && *testing != '\0') {
    char* end = nullptr;
    const double accuracy = std::strtod(testing, &end);
    if (end == testing || *end != '\0')
      throw UsageError(fmt::format("DCS_EWALD_TESTING_ACCURACY={} is not a number", testing));
    settings.accuracy = accuracy;
  }
  return settings;
}

void check_ewald_input(const System& system, const Physics& physics) {
  if (system.atoms.empty()) throw UsageError("no atoms to compute");
  if (!traits(Method::kEwald).supports(pair_term(physics).kind))
    throw UsageError("--periodic (--method ewald) supports the Coulomb model only; the " +
                     describe_model(physics) +
                     " model has no periodic form here: leave out --ionic-strength and "
                     "--dielectric-model distance, or drop --periodic");
  if (!system.cell.is_periodic())
    throw UsageError(fmt::format(
        "{}: --periodic needs the unit cell, and {}: give it with --box a,b,c[,alpha,beta,gamma] "
        "(Å, degrees), a CRYST1 record or a trajectory whose frames carry a box",
        system.source_path.empty() ? std::string("the input") : system.source_path,
        system.cell.why_unusable() ? "its cell is unusable: " + *system.cell.why_unusable()
                                   : std::string("it has none")));
}

std::string ewald_reference_points(const PeriodicSettings& run_settings, const System& system,
                                   const Physics& physics, const Vec3* points, std::size_t n,
                                   double* out, unsigned threads) {
  check_ewald_input(system, physics);
  PeriodicSettings settings = run_settings;
  settings.min_distance = physics.min_distance;
  const EwaldParameters parameters = reference_parameters(system.cell, settings);
  const std::vector<double> values = ewald_reference_at(
      positions_of(system), charges_of(system), system.cell, std::span<const Vec3>(points, n),
      parameters, physics.min_distance, threads);
  const double factor = coulomb_factor(physics);
  for (std::size_t i = 0; i < n; ++i) out[i] = factor * values[i];
  return fmt::format("CPU, {} threads, float64 Ewald sum ({})", resolve_threads(threads),
                     parameters.describe());
}

EwaldParameters ewald_parameters(const UnitCell& cell, double target) {
  return choose_ewald_parameters(cell, ewald_settings(target));
}

std::unique_ptr<PotentialBackend> make_ewald_backend(std::unique_ptr<PotentialBackend> exact,
                                                     const PeriodicSettings& settings,
                                                     const BackendOptions& options) {
  return std::make_unique<EwaldBackend>(std::move(exact), settings, options);
}

}  // namespace dcs::periodic
