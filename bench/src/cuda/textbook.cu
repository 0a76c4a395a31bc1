// The books' float-sum kernels (see textbook.hpp). Kernel names keep the books' names so that
// Nsight Compute reports and the seed-claims table read like the books. Each opens with what it
// teaches and where its bottleneck should be; docs/seed-claims.md holds what was measured.
#include <cuda_runtime.h>

#include <array>
#include <string>

#include "block_reduce.cuh"
#include "cuda_check.hpp"
#include "dcs/error.hpp"
#include "device_reduce.cuh"
#include "reduce_ops.cuh"
#include "textbook.hpp"

namespace dcs::cuda::detail {
namespace {

struct Plus {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

/// PMPP's BLOCK_DIM for the multi-block kernels and COARSE_FACTOR of Fig. 10.15.
constexpr unsigned kPmppBlock = 512;
constexpr unsigned kCoarseFactor = 2;
/// PMPP Fig. 10.11 declares its shared array with the largest block it may be launched with.
constexpr unsigned kPmppMaxBlock = 1024;

// --- PMPP ch. 10 -----------------------------------------------------------------------------

/// Fig. 10.6. One block of n/2 threads; thread t owns input[2t]. Active owners spread out as
/// the stride grows: control divergence in every warp for the first five steps and two memory
/// requests per warp access (owners two elements apart). In place.
__global__ void SimpleSumReductionKernel(float* input, float* output) {
  tree_simple(input, blockDim.x, Plus{});
  if (threadIdx.x == 0) *output = input[0];
}

/// Fig. 10.9. Owner = threadIdx.x and a shrinking stride keep the active threads contiguous:
/// whole warps retire, accesses are coalesced. In place.
__global__ void ConvergentSumReductionKernel(float* input, float* output) {
  tree_convergent(input, blockDim.x, Plus{});
  if (threadIdx.x == 0) *output = input[0];
}

/// Fig. 10.11. The first level is added while loading (two coalesced reads per thread); the
/// rest of the tree stays in shared memory: N/32 + 1 global requests. Does not modify input.
__global__ void SharedMemorySumReductionKernel(float* input, float* output) {
  __shared__ float input_s[kPmppMaxBlock];
  const unsigned t = threadIdx.x;
  const float total = tree_shared(input[t] + input[t + blockDim.x], input_s, blockDim.x, Plus{});
  if (t == 0) *output = total;
}

/// Fig. 10.13. Segments of 2*blockDim elements of ONE array, one block each (the book's
/// "segmented" reduction; CUB's DeviceSegmentedReduce means many arrays), partial sums merged
/// with one atomicAdd per block. *output must be 0 first.
__global__ void SegmentedSumReductionKernel(float* input, float* output) {
  __shared__ float input_s[kPmppBlock];
  const std::size_t segment = 2 * static_cast<std::size_t>(blockIdx.x) * blockDim.x;
  const std::size_t i = segment + threadIdx.x;
  const unsigned t = threadIdx.x;
  const float total = tree_shared(input[i] + input[i + blockDim.x], input_s, blockDim.x, Plus{});
  if (t == 0) atomicAdd(output, total);
}

/// Fig. 10.15. Each thread first adds COARSE_FACTOR*2 elements in a register (no barriers), so a
/// block covers COARSE_FACTOR times more data with the same tree: fewer blocks, fewer trees,
/// fewer atomics. *output must be 0 first.
__global__ void CoarsenedSumReductionKernel(float* input, float* output) {
  __shared__ float input_s[kPmppBlock];
  const std::size_t segment = kCoarseFactor * 2 * static_cast<std::size_t>(blockIdx.x) * blockDim.x;
  const std::size_t i = segment + threadIdx.x;
  const unsigned t = threadIdx.x;
  float sum = input[i];
  for (unsigned tile = 1; tile < kCoarseFactor * 2; ++tile) sum += input[i + tile * blockDim.x];
  const float total = tree_shared(sum, input_s, blockDim.x, Plus{});
  if (t == 0) atomicAdd(output, total);
}

// --- PCC ch. 3 (blocks of 512, one partial per block in g_odata) -----------------------------
// The book's boundary check `if (idx >= n) return;` is kept; with n a multiple of the data
// handled per block (the book's assumption, checked by the launcher) no thread takes it.

/// The unrolling step of reduceUnrolling2/4/8: each thread adds one element of each of Factor
/// data blocks (all loads issued before the additions) into the first, in place.
template <unsigned Factor>
__device__ __forceinline__ void unroll_data_blocks(float* g_idata, unsigned idx, unsigned n) {
  if (idx + (Factor - 1) * blockDim.x < n) {
    float a[Factor];
#pragma unroll
    for (unsigned k = 0; k < Factor; ++k) a[k] = g_idata[idx + k * blockDim.x];
    float sum = a[0];
#pragma unroll
    for (unsigned k = 1; k < Factor; ++k) sum += a[k];
    g_idata[idx] = sum;
  }
  __syncthreads();
}

/// One block of a PCC kernel, which differ only in Factor and the tree: Factor data blocks
/// folded into the first (Factor > 1), `tree(idata)` in place on it, thread 0 writes the
/// block's partial.
template <unsigned Factor, class Tree>
__device__ __forceinline__ void pcc_block(float* g_idata, float* g_odata, unsigned n, Tree tree) {
  const unsigned tid = threadIdx.x;
  const unsigned idx = blockIdx.x * blockDim.x * Factor + threadIdx.x;
  float* idata = g_idata + blockIdx.x * blockDim.x * Factor;
  if constexpr (Factor == 1) {
    if (idx >= n) return;
  } else {
    unroll_data_blocks<Factor>(g_idata, idx, n);
  }
  tree(idata);
  if (tid == 0) g_odata[blockIdx.x] = idata[0];
}

/// reduceNeighbored: in place in global memory; tid % (2*stride) leaves most threads of every
/// warp idle at every step (divergence) and a warp's accesses are strided.
__global__ void reduceNeighbored(float* g_idata, float* g_odata, unsigned n) {
  pcc_block<1>(g_idata, g_odata, n, [](float* d) { tree_neighbored(d, blockDim.x, Plus{}); });
}

/// reduceNeighboredLess: index = 2*stride*tid gives the work to the first threads, so whole warps
/// idle instead of diverging (about half the instructions per warp); accesses stay strided.
__global__ void reduceNeighboredLess(float* g_idata, float* g_odata, unsigned n) {
  pcc_block<1>(g_idata, g_odata, n, [](float* d) { tree_neighbored_less(d, blockDim.x, Plus{}); });
}

/// reduceInterleaved: partners half the remaining width apart: contiguous active threads and
/// consecutive addresses (the book: load efficiency 17% -> 78%).
__global__ void reduceInterleaved(float* g_idata, float* g_odata, unsigned n) {
  pcc_block<1>(g_idata, g_odata, n, [](float* d) { tree_interleaved(d, blockDim.x, Plus{}); });
}

/// reduceUnrolling2/4/8: each block first folds Factor data blocks (Factor independent loads in
/// flight per thread, Factor times fewer blocks), then the interleaved tree. The book's biggest
/// step (x4.9 for 8): memory latency hidden by independent loads.
template <unsigned Factor>
__global__ void reduceUnrolling(float* g_idata, float* g_odata, unsigned n) {
  pcc_block<Factor>(g_idata, g_odata, n, [](float* d) { tree_interleaved(d, blockDim.x, Plus{}); });
}

/// reduceUnrollWarps8: the last six steps run in one warp without __syncthreads (the book: stall
/// on synchronisation 58% -> 31%).
__global__ void reduceUnrollWarps8(float* g_idata, float* g_odata, unsigned n) {
  pcc_block<8>(g_idata, g_odata, n, [](float* d) { tree_unrolled_warp(d, blockDim.x, Plus{}); });
}

/// reduceCompleteUnrollWarps8: the loop written out as four guarded steps on blockDim.x.
__global__ void reduceCompleteUnrollWarps8(float* g_idata, float* g_odata, unsigned n) {
  pcc_block<8>(g_idata, g_odata, n,
               [](float* d) { tree_complete_unroll<0>(d, blockDim.x, Plus{}); });
}

/// reduceCompleteUnroll<iBlockSize>: the same steps guarded by a template constant, so the
/// compiler removes the ones that cannot run.
template <unsigned iBlockSize>
__global__ void reduceCompleteUnroll(float* g_idata, float* g_odata, unsigned n) {
  pcc_block<8>(g_idata, g_odata, n,
               [](float* d) { tree_complete_unroll<iBlockSize>(d, blockDim.x, Plus{}); });
}

// --- launch shapes ---------------------------------------------------------------------------

enum class Family { PmppSingle, PmppAtomic, Pcc, Shuffle };

struct TextbookKernel {
  std::string_view name;
  Family family;
  unsigned per_block;  ///< elements one block covers (0: single block of n/2 threads)
  bool in_place;
};

constexpr std::array<TextbookKernel, kReductionCount> kTextbook{{
    {"simple", Family::PmppSingle, 0, true},
    {"convergent", Family::PmppSingle, 0, true},
    {"shared", Family::PmppSingle, 0, false},
    {"segmented", Family::PmppAtomic, 2 * kPmppBlock, false},
    {"coarsened", Family::PmppAtomic, kCoarseFactor * 2 * kPmppBlock, false},
    {"neighbored", Family::Pcc, kTextbookPccBlock, true},
    {"neighbored-less", Family::Pcc, kTextbookPccBlock, true},
    {"interleaved", Family::Pcc, kTextbookPccBlock, true},
    {"unroll2", Family::Pcc, 2 * kTextbookPccBlock, true},
    {"unroll4", Family::Pcc, 4 * kTextbookPccBlock, true},
    {"unroll8", Family::Pcc, 8 * kTextbookPccBlock, true},
    {"unroll8-warp", Family::Pcc, 8 * kTextbookPccBlock, true},
    {"unroll8-complete", Family::Pcc, 8 * kTextbookPccBlock, true},
    {"unroll8-template", Family::Pcc, 8 * kTextbookPccBlock, true},
    {"warp-shuffle", Family::Shuffle, 0, false},
}};

static_assert(registry_matches_table(BackendKind::Cuda, VariantKind::Reduction, kTextbook),
              "kTextbook must follow the variant table's CUDA reductions");

const TextbookKernel& find_textbook(const std::string& name) {
  check_reduction_name(name);
  return kTextbook[reduction_index(name)];
}

using PccKernel = void (*)(float*, float*, unsigned);

PccKernel pcc_kernel(std::string_view name) {
  if (name == "neighbored") return reduceNeighbored;
  if (name == "neighbored-less") return reduceNeighboredLess;
  if (name == "interleaved") return reduceInterleaved;
  if (name == "unroll2") return reduceUnrolling<2>;
  if (name == "unroll4") return reduceUnrolling<4>;
  if (name == "unroll8") return reduceUnrolling<8>;
  if (name == "unroll8-warp") return reduceUnrollWarps8;
  if (name == "unroll8-complete") return reduceCompleteUnrollWarps8;
  return reduceCompleteUnroll<kTextbookPccBlock>;  // "unroll8-template"
}

}  // namespace

std::string textbook_requirement(const std::string& name, std::size_t n) {
  const TextbookKernel& kernel = find_textbook(name);
  switch (kernel.family) {
    case Family::PmppSingle:
      if (n < 2 || n > 2 * kPmppMaxBlock || (n & (n - 1)) != 0)
        return "the book's single-block kernel '" + name +
               "' needs n = 2 * blockDim, a power of two from 2 to 2048";
      return {};
    case Family::PmppAtomic:
    case Family::Pcc:
      if (n == 0 || n % kernel.per_block != 0 || n / kernel.per_block > 0x7fffffffu ||
          n > 0xffffffffu)
        return "the book's kernel '" + name + "' needs n a positive multiple of " +
               std::to_string(kernel.per_block) + " below 2^32";
      return {};
    case Family::Shuffle: return n == 0 ? "n must be positive" : std::string();
  }
  return {};
}

bool textbook_in_place(const std::string& name) { return find_textbook(name).in_place; }

std::size_t textbook_outputs(const std::string& name, std::size_t n) {
  const TextbookKernel& kernel = find_textbook(name);
  return kernel.family == Family::Pcc ? n / kernel.per_block : 1;
}

void enqueue_textbook_sum(const std::string& name, float* d_data, std::size_t n, float* d_out,
                          ReduceWorkspace& workspace, StreamView stream) {
  const TextbookKernel& kernel = find_textbook(name);
  if (const std::string requirement = textbook_requirement(name, n); !requirement.empty())
    throw UsageError(requirement + " (got " + std::to_string(n) + ")");
  const cudaStream_t s = stream.get();
  const std::string label = "textbook/" + name;
  switch (kernel.family) {
    case Family::PmppSingle: {
      const auto threads = static_cast<unsigned>(n / 2);
      if (name == "simple") SimpleSumReductionKernel<<<1, threads, 0, s>>>(d_data, d_out);
      else if (name == "convergent")
        ConvergentSumReductionKernel<<<1, threads, 0, s>>>(d_data, d_out);
      else SharedMemorySumReductionKernel<<<1, threads, 0, s>>>(d_data, d_out);
      break;
    }
    case Family::PmppAtomic: {
      const auto blocks = static_cast<unsigned>(n / kernel.per_block);
      DCS_CUDA_CHECK(cudaMemsetAsync(d_out, 0, sizeof(float), s));
      if (name == "segmented")
        SegmentedSumReductionKernel<<<blocks, kPmppBlock, 0, s>>>(d_data, d_out);
      else CoarsenedSumReductionKernel<<<blocks, kPmppBlock, 0, s>>>(d_data, d_out);
      break;
    }
    case Family::Pcc: {
      const auto blocks = static_cast<unsigned>(n / kernel.per_block);
      pcc_kernel(kernel.name)<<<blocks, kTextbookPccBlock, 0, s>>>(d_data, d_out,
                                                                   static_cast<unsigned>(n));
      break;
    }
    case Family::Shuffle:
      launch_shuffle<SumReduction, kShuffleBlockThreads, kShuffleUnroll>(
          SumReduction{d_data, n}, workspace, s, d_out, label.c_str());
      return;
  }
  DCS_CUDA_CHECK_LAUNCH(label.c_str(), s);
}

}  // namespace dcs::cuda::detail
