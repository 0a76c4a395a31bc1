// The variant list of the CPU backends, for `dcs kernels` and --kernel/--reduction: the
// reference's one kernel and the fast backend's registry (fast_kernels.hpp), plus the CPU
// statistics reductions.
#include <string>
#include <vector>

#include "dcs/backend.hpp"
#include "fast_kernels.hpp"

namespace dcs {

std::vector<VariantInfo> cpu_variants() {
  // Both backends offer the serial oracle reduction; only the reference makes it the default.
  const std::string serial_summary =
      "one pass over the map on one thread, double sums (the statistics oracle)";
  std::vector<VariantInfo> variants;
  variants.push_back({"reference",
                      "float64 plain loops over points and atoms, the oracle; bound by scalar "
                      "double sqrt and divide",
                      "cpu-reference", VariantKind::Potential, true});
  for (const cpu_fast::FastKernel& kernel : cpu_fast::fast_kernels()) {
    std::string summary(kernel.summary);
    if (!kernel.automatic && !cpu_fast::isa_supported(kernel.isa))
      summary += " [not supported by this CPU]";
    variants.push_back({std::string(kernel.name), summary, "cpu-fast", VariantKind::Potential,
                        kernel.automatic});
  }
  variants.push_back(
      {"cpu-serial", serial_summary, "cpu-reference", VariantKind::Reduction, true});
  variants.push_back({"cpu-threaded",
                      "contiguous ranges per thread, partial results combined in range order "
                      "(deterministic); bound by memory bandwidth",
                      "cpu-fast", VariantKind::Reduction, true});
  variants.push_back({"cpu-serial", serial_summary, "cpu-fast", VariantKind::Reduction, false});
  return variants;
}

}  // namespace dcs
