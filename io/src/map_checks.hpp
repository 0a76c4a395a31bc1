// Checks shared by the map writers (OpenDX, HDF5), so that both refuse the same maps with the
// same words.
#pragma once

#include <cstddef>
#include <string>

#include "dcs/error.hpp"
#include "dcs/grid.hpp"

namespace dcs::io::detail {

/// Throws IoError("cannot write <path>: ...") before anything is created when `values` is null
/// or `grid` has a count below 1, or a spacing or origin that is not finite (spacings must also
/// be positive): such a map cannot be described by either format.
void check_map_input(const std::string& path, const float* values, const GridSpec& grid);
/// check_map_input() without the values.
void check_map_grid(const std::string& path, const GridSpec& grid);

/// The IoError for the non-finite `value` at flat index `flat` (x fastest) of `grid`: maps never
/// hold NaN or inf, and the message names the grid point (i, j, k).
IoError nonfinite_value_error(const std::string& path, float value, const GridSpec& grid,
                              std::size_t flat);

}  // namespace dcs::io::detail
