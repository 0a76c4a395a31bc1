// The memory plan of a map: how many planes a slab holds and how many slab buffers the host
// keeps, within the memory budget.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dcs/grid.hpp"
#include "dcs/pipeline/engine.hpp"
#include "dcs/pipeline/run_config.hpp"

namespace dcs::pipeline {

/// The memory the pipeline may hold: --memory-limit, else half of what is available now.
std::size_t memory_budget(const ComputeRequest& compute);

/// Slab size and buffer count for `workers` within `budget` bytes (less `reserved` for the
/// sinks and the atoms). Slabs are multiples of `multiple` planes; a GPU wants at least
/// `min_points` per slab; several slabs per worker (of all `all_workers` of every MPI rank
/// sharing the map, when given) keep dynamic scheduling balanced. Throws UsageError when the
/// budget cannot hold the smallest plan.
MapPlan make_plan(const GridSpec& grid, std::size_t workers, std::int64_t multiple,
                  std::size_t min_points, std::size_t budget, std::size_t reserved,
                  double checkpoint_seconds, std::size_t all_workers = 0);

}  // namespace dcs::pipeline
