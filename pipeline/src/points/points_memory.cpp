// The points run's memory estimate (points_memory.hpp).
#include "points_memory.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/sysinfo.hpp"
#include "dcs/types.hpp"

namespace dcs::pipeline {

PointsMemory points_memory(const PointsRequest& request, const ComputeRequest& compute,
                           std::size_t atoms, std::size_t workers) {
  PointsMemory m;
  m.per_point = 24 + (8 + 24) + (4 + 4) + (24 + 4);
  if (request.source == PointsRequest::Source::kAtoms) m.per_point += 4 + 4;
  if (request.source == PointsRequest::Source::kMesh)
    m.per_point += 2 * 24 + (request.offset != 0.0 ? 2 * 24 : 0);
  m.fixed = atoms * (sizeof(Atom) + 32 * workers) + (std::size_t{8} << 20);
  const auto consider = [&](std::size_t bytes, const std::string& text) {
    if (bytes > 0 && (m.bound == 0 || bytes < m.bound)) {
      m.bound = bytes;
      m.have = text;
    }
  };
  if (compute.memory_limit)
    consider(*compute.memory_limit,
             fmt::format("--memory-limit allows {}", format_bytes(*compute.memory_limit)));
  const std::size_t available = available_memory_bytes();
  consider(available, fmt::format("only {} of memory is available now", format_bytes(available)));
  const std::size_t address_space = address_space_left_bytes();
  consider(address_space, fmt::format("the address-space limit (ulimit -v) leaves {}",
                                      format_bytes(address_space)));
  return m;
}

std::size_t most_points(const PointsMemory& memory) {
  if (memory.bound == 0) return SIZE_MAX;
  return memory.bound > memory.fixed ? (memory.bound - memory.fixed) / memory.per_point : 0;
}

void check_points_memory(const PointsMemory& memory, std::size_t points,
                         const std::string& source) {
  if (points <= most_points(memory)) return;
  const double need = static_cast<double>(points) * static_cast<double>(memory.per_point) +
                      static_cast<double>(memory.fixed);
  throw UsageError(fmt::format(
      "{}: {} points would need about {} ({} bytes a point: the points, their Z-ordered copy, "
      "the values and the output table; plus {} for the atoms, the workers' copies of them and "
      "the writers), but {}: at most {} points fit; split the points over several runs, or "
      "raise --memory-limit",
      source, points, format_bytes(static_cast<std::size_t>(need)), memory.per_point,
      format_bytes(memory.fixed), memory.have, most_points(memory)));
}

}  // namespace dcs::pipeline
