// The one table of compute and reduction variants: every potential kernel and statistics
// reduction of every backend, with its name, backend, default flag and one-line summary.
// --kernel and --reduction are resolved against it (find_variant), `dcs kernels` prints it, the
// tests instantiate their bodies over it and the benchmarks iterate it. The backends pair the
// rows with their code in their own registries, which check at compile time that they list
// exactly the table's names in the table's order:
//   CPU fast kernels      libdcs/src/cpu/fast_backend.cpp   (name -> instruction set)
//   CUDA potential        kernels/src/potential/registry.cu (name -> launch function)
//   CUDA reductions       kernels/src/reduce/device_reduce.cu (name -> launch table)
// A new variant is one row here and one row in its backend's registry.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dcs {

enum class BackendKind { CpuReference, CpuFast, Cuda };
enum class VariantKind { Potential, Reduction };

/// "cpu-reference", "cpu-fast", "cuda" (as PotentialBackend::name() reports them).
constexpr std::string_view backend_name(BackendKind backend) {
  switch (backend) {
    case BackendKind::CpuReference: return "cpu-reference";
    case BackendKind::CpuFast: return "cpu-fast";
    case BackendKind::Cuda: return "cuda";
  }
  return "?";
}

/// One row of the table.
struct Variant {
  std::string_view name;  ///< --kernel / --reduction value, e.g. "coalesced"
  BackendKind backend;
  VariantKind kind;
  bool is_default;           ///< the backend's choice when the option is not given
  std::string_view summary;  ///< one line: what it is and what should limit it
};

namespace variant_detail {
inline constexpr std::string_view kCpuSerialSummary =
    "one pass over the map on one thread, double sums (the statistics oracle)";
}  // namespace variant_detail

/// Every variant, grouped by backend and kind; within a group, the order `dcs kernels`, the
/// tests and the benchmarks use, which each backend's registry follows.
inline constexpr auto kVariantTable = std::to_array<Variant>({
    // --- CPU, float64 reference ------------------------------------------------------------
    {"reference", BackendKind::CpuReference, VariantKind::Potential, true,
     "float64 plain loops over points and atoms, the oracle; bound by scalar double sqrt and "
     "divide"},
    {"cpu-serial", BackendKind::CpuReference, VariantKind::Reduction, true,
     variant_detail::kCpuSerialSummary},
    // --- CPU, fast: float32, SIMD, threads (libdcs/src/cpu/fast_backend.cpp) ---------------
    {"simd", BackendKind::CpuFast, VariantKind::Potential, true,
     "float32 on the best instruction set of this CPU (AVX-512, else AVX2+FMA, else portable), "
     "all threads; bound by vector rsqrt + Newton step"},
    {"simd-avx512", BackendKind::CpuFast, VariantKind::Potential, false,
     "16-lane AVX-512: rsqrt14 + one Newton step, 64 x-points in registers per atom sweep; "
     "bound by the FMA ports"},
    {"simd-avx2", BackendKind::CpuFast, VariantKind::Potential, false,
     "8-lane AVX2+FMA: rsqrt (12 bits) + one Newton step, 32 x-points in registers; bound by "
     "the FMA ports"},
    {"simd-portable", BackendKind::CpuFast, VariantKind::Potential, false,
     "plain C++ around dcs::add_coulomb_term<float> (1/sqrt), vectorised as the compiler can "
     "for the baseline ISA; bound by sqrt and divide"},
    {"cpu-threaded", BackendKind::CpuFast, VariantKind::Reduction, true,
     "contiguous ranges per thread, partial results combined in range order (deterministic); "
     "bound by memory bandwidth"},
    {"cpu-serial", BackendKind::CpuFast, VariantKind::Reduction, false,
     variant_detail::kCpuSerialSummary},
    // --- CUDA potential kernels (kernels/src/potential/registry.cu) ------------------------
    {"production", BackendKind::Cuda, VariantKind::Potential, true,
     "3-D launch per 4000-atom chunk, shared-memory atom tiles, 16 z-points per thread, r^2 of "
     "planes +-j from one shared sum, exact path and clamp only near an atom (warp vote per 2 "
     "atoms), 3 of 16 rsqrt on the FMA pipe (seed + cubic); MUFU and issue (~1.07x the "
     "ceiling)"},
    {"production-mufu", BackendKind::Cuda, VariantKind::Potential, false,
     "the production kernel with every rsqrt on MUFU (vote per 4 atoms); bound by the rsqrt "
     "ceiling"},
    {"production-sw4", BackendKind::Cuda, VariantKind::Potential, false,
     "the production kernel with 4 of 16 rsqrt in software: issue-bound, MUFU to spare"},
    {"production-sw2", BackendKind::Cuda, VariantKind::Potential, false,
     "the production kernel with 2 of 16 rsqrt in software, vote per 4 atoms: MUFU-bound"},
    {"production-8", BackendKind::Cuda, VariantKind::Potential, false,
     "the production kernel with 8 z-points per thread (2 of 8 rsqrt in software): more "
     "warps, but the atom loads and dx^2+dy^2 are shared by half as many pairs"},
    {"scatter", BackendKind::Cuda, VariantKind::Potential, false,
     "PMPP Fig. 18.5: one thread per atom, atomicAdd into one z-plane per launch; atomics"},
    {"gather", BackendKind::Cuda, VariantKind::Potential, false,
     "PMPP Fig. 18.6: one thread per point of a z-plane, atoms in constant memory; constant "
     "loads and redundant dy/dz"},
    {"coarsened", BackendKind::Cuda, VariantKind::Potential, false,
     "PMPP Fig. 18.8: 8 consecutive x-points per thread reuse dy^2+dz^2; uncoalesced stores"},
    {"coalesced", BackendKind::Cuda, VariantKind::Potential, false,
     "PMPP Fig. 18.10: 8 x-points per thread strided by blockDim.x, coalesced stores; "
     "per-plane launches leave the GPU part-empty"},
    // --- CUDA reductions (kernels/src/reduce/device_reduce.cu). PMPP = Programming Massively
    // Parallel Processors (4th ed.) ch. 10; PCC = Professional CUDA C Programming ch. 3.
    // "Leaves in scratch": the books' in-place kernels reduce their input array in place; here
    // they reduce a per-block scratch copy of accumulators, never the map. Default: the fastest
    // correct one by measurement (bench/results/gpu_reduce_2026-11-21.md: 4.2 TB/s at 512^3,
    // 0.96x the time of cub::DeviceReduce::Sum for all six statistics).
    {"simple", BackendKind::Cuda, VariantKind::Reduction, false,
     "PMPP Fig. 10.6: owner 2*tid, stride 1->blockDim, tid%stride; in place (leaves in "
     "scratch); control and memory divergence"},
    {"convergent", BackendKind::Cuda, VariantKind::Reduction, false,
     "PMPP Fig. 10.9: owner tid, stride blockDim->1; in place (leaves in scratch); coalesced, "
     "divergent only in the last 5 steps"},
    {"shared", BackendKind::Cuda, VariantKind::Reduction, false,
     "PMPP Fig. 10.11: first level added on load, tree in __shared__; one tree per 2*blockDim "
     "elements, block partials combined by a second pass"},
    {"segmented", BackendKind::Cuda, VariantKind::Reduction, false,
     "PMPP Fig. 10.13: one block per 2*blockDim segment of ONE array (not CUB's "
     "DeviceSegmentedReduce), shared tree, atomics merge blocks; bound by atomics"},
    {"coarsened", BackendKind::Cuda, VariantKind::Reduction, false,
     "PMPP Fig. 10.15: 16 elements per thread in registers before the shared tree, atomics "
     "merge blocks; fewer blocks and trees"},
    {"neighbored", BackendKind::Cuda, VariantKind::Reduction, false,
     "PCC reduceNeighbored: tid%(2*stride), in place (leaves in scratch); divergent warps every "
     "step"},
    {"neighbored-less", BackendKind::Cuda, VariantKind::Reduction, false,
     "PCC reduceNeighboredLess: index=2*stride*tid keeps active threads packed; strided "
     "(uncoalesced) accesses remain"},
    {"interleaved", BackendKind::Cuda, VariantKind::Reduction, false,
     "PCC reduceInterleaved: stride blockDim/2->1, tid<stride; coalesced, in place (leaves in "
     "scratch)"},
    {"unroll2", BackendKind::Cuda, VariantKind::Reduction, false,
     "PCC reduceUnrolling2: each thread first folds 2 data blocks, then the interleaved tree"},
    {"unroll4", BackendKind::Cuda, VariantKind::Reduction, false,
     "PCC reduceUnrolling4: each thread first folds 4 data blocks, then the interleaved tree"},
    {"unroll8", BackendKind::Cuda, VariantKind::Reduction, false,
     "PCC reduceUnrolling8: each thread first folds 8 data blocks, then the interleaved tree"},
    {"unroll8-warp", BackendKind::Cuda, VariantKind::Reduction, false,
     "PCC reduceUnrollWarps8: unroll 8, tree down to 64, last warp unrolled without "
     "__syncthreads (__syncwarp between steps: needed since Volta)"},
    {"unroll8-complete", BackendKind::Cuda, VariantKind::Reduction, false,
     "PCC reduceCompleteUnrollWarps8: the tree written out step by step, checks on the runtime "
     "blockDim, last warp unrolled"},
    {"unroll8-template", BackendKind::Cuda, VariantKind::Reduction, false,
     "PCC reduceCompleteUnroll<iBlockSize>: as unroll8-complete with the block size a template "
     "parameter, so dead steps vanish at compile time"},
    {"warp-shuffle", BackendKind::Cuda, VariantKind::Reduction, true,
     "grid-stride float4 loads, per-thread partials (double sums), __shfl_down_sync tree, one "
     "shared slot per warp, second pass; bound by DRAM bandwidth"},
});

/// Rows of one backend and kind.
constexpr std::size_t variant_count(BackendKind backend, VariantKind kind) {
  std::size_t count = 0;
  for (const Variant& row : kVariantTable) count += row.backend == backend && row.kind == kind;
  return count;
}

/// Position of `name` among the rows of `backend` and `kind`, or variant_count() when absent.
constexpr std::size_t variant_index(BackendKind backend, VariantKind kind, std::string_view name) {
  std::size_t index = 0;
  for (const Variant& row : kVariantTable) {
    if (row.backend != backend || row.kind != kind) continue;
    if (row.name == name) return index;
    ++index;
  }
  return index;
}

/// For a backend's registry (an array of rows with a `name`): whether it lists exactly the
/// table's names of `backend` and `kind`, in table order. Registries static_assert it.
template <class Registry>
constexpr bool registry_matches_table(BackendKind backend, VariantKind kind,
                                      const Registry& registry) {
  std::size_t index = 0;
  for (const Variant& row : kVariantTable) {
    if (row.backend != backend || row.kind != kind) continue;
    if (index >= registry.size() || registry[index].name != row.name) return false;
    ++index;
  }
  return index == registry.size();
}

/// The table row called `name` (empty: the default) among `backend`'s variants of `kind`.
/// Throws UsageError naming the valid names otherwise.
const Variant& find_variant(BackendKind backend, VariantKind kind, std::string_view name);

/// A row as `dcs kernels` and the tests list it (strings; backend as backend_name()).
struct VariantInfo {
  std::string name;     ///< e.g. "coalesced"
  std::string summary;  ///< one line: what it is and what should limit it
  std::string backend;  ///< "cpu-reference", "cpu-fast", "cuda"
  VariantKind kind = VariantKind::Potential;
  bool is_default = false;
};

/// The rows of `backend` (and of `kind` only, if given) as VariantInfo, table order.
std::vector<VariantInfo> variant_infos(BackendKind backend);
std::vector<VariantInfo> variant_infos(BackendKind backend, VariantKind kind);

}  // namespace dcs
