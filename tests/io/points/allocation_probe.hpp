// The largest operator new since the last reset (allocation_probe.cpp replaces operator new).
#pragma once

#include <cstddef>

namespace dcs::test {
bool allocation_probe_active() noexcept;  ///< false under ASan (no replacement)
void reset_largest_allocation() noexcept;
std::size_t largest_allocation() noexcept;
}  // namespace dcs::test
