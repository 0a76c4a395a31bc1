// The host CPU as the CPU backends see it: how many threads, which model, and a minimal
// fork-join loop over std::thread. Work is split into contiguous, equal ranges, so results
// never depend on timing; exceptions in a worker are rethrown in the caller.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace dcs {

/// Number of worker threads to use for a request of `threads` (0: all hardware threads).
unsigned resolve_threads(unsigned threads) noexcept;

/// The CPU's model name from /proc/cpuinfo, or "CPU" when unknown (for device descriptions
/// and benchmark reports).
std::string cpu_model_name();

/// Calls body(begin, end) on `threads` threads over [0, n) split into contiguous ranges of
/// `grain`-aligned size; blocks until all return.
void parallel_for(std::size_t n, unsigned threads,
                  const std::function<void(std::size_t begin, std::size_t end)>& body,
                  std::size_t grain = 1);

}  // namespace dcs
