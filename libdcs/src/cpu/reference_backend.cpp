// The float64 CPU reference: the oracle every other backend is checked against. Simplest
// correct loops, sums in input order, never tuned beyond splitting points across threads.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/error.hpp"
#include "dcs/parallel.hpp"
#include "dcs/timer.hpp"

namespace dcs {
namespace {

/// Position and charge only: the loops below stream 32 bytes per atom instead of a whole Atom
/// with its name strings.
struct PointCharge {
  double x, y, z, q;
};

std::vector<PointCharge> point_charges(const System& system) {
  std::vector<PointCharge> charges;
  charges.reserve(system.atoms.size());
  for (const Atom& atom : system.atoms)
    charges.push_back({atom.position[0], atom.position[1], atom.position[2], atom.charge});
  return charges;
}

/// What the loops need of the physics: the factor, r_min^2 and the pair model.
struct Summation {
  double factor = 0.0;
  double min_r2 = 0.0;
  PairTerm term;
};

Summation summation(const Physics& physics) {
  return {coulomb_factor(physics), physics.min_distance * physics.min_distance, pair_term(physics)};
}

template <class Model>
double sum_over_atoms(const std::vector<PointCharge>& charges, double min_r2, const Vec3& point,
                      Model model, std::uint32_t skip) {
  double sum = 0.0;
  for (std::size_t a = 0; a < charges.size(); ++a) {
    if (a == skip) continue;
    const PointCharge& atom = charges[a];
    const double dx = point[0] - atom.x;
    const double dy = point[1] - atom.y;
    const double dz = point[2] - atom.z;
    sum =
        add_coulomb_term(sum, atom.q, dx * dx + dy * dy + dz * dz, min_r2, HardwareRsqrt{}, model);
  }
  return sum;
}

/// The potential at `point` from every atom but `skip` (kNoAtom: none).
double potential_at(const std::vector<PointCharge>& charges, const Summation& s, const Vec3& point,
                    std::uint32_t skip = kNoAtom) {
  switch (s.term.kind) {
    case PairKind::kScreened:
      return s.factor * sum_over_atoms(charges, s.min_r2, point,
                                       ScreenedPair<double>{screened_exponent_scale(s.term.kappa)},
                                       skip);
    case PairKind::kInverseSquare:
      return s.factor * sum_over_atoms(charges, s.min_r2, point, InverseSquarePair{}, skip);
    case PairKind::kCoulomb: break;
  }
  return s.factor * sum_over_atoms(charges, s.min_r2, point, CoulombPair{}, skip);
}

class ReferenceBackend final : public PotentialBackend {
 public:
  explicit ReferenceBackend(const BackendOptions& options) : options_(options) {
    // Both checked against the table: a --kernel or --reduction this backend would silently
    // ignore is a mistake.
    find_variant(BackendKind::CpuReference, VariantKind::Potential, options.kernel);
    find_variant(BackendKind::CpuReference, VariantKind::Reduction, options.reduction);
  }

  std::string name() const override { return "cpu-reference"; }
  std::string kernel_name() const override { return "reference"; }
  std::string reduction_name() const override { return "cpu-serial"; }
  std::string device_name() const override {
    const unsigned threads = resolve_threads(options_.threads);
    return "CPU, " + std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
           ", float64";
  }
  double tolerance() const override { return 1e-12; }

  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override {
    if (system.atoms.empty()) throw UsageError("no atoms to compute");
    timings_ = {};
    charges_ = point_charges(system);
    grid_ = grid;
    physics_ = physics;
    summation_ = summation(physics);
  }

  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override {
    if (charges_.empty()) throw UsageError("cpu-reference: compute() called before prepare()");
    if (slab.z_begin < 0 || slab.z_count < 0 || slab.z_begin + slab.z_count > grid_.nz())
      throw UsageError("cpu-reference: slab [" + std::to_string(slab.z_begin) + ", " +
                       std::to_string(slab.z_begin + slab.z_count) + ") outside the grid's " +
                       std::to_string(grid_.nz()) + " planes");
    const auto start = std::chrono::steady_clock::now();
    const std::size_t rows = static_cast<std::size_t>(slab.z_count * grid_.ny());
    parallel_for(rows, options_.threads, [&](std::size_t begin, std::size_t end) {
      for (std::size_t row = begin; row < end; ++row) {
        const auto k = slab.z_begin + static_cast<std::int64_t>(row) / grid_.ny();
        const auto j = static_cast<std::int64_t>(row) % grid_.ny();
        float* out_row = out + row * static_cast<std::size_t>(grid_.nx());
        for (std::int64_t i = 0; i < grid_.nx(); ++i)
          out_row[i] = static_cast<float>(potential_at(charges_, summation_, grid_.point(i, j, k)));
      }
    });
    timings_.kernels += seconds_since(start);
    const auto stats_start = std::chrono::steady_clock::now();
    plane_statistics(out, grid_.plane_points(), static_cast<std::size_t>(slab.z_count),
                     options_.threads, plane_stats);
    timings_.statistics += seconds_since(stats_start);
  }

  void prepare_points(const System& system, const Physics& physics) override {
    if (system.atoms.empty()) throw UsageError("no atoms to compute");
    timings_ = {};
    charges_ = point_charges(system);
    physics_ = physics;
    summation_ = summation(physics);
  }

  void compute_points(const Vec3* points, const std::uint32_t* skip, std::size_t n,
                      float* out) override {
    if (charges_.empty()) throw UsageError("cpu-reference: compute_points() before prepare");
    const auto start = std::chrono::steady_clock::now();
    parallel_for(n, options_.threads, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i)
        out[i] = static_cast<float>(
            potential_at(charges_, summation_, points[i], skip ? skip[i] : kNoAtom));
    });
    timings_.kernels += seconds_since(start);
  }

  StatsAccum statistics(const float* values, std::size_t n) override {
    const auto start = std::chrono::steady_clock::now();
    const StatsAccum accum = cpu_statistics(values, n);
    timings_.statistics += seconds_since(start);
    return accum;
  }

  DiffAccum difference(const float* values, const double* reference, std::size_t n) override {
    return cpu_difference(values, reference, n);
  }

  BackendTimings timings() const override { return timings_; }

 private:
  BackendOptions options_;
  std::vector<PointCharge> charges_;
  GridSpec grid_;
  Physics physics_;
  Summation summation_;
  BackendTimings timings_;
};

}  // namespace

std::unique_ptr<PotentialBackend> make_cpu_reference_backend(const BackendOptions& options) {
  return std::make_unique<ReferenceBackend>(options);
}

void reference_potential(const System& system, const Physics& physics, const Vec3* points,
                         std::size_t n_points, double* out, unsigned threads) {
  const Summation s = summation(physics);
  const std::vector<PointCharge> charges = point_charges(system);
  parallel_for(n_points, threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t index = begin; index < end; ++index)
      out[index] = potential_at(charges, s, points[index]);
  });
}

}  // namespace dcs
