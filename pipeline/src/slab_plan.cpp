// The memory plan of a map (slab_plan.hpp).
#include "slab_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/sysinfo.hpp"

namespace dcs::pipeline {
namespace {

/// Bytes of one slab buffer the plan aims for: large enough that a GPU launch and a write are
/// long compared with their overheads, small enough that several fit in a modest budget.
constexpr std::size_t kTargetSlabBytes = std::size_t{64} << 20;

}  // namespace

std::size_t memory_budget(const ComputeRequest& compute) {
  if (compute.memory_limit) return *compute.memory_limit;
  const std::size_t available = available_memory_bytes();
  return available > 0 ? available / 2 : std::size_t{4} << 30;
}

MapPlan make_plan(const GridSpec& grid, std::size_t workers, std::int64_t multiple,
                  std::size_t min_points, std::size_t budget, std::size_t reserved,
                  double checkpoint_seconds, std::size_t all_workers) {
  const std::size_t plane_bytes = grid.plane_points() * sizeof(float);
  const std::int64_t nz = grid.nz();
  auto round_up = [&](std::int64_t planes) {
    return std::max<std::int64_t>(1, (planes + multiple - 1) / multiple) * multiple;
  };
  std::int64_t step = round_up(static_cast<std::int64_t>(
      std::max<std::size_t>(1, kTargetSlabBytes / std::max<std::size_t>(plane_bytes, 1))));
  // Enough slabs for every worker to take several (and for progress and interrupts).
  const auto wanted_slabs =
      static_cast<std::int64_t>(std::max<std::size_t>(8, 4 * std::max(workers, all_workers)));
  step = std::min(step, round_up((nz + wanted_slabs - 1) / wanted_slabs));
  step = std::max(
      step, round_up(static_cast<std::int64_t>((min_points + grid.plane_points() - 1) /
                                               std::max<std::size_t>(grid.plane_points(), 1))));
  step = std::min(step, round_up(nz));

  MapPlan plan;
  plan.checkpoint_seconds = checkpoint_seconds;
  const std::size_t usable = budget > reserved ? budget - reserved : 0;
  // Each worker computes into one buffer while the writer drains another and one waits.
  const std::size_t ideal = 2 * workers + 2, minimum = workers + 1;
  for (;;) {
    const std::size_t slab_bytes = static_cast<std::size_t>(std::min(step, nz)) * plane_bytes;
    const std::size_t fit = slab_bytes > 0 ? usable / slab_bytes : ideal;
    if (fit >= minimum) {
      plan.step = step;
      plan.buffers = std::min(ideal, fit);
      return plan;
    }
    if (step <= multiple) break;
    step = std::max<std::int64_t>(multiple, round_up(step / 2));
  }
  const std::size_t need =
      static_cast<std::size_t>(std::min<std::int64_t>(multiple, nz)) * plane_bytes * minimum +
      reserved;
  throw UsageError(fmt::format(
      "--memory-limit {}: too small for this grid: {} worker(s) need at least {} slab buffers of "
      "{} plane(s) of {} each, plus {} for the outputs ({} in all)",
      format_bytes(budget), workers, minimum, std::min<std::int64_t>(multiple, nz),
      format_bytes(plane_bytes), format_bytes(reserved), format_bytes(need)));
}

}  // namespace dcs::pipeline
