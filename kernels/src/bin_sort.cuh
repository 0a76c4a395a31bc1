// The gather of binned items into their sorted order (bin_sort.hpp), a template over the item
// type; device code, included by the .cu files that bin (msm/atom_bins.cu,
// periodic/ghost_atoms.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "bin_sort.hpp"
#include "cuda_check.hpp"

namespace dcs::cuda::detail {

/// sorted[i] = items[order[i]]: one thread per item, so the result does not depend on
/// scheduling.
template <class Item>
__global__ void __launch_bounds__(kBinThreads)
    gather_sorted_kernel(const Item* __restrict__ items, const std::uint32_t* __restrict__ order,
                         std::size_t n, Item* __restrict__ sorted) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kBinThreads) + threadIdx.x;
  if (i < n) sorted[i] = items[order[i]];
}

/// The n items in the order sort.sort() found, into `sorted` (resized here; the old buffer is
/// freed first). `name` names the launch.
template <class Item>
void gather_sorted(const Item* d_items, std::size_t n, const BinSort& sort,
                   DeviceBuffer<Item>& sorted, StreamView stream, const char* name) {
  sorted = DeviceBuffer<Item>();
  sorted = DeviceBuffer<Item>(n);
  gather_sorted_kernel<<<bin_blocks(n), kBinThreads, 0, stream.get()>>>(
      d_items, sort.sorted_order(), n, sorted.data());
  DCS_CUDA_CHECK_LAUNCH(name, stream.get());
}

}  // namespace dcs::cuda::detail
