// One MSM prepare(): the checks, the lattice hierarchy solved to the finest lattice's potential,
// the atoms in bins and each map axis' interpolation weights. The CPU backend (msm_backend.cpp)
// computes from it directly; msm_prepare_host() (dcs/msm.hpp) copies it out (the CUDA tests'
// oracle).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/msm.hpp"
#include "dcs/parallel.hpp"
#include "lattice.hpp"
#include "short_range.hpp"
#include "splitting.hpp"

namespace dcs::msm {

/// The basis weights of every grid coordinate on one axis: base index and `order` weights.
struct AxisWeights {
  std::vector<long> base;
  std::vector<double> w;
};

AxisWeights axis_weights(const Basis& basis, double origin, double spacing, std::int64_t n,
                         double lattice_origin, double h);

struct Prepared {
  GridSpec grid;
  double factor = 0.0;  ///< the unit's Coulomb factor
  std::optional<LongRange> long_range;
  std::optional<ShortRange> short_range;
  std::array<AxisWeights, 3> weights;

  /// Throws UsageError for no atoms, a model other than Coulomb, a min_distance >= a/2, or
  /// lattices beyond `memory_limit` bytes (0: none given) or the memory available now.
  void build(const System& system, const GridSpec& grid, const Physics& physics,
             const MsmParameters& parameters, ThreadPool& pool, std::size_t memory_limit);
};

}  // namespace dcs::msm
