// Points and 3 × 3 matrices in double precision, the vocabulary of every layer.
#pragma once

#include <array>

namespace dcs {

using Vec3 = std::array<double, 3>;
/// Rows are vectors (a cell's m[0] = a, m[1] = b, m[2] = c).
using Mat3 = std::array<Vec3, 3>;

}  // namespace dcs
