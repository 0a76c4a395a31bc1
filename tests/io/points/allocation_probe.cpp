// The largest single allocation made through operator new, so that tests can show that a file
// declaring huge counts is refused before anything of that size is allocated.
#include <atomic>
#include <cstdlib>
#include <new>

#include "allocation_probe.hpp"

namespace {
std::atomic<std::size_t> largest{0};

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

namespace dcs::test {
void reset_largest_allocation() noexcept { largest.store(0); }
std::size_t largest_allocation() noexcept { return largest.load(); }
}  // namespace dcs::test
