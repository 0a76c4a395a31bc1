// Host side of cuda_check.hpp: the --debug-sync switch and the no-throw error log. Kept in a
// .cpp so that spdlog (and fmt) are compiled by the host compiler only.
#include "cuda_check.hpp"

#include <atomic>

#include "dcs/log.hpp"

namespace dcs::cuda::detail {
namespace {
#if defined(DCS_DEBUG_SYNC)
std::atomic<bool> g_debug_sync{true};  // the build option: every launch of the process checks
#else
std::atomic<bool> g_debug_sync{false};
#endif
}  // namespace

bool debug_sync_enabled() noexcept { return g_debug_sync.load(std::memory_order_relaxed); }
void set_debug_sync(bool enabled) noexcept {
  g_debug_sync.store(enabled, std::memory_order_relaxed);
}

void log_cuda_error(const char* what, const char* file, int line, cudaError_t status) noexcept {
  try {
    log().error("CUDA error in {} at {}:{}: {}: {}", what, file, line, cudaGetErrorName(status),
                cudaGetErrorString(status));
  } catch (...) {
    // Logging must never throw out of a destructor.
  }
}

}  // namespace dcs::cuda::detail
