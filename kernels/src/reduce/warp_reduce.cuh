// Warp level of the reduction family (CUB's warp/ layer): the register shuffle tree and the
// books' "unrolled last warp" over memory.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace dcs::cuda::detail {

inline constexpr unsigned kFullWarpMask = 0xffffffffu;
inline constexpr int kWarpThreads = 32;

/// __shfl_down_sync of any trivially copyable T, one 32-bit word at a time (StatsAccum is 12
/// words). All 32 lanes must call it.
template <class T>
__device__ __forceinline__ T shuffle_down(const T& value, int delta) {
  static_assert(sizeof(T) % sizeof(std::uint32_t) == 0, "shuffle_down needs whole 32-bit words");
  constexpr int kWords = sizeof(T) / sizeof(std::uint32_t);
  std::uint32_t words[kWords];
  std::memcpy(words, &value, sizeof(T));
#pragma unroll
  for (int word = 0; word < kWords; ++word)
    words[word] = __shfl_down_sync(kFullWarpMask, words[word], delta);
  T result;
  std::memcpy(&result, words, sizeof(T));
  return result;
}

/// Shuffle tree: after log2(32) = 5 steps lane 0 holds the combination of all 32 lanes' values
/// (other lanes hold partial results). No shared memory and no barrier: data moves between
/// registers of one warp.
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T value, Op op) {
#pragma unroll
  for (int offset = kWarpThreads / 2; offset > 0; offset /= 2)
    value = op(value, shuffle_down(value, offset));
  return value;
}

/// The books' unrolled last warp (PCC reduceUnrollWarps8, cuda-samples reduce4): lanes 0..31 of
/// warp 0 finish the tree over data[0..63] without __syncthreads. The book relies on `volatile`
/// and on the warp executing in lock step, which no longer holds since Volta (independent thread
/// scheduling): a lane could read data[lane + offset] after its owner already overwrote it. Here
/// only lanes below `offset` write (so no lane reads a slot written in the same step) and
/// __syncwarp() orders the steps; the shape of the book's code is kept. Called by all 32 lanes of
/// warp 0; the result is in data[0]. Works on global or shared memory.
template <class T, class Op>
__device__ __forceinline__ void unrolled_last_warp(T* data, unsigned lane, Op op) {
#pragma unroll
  for (unsigned offset = kWarpThreads; offset > 0; offset /= 2) {
    if (lane < offset) data[lane] = op(data[lane], data[lane + offset]);
    __syncwarp();
  }
}

}  // namespace dcs::cuda::detail
