// The longest line any text reader accepts (the line source's bound, io/src/line_source.hpp):
// endless or binary input (/dev/zero, a DCD given as a PQR) fails fast in bounded memory.
#pragma once

#include <cstddef>

namespace dcs::io {

/// The longest line the readers accept, in bytes without the line ending (a PQR line has about
/// 80 characters; the bound is generous for free-format writers).
inline constexpr std::size_t kMaxLineBytes = std::size_t{64} * 1024;

}  // namespace dcs::io
