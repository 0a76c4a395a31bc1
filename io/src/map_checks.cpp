#include "map_checks.hpp"

#include <cmath>

#include <fmt/format.h>

namespace dcs::io::detail {

void check_map_input(const std::string& path, const float* values, const GridSpec& grid) {
  check_map_grid(path, grid);
  if (values == nullptr) throw IoError(fmt::format("cannot write {}: no map values", path));
}

void check_map_grid(const std::string& path, const GridSpec& grid) {
  for (std::size_t axis = 0; axis < 3; ++axis) {
    if (grid.counts[axis] < 1)
      throw IoError(fmt::format("cannot write {}: grid count {} along axis {} is not positive",
                                path, grid.counts[axis], axis));
    if (!(std::isfinite(grid.spacing[axis]) && grid.spacing[axis] > 0.0) ||
        !std::isfinite(grid.origin[axis]))
      throw IoError(
          fmt::format("cannot write {}: grid origin/spacing along axis {} is not "
                      "finite and positive",
                      path, axis));
  }
}

IoError nonfinite_value_error(const std::string& path, float value, const GridSpec& grid,
                              std::size_t flat) {
  const auto nx = static_cast<std::size_t>(grid.nx());
  const std::size_t plane = grid.plane_points();
  return IoError(
      fmt::format("error writing {}: refusing to write a non-finite value ({}) at grid point "
                  "({}, {}, {}); maps must be finite",
                  path, value, flat % nx, (flat % plane) / nx, flat / plane));
}

}  // namespace dcs::io::detail
