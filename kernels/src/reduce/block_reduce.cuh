// Block level of the reduction family (CUB's block/ layer): the trees of the two books, one
// small specialization per algorithm, chosen by a type-level `if` on BlockReduceAlgo as in
// cub::BlockReduce. Each tree is the loop of its figure, templated on the element type and the
// operator, so the same text runs the books' float sums and the statistics accumulators.
//
// Two shapes:
//  * In-place algorithms reduce an array of leaves in place, wherever it lives (the books: the
//    input array in global memory; the statistics kernels: a per-block scratch slot, never the
//    map). Called by every thread of the block after the leaves are written and a
//    __syncthreads(); the result is left in leaves[0]. `block_threads` is blockDim.x, passed at
//    run time exactly where the books read blockDim.x (only TemplateUnroll knows it at compile
//    time, which is that variant's whole point).
//  * Value algorithms take one value per thread (SharedMemory, WarpShuffle) and return the
//    block's result in thread 0.
#pragma once

#include <cuda_runtime.h>

#include "warp_reduce.cuh"

namespace dcs::cuda::detail {

enum class BlockReduceAlgo {
  Simple,          ///< PMPP Fig. 10.6: owner 2*tid, stride doubles, tid % stride == 0
  Convergent,      ///< PMPP Fig. 10.9: owner tid, stride halves from blockDim, tid < stride
  SharedMemory,    ///< PMPP Fig. 10.11: tree in __shared__, stride halves from blockDim/2
  Neighbored,      ///< PCC reduceNeighbored: tid % (2*stride) == 0
  NeighboredLess,  ///< PCC reduceNeighboredLess: index = 2*stride*tid
  Interleaved,     ///< PCC reduceInterleaved: stride halves from blockDim/2, tid < stride
  UnrolledWarp,    ///< PCC reduceUnrollWarps8: interleaved down to 64, last warp unrolled
  CompleteUnroll,  ///< PCC reduceCompleteUnrollWarps8: steps written out, runtime blockDim
  TemplateUnroll,  ///< PCC reduceCompleteUnroll<iBlockSize>: steps written out, compile time
  WarpShuffle,     ///< __shfl_down_sync within warps, one shared slot per warp
};

/// True for the algorithms that reduce an array of leaves in place.
constexpr bool is_in_place(BlockReduceAlgo algo) {
  return algo != BlockReduceAlgo::SharedMemory && algo != BlockReduceAlgo::WarpShuffle;
}

/// Leaves per thread of an in-place algorithm: PMPP's simple and convergent kernels give each of
/// their blockDim threads two elements; PCC's kernels one.
constexpr int leaves_per_thread(BlockReduceAlgo algo) {
  return (algo == BlockReduceAlgo::Simple || algo == BlockReduceAlgo::Convergent) ? 2 : 1;
}

// ---------------------------------------------------------------------------------------------
// The trees. T is the element type, Op a functor T(T, T).

/// PMPP Fig. 10.6 (simple). The active owners 2*tid drift apart as the stride doubles: after
/// five steps every warp has a single active thread (control divergence), and a warp's owners
/// sit two elements apart (memory divergence). 2*block_threads leaves.
template <class T, class Op>
__device__ __forceinline__ void tree_simple(T* data, unsigned block_threads, Op op) {
  const unsigned tid = threadIdx.x;
  const unsigned i = 2 * tid;
  for (unsigned stride = 1; stride <= block_threads; stride *= 2) {
    if (tid % stride == 0) data[i] = op(data[i], data[i + stride]);
    __syncthreads();
  }
}

/// PMPP Fig. 10.9 (convergent). The stride shrinks, so the active threads are always 0..stride-1:
/// whole warps retire together and a warp touches consecutive elements. Divergent only once fewer
/// than 32 threads remain (the last five steps). 2*block_threads leaves.
template <class T, class Op>
__device__ __forceinline__ void tree_convergent(T* data, unsigned block_threads, Op op) {
  const unsigned tid = threadIdx.x;
  for (unsigned stride = block_threads; stride >= 1; stride /= 2) {
    if (tid < stride) data[tid] = op(data[tid], data[tid + stride]);
    __syncthreads();
  }
}

/// PCC reduceNeighbored: the same pairing as PMPP's simple kernel with one leaf per thread; only
/// threads whose id is a multiple of 2*stride work, so every warp diverges at every step.
template <class T, class Op>
__device__ __forceinline__ void tree_neighbored(T* data, unsigned block_threads, Op op) {
  const unsigned tid = threadIdx.x;
  for (unsigned stride = 1; stride < block_threads; stride *= 2) {
    if (tid % (2 * stride) == 0) data[tid] = op(data[tid], data[tid + stride]);
    __syncthreads();
  }
}

/// PCC reduceNeighboredLess: the work goes to the first threads (index = 2*stride*tid), so whole
/// warps idle instead of diverging, but the accesses of a warp are 2*stride elements apart.
template <class T, class Op>
__device__ __forceinline__ void tree_neighbored_less(T* data, unsigned block_threads, Op op) {
  const unsigned tid = threadIdx.x;
  for (unsigned stride = 1; stride < block_threads; stride *= 2) {
    const unsigned index = 2 * stride * tid;
    if (index < block_threads) data[index] = op(data[index], data[index + stride]);
    __syncthreads();
  }
}

/// The interleaved steps while more than `last` threads work: partners are half the remaining
/// width apart, accesses of a warp are consecutive.
template <class T, class Op>
__device__ __forceinline__ void interleaved_steps(T* data, unsigned block_threads, unsigned last,
                                                  Op op) {
  const unsigned tid = threadIdx.x;
  for (unsigned stride = block_threads / 2; stride > last; stride >>= 1) {
    if (tid < stride) data[tid] = op(data[tid], data[tid + stride]);
    __syncthreads();
  }
}

/// PCC reduceInterleaved (= PMPP's convergent pairing with one leaf per thread): the interleaved
/// steps down to one thread.
template <class T, class Op>
__device__ __forceinline__ void tree_interleaved(T* data, unsigned block_threads, Op op) {
  interleaved_steps(data, block_threads, 0u, op);
}

/// PCC reduceUnrollWarps8's tree: interleaved while more than a warp works, then warp 0 finishes
/// without block barriers. Needs block_threads >= 64.
template <class T, class Op>
__device__ __forceinline__ void tree_unrolled_warp(T* data, unsigned block_threads, Op op) {
  interleaved_steps(data, block_threads, 32u, op);
  const unsigned tid = threadIdx.x;
  if (tid < 32) unrolled_last_warp(data, tid, op);
}

/// PCC reduceCompleteUnrollWarps8 (BlockSize == 0: the steps test the runtime blockDim) and
/// reduceCompleteUnroll<iBlockSize> (BlockSize > 0: the tests are compile-time constants and the
/// dead steps disappear). Needs a power-of-two block of 64..1024 threads.
template <unsigned BlockSize, class T, class Op>
__device__ __forceinline__ void tree_complete_unroll(T* data, unsigned block_threads, Op op) {
  const unsigned tid = threadIdx.x;
  const unsigned size = BlockSize > 0 ? BlockSize : block_threads;
  if (size >= 1024 && tid < 512) data[tid] = op(data[tid], data[tid + 512]);
  __syncthreads();
  if (size >= 512 && tid < 256) data[tid] = op(data[tid], data[tid + 256]);
  __syncthreads();
  if (size >= 256 && tid < 128) data[tid] = op(data[tid], data[tid + 128]);
  __syncthreads();
  if (size >= 128 && tid < 64) data[tid] = op(data[tid], data[tid + 64]);
  __syncthreads();
  if (tid < 32) unrolled_last_warp(data, tid, op);
}

/// PMPP Fig. 10.11's tree: each thread's value (the first level, added while loading) goes to
/// shared memory and the tree never touches global memory again. The barrier sits at the top of
/// the loop so that it also separates the stores of the values from the first reads.
template <class T, class Op>
__device__ __forceinline__ T tree_shared(T value, T* sm_input, unsigned block_threads, Op op) {
  const unsigned t = threadIdx.x;
  sm_input[t] = value;
  for (unsigned stride = block_threads / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (t < stride) sm_input[t] = op(sm_input[t], sm_input[t + stride]);
  }
  return t == 0 ? sm_input[0] : T{};  // only thread 0 may read: it made the last write
}

/// Shuffle trees within each warp, then warp 0 combines the per-warp results.
template <int BlockThreads, class T, class Op>
__device__ __forceinline__ T tree_warp_shuffle(T value, T* sm_warp_results, Op op) {
  static_assert(BlockThreads % kWarpThreads == 0 && BlockThreads <= 1024);
  constexpr int kWarps = BlockThreads / kWarpThreads;
  const unsigned lane = threadIdx.x % kWarpThreads;
  const unsigned warp = threadIdx.x / kWarpThreads;
  value = warp_reduce(value, op);
  if (lane == 0) sm_warp_results[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < kWarps ? sm_warp_results[lane] : Op::identity();
    value = warp_reduce(value, op);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// The dispatcher, CUB-style: one interface, the algorithm a template argument.

template <class T, int BlockThreads, BlockReduceAlgo Algo>
struct BlockReduce {
  static_assert(BlockThreads >= 64 && BlockThreads <= 1024 &&
                    (BlockThreads & (BlockThreads - 1)) == 0,
                "the books' trees need a power-of-two block of 64..1024 threads");
  static constexpr bool kInPlace = is_in_place(Algo);
  static constexpr int kLeaves = leaves_per_thread(Algo) * BlockThreads;

  /// Shared memory the value algorithms need (in-place ones need none).
  struct TempStorage {
    T slots[Algo == BlockReduceAlgo::SharedMemory  ? BlockThreads
            : Algo == BlockReduceAlgo::WarpShuffle ? BlockThreads / kWarpThreads
                                                   : 1];
  };

  /// In-place algorithms: reduce leaves[0 .. kLeaves) (written and made visible by a
  /// __syncthreads() before the call); returns the total in thread 0. Ends with the block
  /// synchronised except for the warp-unrolled algorithms, whose last steps involve warp 0 only.
  template <class Op>
  __device__ __forceinline__ static T reduce_in_place(T* leaves, Op op) {
    static_assert(kInPlace, "value algorithms take reduce(value, storage, op)");
    const unsigned block_threads = blockDim.x;  // read at run time, as the books do
    if constexpr (Algo == BlockReduceAlgo::Simple) tree_simple(leaves, block_threads, op);
    else if constexpr (Algo == BlockReduceAlgo::Convergent)
      tree_convergent(leaves, block_threads, op);
    else if constexpr (Algo == BlockReduceAlgo::Neighbored)
      tree_neighbored(leaves, block_threads, op);
    else if constexpr (Algo == BlockReduceAlgo::NeighboredLess)
      tree_neighbored_less(leaves, block_threads, op);
    else if constexpr (Algo == BlockReduceAlgo::Interleaved)
      tree_interleaved(leaves, block_threads, op);
    else if constexpr (Algo == BlockReduceAlgo::UnrolledWarp)
      tree_unrolled_warp(leaves, block_threads, op);
    else if constexpr (Algo == BlockReduceAlgo::CompleteUnroll)
      tree_complete_unroll<0>(leaves, block_threads, op);
    else if constexpr (Algo == BlockReduceAlgo::TemplateUnroll)
      tree_complete_unroll<BlockThreads>(leaves, block_threads, op);
    // Only thread 0 reads the root: in the warp-unrolled algorithms warp 0 may still be writing
    // it while the other warps have left the tree.
    return threadIdx.x == 0 ? leaves[0] : T{};
  }

  /// Value algorithms: one value per thread; the block's total in thread 0.
  template <class Op>
  __device__ __forceinline__ static T reduce(T value, TempStorage& storage, Op op) {
    static_assert(!kInPlace, "in-place algorithms take reduce_in_place(leaves, op)");
    if constexpr (Algo == BlockReduceAlgo::SharedMemory)
      return tree_shared(value, storage.slots, BlockThreads, op);
    else return tree_warp_shuffle<BlockThreads>(value, storage.slots, op);
  }
};

}  // namespace dcs::cuda::detail
