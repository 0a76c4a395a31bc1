// --validate: the map compared with the float64 reference at every point of small grids, else
// at a fixed sample that includes the corners and the map's extreme points.
#pragma once

#include <cstddef>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/map.hpp"
#include "dcs/pipeline/run_config.hpp"

namespace dcs::pipeline {

/// Compares the map in `store` (its plane statistics and totals given) with the reference.
Validation validate_map(const RunConfig& config, PotentialBackend& backend, const System& system,
                        const GridSpec& grid, io::MapStore& store,
                        const std::vector<StatsAccum>& plane_stats, const GridStats& stats);

/// Indices of the points compared: every point when points * atoms <= `budget` evaluations,
/// else a deterministic sample of about budget/atoms points (at least 4096) that always
/// includes the eight corners and the points of the minimum and maximum.
std::vector<std::size_t> validation_points(const GridSpec& grid, std::size_t atoms,
                                           std::size_t requested, double budget,
                                           std::size_t index_of_min, std::size_t index_of_max);

}  // namespace dcs::pipeline
