// The red-white-blue ramp of surfaces and atoms (dcs/io/colour_map.hpp).
#include "dcs/io/colour_map.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/colour_range.hpp"

namespace dcs::io {

ColourMap::ColourMap(double range) : range_(range) {
  if (!(std::isfinite(range) && range > 0.0))
    throw UsageError(fmt::format("colour range must be a positive number, got {}", range));
}

Rgb ColourMap::colour(double value) const noexcept {
  if (std::isnan(value)) return {128, 128, 128};
  const double t = std::fmin(1.0, std::fabs(value) / range_);
  // White fades into one primary: the other two channels fall from 255 to 0.
  const auto fade = static_cast<std::uint8_t>(std::lround(255.0 * (1.0 - t)));
  if (value < 0.0) return {255, fade, fade};
  return {fade, fade, 255};
}

std::string ColourMap::describe(const std::string& unit) const {
  return fmt::format("red-white-blue, red at -R, white at 0, blue at +R (R = {:g} {})", range_,
                     unit);
}

double symmetric_range(const std::vector<float>& values, double percentile) {
  const bool any = std::any_of(values.begin(), values.end(),
                               [](float v) { return std::isfinite(v) && v != 0.0f; });
  if (!any) return 1.0;
  AbsValueHistogram histogram;
  histogram.add(values.data(), values.size());
  return histogram.percentile(percentile);
}

}  // namespace dcs::io
