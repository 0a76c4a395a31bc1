// dcs::cuda in a build without CUDA (DCS_ENABLE_CUDA=OFF): the same public functions, so callers
// never need #ifdefs. No device is ever available; the variant lists still come from the
// variant table (dcs/variants.hpp) the CUDA build's registries check themselves against, so
// `dcs kernels` shows what a CUDA build would offer.
#include <string>
#include <vector>

#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/error.hpp"

namespace dcs::cuda {
namespace {
constexpr const char* kReason = "built without CUDA";
}  // namespace

bool cuda_available() noexcept { return false; }

std::string cuda_unavailable_reason() { return kReason; }

std::vector<DeviceInfo> cuda_devices() { return {}; }

std::unique_ptr<PotentialBackend> make_cuda_backend(const BackendOptions&) {
  throw CudaError(std::string("the CUDA backend is not available: ") + kReason);
}

std::vector<VariantInfo> cuda_kernel_variants() {
  return variant_infos(BackendKind::Cuda, VariantKind::Potential);
}

std::vector<VariantInfo> cuda_reduction_variants() {
  return variant_infos(BackendKind::Cuda, VariantKind::Reduction);
}

}  // namespace dcs::cuda
