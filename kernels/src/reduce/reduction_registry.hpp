// The names and one-line summaries of the GPU reduction variants, in plain C++ so that both the
// CUDA build (device_reduce.cu, whose launch table follows this order and checks it at compile
// time) and the CPU-only stub (cuda_stub.cpp) publish the same list for `dcs kernels`,
// --reduction, the tests and the benchmark. Header-only: nothing here needs CUDA.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/variants.hpp"

namespace dcs::cuda::detail {

struct ReductionName {
  std::string_view name;
  std::string_view summary;  ///< what it teaches and what should limit it
};

/// Registry order = launch-table order in device_reduce.cu. PMPP = Programming Massively
/// Parallel Processors (4th ed.) ch. 10; PCC = Professional CUDA C Programming ch. 3.
/// "Leaves in scratch": the in-place kernels of the books reduce their input array in place; here
/// they reduce a per-block scratch copy of accumulators, never the map.
inline constexpr std::array<ReductionName, 15> kReductionNames{{
    {"simple",
     "PMPP Fig. 10.6: owner 2*tid, stride 1->blockDim, tid%stride; in place (leaves in scratch); "
     "control and memory divergence"},
    {"convergent",
     "PMPP Fig. 10.9: owner tid, stride blockDim->1; in place (leaves in scratch); coalesced, "
     "divergent only in the last 5 steps"},
    {"shared",
     "PMPP Fig. 10.11: first level added on load, tree in __shared__; one tree per 2*blockDim "
     "elements, block partials combined by a second pass"},
    {"segmented",
     "PMPP Fig. 10.13: one block per 2*blockDim segment of ONE array (not CUB's "
     "DeviceSegmentedReduce), shared tree, atomics merge blocks; bound by atomics"},
    {"coarsened",
     "PMPP Fig. 10.15: 16 elements per thread in registers before the shared tree, atomics merge "
     "blocks; fewer blocks and trees"},
    {"neighbored",
     "PCC reduceNeighbored: tid%(2*stride), in place (leaves in scratch); divergent warps every "
     "step"},
    {"neighbored-less",
     "PCC reduceNeighboredLess: index=2*stride*tid keeps active threads packed; strided "
     "(uncoalesced) accesses remain"},
    {"interleaved",
     "PCC reduceInterleaved: stride blockDim/2->1, tid<stride; coalesced, in place (leaves in "
     "scratch)"},
    {"unroll2",
     "PCC reduceUnrolling2: each thread first folds 2 data blocks, then the interleaved tree"},
    {"unroll4",
     "PCC reduceUnrolling4: each thread first folds 4 data blocks, then the interleaved tree"},
    {"unroll8",
     "PCC reduceUnrolling8: each thread first folds 8 data blocks, then the interleaved tree"},
    {"unroll8-warp",
     "PCC reduceUnrollWarps8: unroll 8, tree down to 64, last warp unrolled without "
     "__syncthreads (__syncwarp between steps: needed since Volta)"},
    {"unroll8-complete",
     "PCC reduceCompleteUnrollWarps8: the tree written out step by step, checks on the runtime "
     "blockDim, last warp unrolled"},
    {"unroll8-template",
     "PCC reduceCompleteUnroll<iBlockSize>: as unroll8-complete with the block size a template "
     "parameter, so dead steps vanish at compile time"},
    {"warp-shuffle",
     "grid-stride float4 loads, per-thread partials (double sums), __shfl_down_sync tree, one "
     "shared slot per warp, second pass; bound by DRAM bandwidth"},
}};

/// The default: the fastest correct variant by measurement at every benchmarked size (H200,
/// 2026-11-21: 127.5 us at 512^3 = 4211 GB/s, 100.6% of a device copy, 0.96x the time of
/// cub::DeviceReduce::Sum for all six statistics; next best `coarsened`, 318 us). See
/// bench/results/gpu_reduce_2026-11-21.md.
inline constexpr std::string_view kDefaultReduction = "warp-shuffle";

/// Position of `name` in kReductionNames, or kReductionNames.size() when unknown.
inline std::size_t reduction_index(std::string_view name) noexcept {
  for (std::size_t index = 0; index < kReductionNames.size(); ++index)
    if (kReductionNames[index].name == name) return index;
  return kReductionNames.size();
}

/// All reduction variants (name, one-line summary, default marked), registry order.
inline std::vector<VariantInfo> reduction_variants() {
  std::vector<VariantInfo> variants;
  variants.reserve(kReductionNames.size());
  for (const ReductionName& entry : kReductionNames)
    variants.push_back({std::string(entry.name), std::string(entry.summary), "cuda",
                        VariantKind::Reduction, entry.name == kDefaultReduction});
  return variants;
}

/// Name of the default variant (the fastest correct one, by measurement).
inline std::string default_reduction() { return std::string(kDefaultReduction); }

/// Throws UsageError listing the valid names when `name` is not a variant.
inline void check_reduction_name(const std::string& name) {
  if (reduction_index(name) < kReductionNames.size()) return;
  std::string valid;
  for (const ReductionName& entry : kReductionNames) {
    if (!valid.empty()) valid += ", ";
    valid += entry.name;
  }
  throw UsageError("unknown --reduction '" + name + "' for the CUDA backend; valid names: " +
                   valid);
}

}  // namespace dcs::cuda::detail
