// The CPU backends' rows of the variant table (dcs/variants.hpp), for `dcs kernels` and the
// device choice of --kernel: the table's text, with the fast backend's ISA-specific kernels
// that this CPU cannot run marked.
#include <string>
#include <vector>

#include "dcs/backend.hpp"
#include "fast_kernels.hpp"

namespace dcs {

std::vector<VariantInfo> cpu_variants() {
  std::vector<VariantInfo> variants = variant_infos(BackendKind::CpuReference);
  for (VariantInfo& info : variant_infos(BackendKind::CpuFast)) {
    if (info.kind == VariantKind::Potential) {
      const cpu_fast::FastKernel& kernel = cpu_fast::find_fast_kernel(info.name);
      if (!kernel.automatic && !cpu_fast::isa_supported(kernel.isa))
        info.summary += " [not supported by this CPU]";
    }
    variants.push_back(std::move(info));
  }
  return variants;
}

}  // namespace dcs
