// The colours of values on surfaces and atoms: ChimeraX's `coulombic` default, a red-white-blue
// ramp symmetric about zero (red at -range, white at 0, blue at +range, linear in RGB between,
// clamped beyond). ChimeraX uses a fixed ±10 kcal/(mol·e); dcs takes the range from the user or
// from the values (symmetric_range).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dcs::io {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

class ColourMap {
 public:
  /// `range` > 0 and finite, in the values' unit; UsageError otherwise.
  explicit ColourMap(double range);
  double range() const noexcept { return range_; }
  /// Red (255, 0, 0) at <= -range, white at 0, blue (0, 0, 255) at >= +range; a value that is
  /// not finite (NaN) is grey (128, 128, 128).
  Rgb colour(double value) const noexcept;
  /// "red-white-blue, red at -R, white at 0, blue at +R (R = <range> <unit>)".
  std::string describe(const std::string& unit) const;

 private:
  double range_;
};

/// Default percentile of |v| for symmetric_range(). Surface vertices stay a probe radius away
/// from atom centres, so the extremes are real features, not the near-atom spikes that make
/// maps use the 99th; the 95th keeps a few hot spots saturated and the rest readable.
inline constexpr double kSurfaceRangePercentile = 95.0;

/// A range for ColourMap when the user gives none: the `percentile` (0-100) of |v| over the
/// finite values, to within 0.1% (AbsValueHistogram of dcs/io/colour_range.hpp, as map previews
/// use). 1 when there is no finite non-zero value (every colour then white).
double symmetric_range(const std::vector<float>& values,
                       double percentile = kSurfaceRangePercentile);

}  // namespace dcs::io
