// The batch of bin rows a tile kernel stages atoms from (the MSM slab kernel, msm/msm_kernels.cu;
// the Ewald real-space kernel, periodic/ewald_sums.cu): each thread lists one row's atoms
// [begin, begin + count) in shared memory, then these helpers turn the counts into an inclusive
// prefix and find the row of the g-th listed atom. Device code.
#pragma once

#include <cuda_runtime.h>

namespace dcs::cuda::detail {

/// After every thread wrote its row's count to prefix[row + 1]: the inclusive prefix of the
/// Rows counts (prefix[0] = 0), made by thread 0 between two block barriers, once per batch.
/// Returns the batch's atom total. Every thread of the block calls it.
template <int Rows>
__device__ __forceinline__ unsigned prefix_row_counts(unsigned* prefix, int thread) {
  __syncthreads();
  if (thread == 0) {  // Rows additions once per batch
    prefix[0] = 0;
    for (int r = 1; r <= Rows; ++r) prefix[r] += prefix[r - 1];
  }
  __syncthreads();
  return prefix[Rows];
}

/// The row holding the g-th listed atom: the last row r with prefix[r] <= g.
template <int Rows>
__device__ __forceinline__ int listed_row(const unsigned* prefix, unsigned g) {
  int lo = 0, hi = Rows - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (prefix[mid] <= g) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

}  // namespace dcs::cuda::detail
