#include "dcs/spatial_order.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

namespace dcs {
namespace {

/// The 21 low bits of v spread to every third bit (bit i to bit 3i).
std::uint64_t spread_bits(std::uint64_t v) {
  v &= 0x1FFFFF;
  v = (v | v << 32) & 0x1F00000000FFFFull;
  v = (v | v << 16) & 0x1F0000FF0000FFull;
  v = (v | v << 8) & 0x100F00F00F00F00Full;
  v = (v | v << 4) & 0x10C30C30C30C30C3ull;
  v = (v | v << 2) & 0x1249249249249249ull;
  return v;
}

}  // namespace

std::vector<std::size_t> spatial_order(const std::vector<Vec3>& points) {
  Vec3 lo{HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi{-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  for (const Vec3& p : points)
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::fmin(lo[a], p[a]);
      hi[a] = std::fmax(hi[a], p[a]);
    }
  double extent = 0.0;
  for (int a = 0; a < 3; ++a) extent = std::fmax(extent, hi[a] - lo[a]);
  const double scale = extent > 0.0 ? double((1u << 21) - 1) / extent : 0.0;
  std::vector<std::uint64_t> code(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::uint64_t c = 0;
    for (int a = 0; a < 3; ++a) {
      const double cell = std::clamp((points[i][a] - lo[a]) * scale, 0.0, double((1u << 21) - 1));
      c |= spread_bits(static_cast<std::uint64_t>(std::isfinite(cell) ? cell : 0.0)) << a;
    }
    code[i] = c;
  }
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return code[x] < code[y]; });
  return order;
}

}  // namespace dcs
