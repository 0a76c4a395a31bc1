// One MSM prepare() (prepared.hpp), shared by the CPU backend and msm_prepare_host().
#include "prepared.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dcs/error.hpp"
#include "dcs/msm_plan.hpp"

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
                     const MsmParameters& parameters, ThreadPool& pool, std::size_t memory_limit) {
  check_msm_input(system, physics, parameters);
  grid = grid_;
  factor = coulomb_factor(physics);
  // The lattice covers the map and the charged atoms (msm_box): atoms of charge 0 add nothing,
  // so they are left out; its size is checked before anything is allocated.
  const MsmBox box = msm_box(system, grid);
  check_msm_host_memory(parameters, box, msm_memory(parameters, box, grid, pool.size()),
                        memory_limit);
  std::vector<PointCharge> atoms;
  atoms.reserve(std::max<std::size_t>(box.charged, 1));
  for (const Atom& atom : system.atoms)
    if (atom.charge != 0.0)
      atoms.push_back({atom.position[0], atom.position[1], atom.position[2], atom.charge});
  if (atoms.empty()) atoms.push_back({grid.origin[0], grid.origin[1], grid.origin[2], 0.0});
  const Vec3 &lower = box.lower, &upper = box.upper;
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
  prepared.build(system, grid, physics, parameters, pool, 0);
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
