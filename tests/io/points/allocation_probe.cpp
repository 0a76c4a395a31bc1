// The largest single allocation made through operator new, so that tests can show that a file
// declaring huge counts is refused before anything of that size is allocated. Not under ASan:
// its own operator new checks new/delete pairing, which a replacement would switch off.
#include <atomic>
#include <cstdlib>
#include <new>

#include "allocation_probe.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define DCS_ALLOCATION_PROBE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DCS_ALLOCATION_PROBE 0
#endif
#endif
#ifndef DCS_ALLOCATION_PROBE
#define DCS_ALLOCATION_PROBE 1
#endif

namespace {
std::atomic<std::size_t> largest{0};
}  // namespace

#if DCS_ALLOCATION_PROBE
namespace {

void* allocate(std::size_t n) {
  std::size_t seen = largest.load(std::memory_order_relaxed);
  while (n > seen && !largest.compare_exchange_weak(seen, n, std::memory_order_relaxed)) {
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace dcs::test {
bool allocation_probe_active() noexcept { return DCS_ALLOCATION_PROBE != 0; }
void reset_largest_allocation() noexcept { largest.store(0); }
std::size_t largest_allocation() noexcept { return largest.load(); }
}  // namespace dcs::test
