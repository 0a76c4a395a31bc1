// Names and one-line summaries of the CUDA potential kernels, in plain C++ so that the CUDA
// build and the CPU-only stub (cuda_stub.cpp) print the same list for `dcs kernels`. The
// registry (registry.cu, which pairs each entry with its launch function) checks at compile time
// that its rows match these entries name by name and in order.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/variants.hpp"

namespace dcs::cuda::detail {

struct KernelDescription {
  std::string_view name;
  std::string_view summary;
};

/// Registry order; the first entry is the default on the GPU.
inline constexpr std::array<KernelDescription, 9> kKernelCatalog{{
    {"production",
     "3-D launch per 4000-atom chunk, shared-memory atom tiles, 16 z-points per thread, r^2 of "
     "planes +-j from one shared sum, exact path and clamp only near an atom (warp vote per 2 "
     "atoms), 3 of 16 rsqrt on the FMA pipe (seed + cubic); MUFU and issue (~1.07x the ceiling)"},
    {"production-mufu",
     "the production kernel with every rsqrt on MUFU (vote per 4 atoms); bound by the rsqrt "
     "ceiling"},
    {"production-sw4",
     "the production kernel with 4 of 16 rsqrt in software: issue-bound, MUFU to spare"},
    {"production-sw2",
     "the production kernel with 2 of 16 rsqrt in software, vote per 4 atoms: MUFU-bound"},
    {"production-8",
     "the production kernel with 8 z-points per thread (2 of 8 rsqrt in software): more warps, "
     "but the atom loads and dx^2+dy^2 are shared by half as many pairs"},
    {"scatter",
     "PMPP Fig. 18.5: one thread per atom, atomicAdd into one z-plane per launch; atomics"},
    {"gather",
     "PMPP Fig. 18.6: one thread per point of a z-plane, atoms in constant memory; "
     "constant loads and redundant dy/dz"},
    {"coarsened",
     "PMPP Fig. 18.8: 8 consecutive x-points per thread reuse dy^2+dz^2; uncoalesced stores"},
    {"coalesced",
     "PMPP Fig. 18.10: 8 x-points per thread strided by blockDim.x, coalesced stores; "
     "per-plane launches leave the GPU part-empty"},
}};

/// Index of `name` in kKernelCatalog, or kKernelCatalog.size() when absent.
constexpr std::size_t catalog_index(std::string_view name) {
  for (std::size_t i = 0; i < kKernelCatalog.size(); ++i)
    if (kKernelCatalog[i].name == name) return i;
  return kKernelCatalog.size();
}

/// The catalog for `dcs kernels` (backend "cuda", kind Potential, the first marked default).
inline std::vector<VariantInfo> kernel_catalog_variants() {
  std::vector<VariantInfo> variants;
  for (const KernelDescription& kernel : kKernelCatalog)
    variants.push_back({std::string(kernel.name), std::string(kernel.summary), "cuda",
                        VariantKind::Potential, &kernel == &kKernelCatalog.front()});
  return variants;
}

}  // namespace dcs::cuda::detail
