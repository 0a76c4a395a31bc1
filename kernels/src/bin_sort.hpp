// Items sorted into bins on the device, the step the MSM atoms (msm/atom_bins.cu) and the Ewald
// images (periodic/ghost_atoms.cu) share once each item has its bin's key: a stable radix sort of
// the (key, item index) pairs (cub::DeviceRadixSort::SortPairs keeps equal keys in input order),
// then each bin's first sorted position. The gather of the items into that order is
// bin_sort.cuh's (a template over the item). Plain C++; the kernels are in bin_sort.cu.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device_buffer.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

/// Threads per block of the binning kernels.
constexpr int kBinThreads = 256;

/// Blocks of kBinThreads that cover n items.
inline unsigned bin_blocks(std::size_t n) {
  return static_cast<unsigned>((n + kBinThreads - 1) / kBinThreads);
}

/// n (key, index) pairs sorted by key. The caller's kernel fills keys() and order() (the item's
/// index); sort() orders them; sorted_order() and starts() read the result. Its device memory
/// (16 bytes a pair and cub's workspace) lives as long as it does.
class BinSort {
 public:
  explicit BinSort(std::size_t n) : n_(n), keys_(n), keys_alt_(n), order_(n), order_alt_(n) {}

  std::uint32_t* keys() { return keys_.data(); }
  std::uint32_t* order() { return order_.data(); }

  /// Sorts the pairs by key, stably, on the bits a key below bin_count uses (fewer passes).
  void sort(long long bin_count, StreamView stream);

  /// After sort(): the item index at each sorted position.
  const std::uint32_t* sorted_order() const { return sorted_order_; }

  /// After sort(): start[b] = the first sorted position whose key is >= b, for b in
  /// [0, bin_count] (start[bin_count] = n); `start` is resized here. `name` names the launch.
  void starts(long long bin_count, DeviceBuffer<std::uint32_t>& start, StreamView stream,
              const char* name) const;

 private:
  std::size_t n_;
  DeviceBuffer<std::uint32_t> keys_, keys_alt_, order_, order_alt_;
  DeviceBuffer<unsigned char> temp_;
  const std::uint32_t* sorted_keys_ = nullptr;
  const std::uint32_t* sorted_order_ = nullptr;
};

}  // namespace dcs::cuda::detail
