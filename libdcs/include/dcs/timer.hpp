// Wall-clock stage timing for BackendTimings and the pipeline's provenance.
#pragma once

#include <chrono>

namespace dcs {

using SteadyClock = std::chrono::steady_clock;

/// Seconds elapsed since `start` on the steady clock.
inline double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace dcs
