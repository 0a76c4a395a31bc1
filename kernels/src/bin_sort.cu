// The bin sort's radix sort and bin starts (bin_sort.hpp).
#include "bin_sort.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>

#include "cuda_check.hpp"

namespace dcs::cuda::detail {
namespace {

/// start[b] = the first sorted position whose key is >= b (a binary search per bin; b = count
/// gives n): one thread per bin, so no bin's start waits on a long run of empty bins.
__global__ void __launch_bounds__(kBinThreads)
    starts_kernel(const std::uint32_t* __restrict__ keys, std::size_t n, long long count,
                  std::uint32_t* __restrict__ start) {
  const long long b = blockIdx.x * static_cast<long long>(kBinThreads) + threadIdx.x;
  if (b > count) return;
  std::size_t lo = 0, hi = n;  // the answer is in [lo, hi]
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (static_cast<long long>(keys[mid]) < b) lo = mid + 1;
    else hi = mid;
  }
  start[b] = static_cast<std::uint32_t>(lo);
}

/// The bits a key below `count` uses (at least 1, at most 32).
int key_bits(long long count) {
  int bits = 1;
  while (bits < 32 && (1LL << bits) < count) ++bits;
  return bits;
}

}  // namespace

void BinSort::sort(long long bin_count, StreamView stream) {
  cub::DoubleBuffer<std::uint32_t> key_buffers(keys_.data(), keys_alt_.data());
  cub::DoubleBuffer<std::uint32_t> order_buffers(order_.data(), order_alt_.data());
  const int bits = key_bits(bin_count);
  std::size_t temp_bytes = 0;
  DCS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, key_buffers, order_buffers,
                                                 static_cast<std::int64_t>(n_), 0, bits,
                                                 stream.get()));
  temp_ = DeviceBuffer<unsigned char>(temp_bytes);
  DCS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.data(), temp_bytes, key_buffers,
                                                 order_buffers, static_cast<std::int64_t>(n_), 0,
                                                 bits, stream.get()));
  sorted_keys_ = key_buffers.Current();
  sorted_order_ = order_buffers.Current();
}

void BinSort::starts(long long bin_count, DeviceBuffer<std::uint32_t>& start, StreamView stream,
                     const char* name) const {
  start = DeviceBuffer<std::uint32_t>();
  start = DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(bin_count) + 1);
  starts_kernel<<<bin_blocks(static_cast<std::size_t>(bin_count) + 1), kBinThreads, 0,
                  stream.get()>>>(sorted_keys_, n_, bin_count, start.data());
  DCS_CUDA_CHECK_LAUNCH(name, stream.get());
}

}  // namespace dcs::cuda::detail
