// The GPU reduction variants as the reduction family sees them: the variant table's CUDA
// reduction rows (dcs/variants.hpp), which device_reduce.cu's launch table and textbook.cu
// follow and check at compile time. Header-only plain C++: nothing here needs CUDA.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/variants.hpp"

namespace dcs::cuda::detail {

/// The reductions, in the variant table's order (device_reduce.cu's launch table and
/// textbook.cu's kernels follow it and check it at compile time).
inline constexpr std::size_t kReductionCount =
    variant_count(BackendKind::Cuda, VariantKind::Reduction);

/// Position of `name` among the table's CUDA reductions, or kReductionCount when unknown.
constexpr std::size_t reduction_index(std::string_view name) noexcept {
  return variant_index(BackendKind::Cuda, VariantKind::Reduction, name);
}

/// All reduction variants (name, one-line summary, default marked), table order.
inline std::vector<VariantInfo> reduction_variants() {
  return variant_infos(BackendKind::Cuda, VariantKind::Reduction);
}

/// Name of the default variant (the fastest correct one, by measurement: the table says why).
inline std::string default_reduction() {
  return std::string(find_variant(BackendKind::Cuda, VariantKind::Reduction, "").name);
}

/// Throws UsageError listing the valid names when `name` is not a variant.
inline void check_reduction_name(const std::string& name) {
  find_variant(BackendKind::Cuda, VariantKind::Reduction, name);
}

}  // namespace dcs::cuda::detail
