// One MSM prepare() (prepared.hpp), shared by the CPU backend and msm_prepare_host().
#include "prepared.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dcs/error.hpp"

namespace dcs::msm {

AxisWeights axis_weights(const Basis& basis, double origin, double spacing, std::int64_t n,
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

void Prepared::build(const System& system, const GridSpec& grid_, const Physics& physics,
                     const MsmParameters& parameters, ThreadPool& pool) {
  check_msm_input(system, physics, parameters);
  grid = grid_;
  factor = coulomb_factor(physics);
  std::vector<PointCharge> atoms;
  atoms.reserve(system.atoms.size());
  for (const Atom& atom : system.atoms)
    atoms.push_back({atom.position[0], atom.position[1], atom.position[2], atom.charge});
  // The lattice covers the atoms and the map.
  Vec3 lower = grid.origin, upper = grid.point(grid.nx() - 1, grid.ny() - 1, grid.nz() - 1);
  for (const PointCharge& atom : atoms) {
    const double p[3] = {atom.x, atom.y, atom.z};
    for (int d = 0; d < 3; ++d) {
      lower[d] = std::min(lower[d], p[d]);
      upper[d] = std::max(upper[d], p[d]);
    }
  }
  // The finest lattice, the coarser ones (1/7 more) and a finest-sized temporary: in doubles.
  double lattice_points = 1.0;
  for (int d = 0; d < 3; ++d)
    lattice_points *= std::floor((upper[d] - lower[d]) / parameters.spacing) + parameters.order;
  check_fits_in_memory(static_cast<std::size_t>(lattice_points * 8.0 * (1.0 + 1.0 / 7.0 + 2.0)),
                       "the MSM lattices (" + describe(parameters) + ")");
  const Basis basis(parameters.order);
  const Splitting splitting(parameters.split);
  long_range.emplace(basis, splitting, parameters.spacing, parameters.cutoff);
  long_range->solve(atoms, lower, upper, pool);
  short_range.emplace(splitting, parameters.cutoff, physics.min_distance);
  short_range->bin(atoms);
  const Vec3& o = long_range->origin();
  const double h = parameters.spacing;
  for (int d = 0; d < 3; ++d)
    weights[static_cast<std::size_t>(d)] =
        axis_weights(basis, grid.origin[d], grid.spacing[d], grid.counts[d], o[d], h);
}

}  // namespace dcs::msm

namespace dcs {

MsmHostData msm_prepare_host(const System& system, const GridSpec& grid, const Physics& physics,
                             const MsmParameters& parameters, ThreadPool& pool) {
  validate(parameters);
  msm::Prepared prepared;
  prepared.build(system, grid, physics, parameters, pool);
  MsmHostData data;
  data.factor = prepared.factor;
  data.cutoff = parameters.cutoff;
  data.min_distance = physics.min_distance;
  data.order = parameters.order;
  const msm::Splitting splitting(parameters.split);
  for (int n = 0; n <= splitting.k; ++n)
    data.gamma[static_cast<std::size_t>(n)] = splitting.c[static_cast<std::size_t>(n)];
  const msm::Lattice& e = prepared.long_range->finest();
  data.lattice_lo = e.lo;
  data.lattice_n = e.n;
  data.lattice = e.v;
  for (std::size_t d = 0; d < 3; ++d) {
    data.base[d] = std::move(prepared.weights[d].base);
    data.weights[d] = std::move(prepared.weights[d].w);
  }
  const msm::ShortRange& s = *prepared.short_range;
  data.bin_lower = s.lower();
  data.bin_side = s.cell();
  data.bins = s.bins();
  data.bin_start = s.starts();
  data.atoms.reserve(s.sorted().size());
  for (const msm::PointCharge& atom : s.sorted())
    data.atoms.push_back({atom.x, atom.y, atom.z, atom.q});
  return data;
}

}  // namespace dcs
