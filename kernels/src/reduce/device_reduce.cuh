// Device level of the reduction family (CUB's device/ layer): how the blocks of a grid share an
// array of any length and how their results meet. Every kernel is templated on a reduction
// policy (reduce_ops.cuh) and on a block algorithm (block_reduce.cuh):
//
//  * in_place_kernel: the books' in-place trees. Each block owns a scratch slot of leaves (never
//    the map), walks the array segment by segment (grid-stride), loads each segment into its
//    slot -- folding ItemsPerLeaf elements per leaf, PCC's "unrolling" -- and runs the tree on
//    it. Block partials meet in a second pass (PCC sums them on the host; same idea).
//  * value_kernel: one value per thread into a shared-memory tree (PMPP Fig. 10.11). With
//    Merge::Atomic one block per segment merges its result atomically (PMPP Fig. 10.13
//    "segmented": segments of ONE array; CUB's DeviceSegmentedReduce instead reduces many
//    independent arrays), and ItemsPerThread > 2 is PMPP Fig. 10.15's thread coarsening.
//  * shuffle_kernel: grid-stride, several 16-byte loads in flight per thread, partials in
//    registers, shuffle tree; block partials meet in a second pass.
// Launch wrappers check their preconditions, size the grid from the occupancy, launch, check the
// launch and log the shape at debug level (log_launch); nothing here synchronises.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "block_reduce.cuh"
#include "cuda_check.hpp"
#include "launch.hpp"
#include "reduce.hpp"
#include "reduce_ops.cuh"
#include "warp_reduce.cuh"

namespace dcs::cuda::detail {

enum class Merge { SecondPass, Atomic };

/// Threads of the one block that combines block partials.
inline constexpr int kCombineThreads = 256;

/// Shape of the warp-shuffle variant (the default): threads per block and independent 16-byte
/// loads in flight per thread. Its float-sum form (textbook.cu) and the benchmark's ablation
/// launch the same shape, so that they measure what the default runs.
inline constexpr int kShuffleBlockThreads = 256;
inline constexpr int kShuffleUnroll = 4;

// ---------------------------------------------------------------------------------------------
// Kernels

/// Writes the policy's identity to *target (before atomic merges).
template <class R>
__global__ void init_result_kernel(typename R::Accum* target) {
  *target = R::identity();
}

/// Second pass: one block folds `count` block partials into *result.
template <class R>
__global__ void __launch_bounds__(kCombineThreads)
    combine_partials_kernel(const typename R::Accum* gm_partials, std::size_t count,
                            typename R::Accum* gm_result) {
  using Accum = typename R::Accum;
  using Block = BlockReduce<Accum, kCombineThreads, BlockReduceAlgo::WarpShuffle>;
  __shared__ typename Block::TempStorage storage;
  Accum value = R::identity();
  for (std::size_t index = threadIdx.x; index < count; index += kCombineThreads)
    value = R::combine(value, gm_partials[index]);
  value = Block::reduce(value, storage, CombineOp<R>{});
  if (threadIdx.x == 0) *gm_result = value;
}

/// The books' in-place trees on a per-block scratch slot of leaves. Leaf k of a segment folds
/// elements base + k + j*kLeaves for j < ItemsPerLeaf (one element from each of ItemsPerLeaf
/// "data blocks", as PCC's unrolling kernels read them); missing elements leave it empty.
template <class R, BlockReduceAlgo Algo, int BlockThreads, int ItemsPerLeaf>
__global__ void __launch_bounds__(BlockThreads)
    in_place_kernel(R reduction, typename R::Accum* gm_scratch, typename R::Accum* gm_partials,
                    std::size_t num_segments) {
  using Accum = typename R::Accum;
  using Block = BlockReduce<Accum, BlockThreads, Algo>;
  constexpr int kLeaves = Block::kLeaves;
  constexpr std::size_t kSegment = static_cast<std::size_t>(kLeaves) * ItemsPerLeaf;
  // Not __restrict__ and not const: the tree reads what other threads of the block wrote, so the
  // loads must not take the non-coherent read-only path.
  Accum* gm_leaves = gm_scratch + static_cast<std::size_t>(blockIdx.x) * kLeaves;
  Accum block_total = R::identity();
  for (std::size_t segment = blockIdx.x; segment < num_segments; segment += gridDim.x) {
    const std::size_t base = segment * kSegment;
#pragma unroll
    for (int slot = 0; slot < kLeaves / BlockThreads; ++slot) {
      const unsigned leaf = threadIdx.x + slot * BlockThreads;
      typename R::Thread partial;
#pragma unroll
      for (int item = 0; item < ItemsPerLeaf; ++item) {
        const std::size_t index = base + leaf + static_cast<std::size_t>(item) * kLeaves;
        if (index < reduction.n) reduction.add(partial, index);
      }
      gm_leaves[leaf] = R::to_accum(partial);
    }
    __syncthreads();
    const Accum segment_total = Block::reduce_in_place(gm_leaves, CombineOp<R>{});
    if (threadIdx.x == 0) block_total = R::combine(block_total, segment_total);
    __syncthreads();  // the next segment overwrites the leaves
  }
  if (threadIdx.x == 0) gm_partials[blockIdx.x] = block_total;
}

/// One value per thread, folded from ItemsPerThread elements strided by BlockThreads (2: PMPP
/// Fig. 10.11's first level on load; more: Fig. 10.15's coarsening), then the block algorithm.
/// SecondPass: grid-stride over segments, one partial per block. Atomic: one block per segment,
/// merged into *gm_out atomically (which must hold the identity first).
template <class R, BlockReduceAlgo Algo, int BlockThreads, int ItemsPerThread, Merge How>
__global__ void __launch_bounds__(BlockThreads)
    value_kernel(R reduction, typename R::Accum* gm_out, std::size_t num_segments) {
  using Accum = typename R::Accum;
  using Block = BlockReduce<Accum, BlockThreads, Algo>;
  constexpr std::size_t kSegment = static_cast<std::size_t>(BlockThreads) * ItemsPerThread;
  __shared__ typename Block::TempStorage storage;
  Accum block_total = R::identity();
  const std::size_t first_segment = blockIdx.x;
  const std::size_t segment_stride = How == Merge::SecondPass ? gridDim.x : num_segments;
  for (std::size_t segment = first_segment; segment < num_segments; segment += segment_stride) {
    const std::size_t base = segment * kSegment + threadIdx.x;
    typename R::Thread partial;
#pragma unroll
    for (int tile = 0; tile < ItemsPerThread; ++tile) {
      const std::size_t index = base + static_cast<std::size_t>(tile) * BlockThreads;
      if (index < reduction.n) reduction.add(partial, index);
    }
    const Accum segment_total = Block::reduce(R::to_accum(partial), storage, CombineOp<R>{});
    if (threadIdx.x == 0) block_total = R::combine(block_total, segment_total);
    __syncthreads();  // the next segment reuses the shared storage
  }
  if (threadIdx.x == 0) {
    if constexpr (How == Merge::Atomic) R::atomic_merge(gm_out, block_total);
    else gm_out[blockIdx.x] = block_total;
  }
}

/// Grid-stride over 16-byte vectors, Unroll independent loads in flight per thread before they
/// are added; then the scalar rest (the `head` elements before the first aligned vector and the
/// tail after the last one); then the shuffle tree. One partial per block.
template <class R, int BlockThreads, int Unroll>
__global__ void __launch_bounds__(BlockThreads)
    shuffle_kernel(R reduction, std::size_t head, std::size_t num_vectors,
                   typename R::Accum* gm_partials) {
  using Accum = typename R::Accum;
  using Block = BlockReduce<Accum, BlockThreads, BlockReduceAlgo::WarpShuffle>;
  __shared__ typename Block::TempStorage storage;
  typename R::Thread partial;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * BlockThreads;
  std::size_t vector = static_cast<std::size_t>(blockIdx.x) * BlockThreads + threadIdx.x;
  for (; vector + (Unroll - 1) * stride < num_vectors; vector += Unroll * stride) {
    typename R::Vector loaded[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      loaded[u] = reduction.load_vector(head + 4 * (vector + u * stride));
#pragma unroll
    for (int u = 0; u < Unroll; ++u) R::add_vector(partial, loaded[u]);
  }
  for (; vector < num_vectors; vector += stride)
    R::add_vector(partial, reduction.load_vector(head + 4 * vector));
  // Scalar rest: indices [0, head) and [head + 4*num_vectors, n).
  const std::size_t body_end = head + 4 * num_vectors;
  const std::size_t rest = head + (reduction.n - body_end);
  for (std::size_t r = static_cast<std::size_t>(blockIdx.x) * BlockThreads + threadIdx.x; r < rest;
       r += stride)
    reduction.add(partial, r < head ? r : body_end + (r - head));
  const Accum total = Block::reduce(R::to_accum(partial), storage, CombineOp<R>{});
  if (threadIdx.x == 0) gm_partials[blockIdx.x] = total;
}

// ---------------------------------------------------------------------------------------------
// Launch wrappers. Each leaves the final Accum in *d_result.

/// Blocks of `kernel` that fit on the device at once (at least one).
template <class Kernel>
std::size_t resident_blocks(Kernel kernel, int block_threads, ReduceWorkspace& workspace) {
  int per_multiprocessor = 0;
  DCS_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, kernel, block_threads, 0));
  return static_cast<std::size_t>(std::max(1, per_multiprocessor * workspace.multiprocessors()));
}

inline std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

template <class R>
void launch_combine_partials(const typename R::Accum* d_partials, std::size_t count,
                             typename R::Accum* d_result, cudaStream_t stream) {
  combine_partials_kernel<R><<<1, kCombineThreads, 0, stream>>>(d_partials, count, d_result);
  DCS_CUDA_CHECK_LAUNCH("combine_partials", stream);
}

template <class R, BlockReduceAlgo Algo, int BlockThreads, int ItemsPerLeaf>
void launch_in_place(const R& reduction, ReduceWorkspace& workspace, cudaStream_t stream,
                     typename R::Accum* d_result, const char* name) {
  using Accum = typename R::Accum;
  constexpr int kLeaves = BlockReduce<Accum, BlockThreads, Algo>::kLeaves;
  const auto kernel = in_place_kernel<R, Algo, BlockThreads, ItemsPerLeaf>;
  const std::size_t num_segments =
      ceil_div(reduction.n, static_cast<std::size_t>(kLeaves) * ItemsPerLeaf);
  const std::size_t grid = std::min(num_segments, resident_blocks(kernel, BlockThreads, workspace));
  Accum* d_leaves = workspace.scratch<Accum>(grid * kLeaves);
  Accum* d_partials = workspace.partials<Accum>(grid);
  log_launch(name, LaunchConfig{dim3(static_cast<unsigned>(grid)), dim3(BlockThreads), 0});
  kernel<<<static_cast<unsigned>(grid), BlockThreads, 0, stream>>>(reduction, d_leaves, d_partials,
                                                                   num_segments);
  DCS_CUDA_CHECK_LAUNCH(name, stream);
  launch_combine_partials<R>(d_partials, grid, d_result, stream);
}

template <class R, BlockReduceAlgo Algo, int BlockThreads, int ItemsPerThread, Merge How>
void launch_value(const R& reduction, ReduceWorkspace& workspace, cudaStream_t stream,
                  typename R::Accum* d_result, const char* name) {
  using Accum = typename R::Accum;
  const auto kernel = value_kernel<R, Algo, BlockThreads, ItemsPerThread, How>;
  const std::size_t num_segments =
      ceil_div(reduction.n, static_cast<std::size_t>(BlockThreads) * ItemsPerThread);
  if constexpr (How == Merge::Atomic) {
    if (num_segments > 0x7fffffffu)
      throw UsageError(std::string("reduction '") + name + "' needs one block per segment; " +
                       std::to_string(reduction.n) + " values exceed the grid limit");
    log_launch(name,
               LaunchConfig{dim3(static_cast<unsigned>(num_segments)), dim3(BlockThreads), 0});
    init_result_kernel<R><<<1, 1, 0, stream>>>(d_result);
    DCS_CUDA_CHECK_LAUNCH("init_result", stream);
    kernel<<<static_cast<unsigned>(num_segments), BlockThreads, 0, stream>>>(reduction, d_result,
                                                                             num_segments);
    DCS_CUDA_CHECK_LAUNCH(name, stream);
  } else {
    const std::size_t grid =
        std::min(num_segments, resident_blocks(kernel, BlockThreads, workspace));
    Accum* d_partials = workspace.partials<Accum>(grid);
    log_launch(name, LaunchConfig{dim3(static_cast<unsigned>(grid)), dim3(BlockThreads), 0});
    kernel<<<static_cast<unsigned>(grid), BlockThreads, 0, stream>>>(reduction, d_partials,
                                                                     num_segments);
    DCS_CUDA_CHECK_LAUNCH(name, stream);
    launch_combine_partials<R>(d_partials, grid, d_result, stream);
  }
}

template <class R, int BlockThreads, int Unroll>
void launch_shuffle(const R& reduction, ReduceWorkspace& workspace, cudaStream_t stream,
                    typename R::Accum* d_result, const char* name) {
  using Accum = typename R::Accum;
  const auto kernel = shuffle_kernel<R, BlockThreads, Unroll>;
  const std::size_t head = std::min(reduction.vector_head(), reduction.n);
  const std::size_t num_vectors = (reduction.n - head) / 4;
  const std::size_t wanted = ceil_div(std::max<std::size_t>(reduction.n, 1),
                                      static_cast<std::size_t>(BlockThreads) * 4 * Unroll);
  const std::size_t grid = std::min(wanted, resident_blocks(kernel, BlockThreads, workspace));
  Accum* d_partials = workspace.partials<Accum>(grid);
  log_launch(name, LaunchConfig{dim3(static_cast<unsigned>(grid)), dim3(BlockThreads), 0});
  kernel<<<static_cast<unsigned>(grid), BlockThreads, 0, stream>>>(reduction, head, num_vectors,
                                                                   d_partials);
  DCS_CUDA_CHECK_LAUNCH(name, stream);
  launch_combine_partials<R>(d_partials, grid, d_result, stream);
}

}  // namespace dcs::cuda::detail
