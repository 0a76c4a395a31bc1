// The Coulomb term's edge cases (tests/support/coulomb_term_cases.hpp) in device code: the
// production kernel's two policies, MUFU.RSQ (dcs::HardwareRsqrt) and the FMA-pipe seed +
// cubic (dcs::FmaPipeRsqrt), through dcs::add_coulomb_term with the clamp's max.NaN, compiled
// with -ftz=true like the kernels. Skips, saying why, without a GPU.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coulomb_term_cases.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/physics.hpp"

namespace dcs::test {
namespace {

template <class Rsqrt>
__global__ void add_coulomb_terms_kernel(const float* energy, const float* charge, const float* r2,
                                         const float* min_r2, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = add_coulomb_term(energy[i], charge[i], r2[i], min_r2[i], Rsqrt{});
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

template <class Rsqrt>
struct DeviceEvaluator {
  static std::string name() {
    return std::is_same_v<Rsqrt, FmaPipeRsqrt> ? "device FmaPipeRsqrt"
                                               : "device HardwareRsqrt (MUFU)";
  }
  /// MUFU.RSQ: ~2 ulp; the FMA-pipe cubic: 1.1e-6 (measured on the host in the same arithmetic).
  static double tolerance() { return std::is_same_v<Rsqrt, FmaPipeRsqrt> ? 2e-6 : 6e-7; }
  static std::string unavailable() {
    return cuda::cuda_available() ? std::string() : "no GPU: " + cuda::cuda_unavailable_reason();
  }
  static std::vector<double> evaluate(const std::vector<CoulombTermCase>& cases) {
    const FloatCases f(cases, Rsqrt::kChargeScale);
    const int n = static_cast<int>(cases.size());
    const std::size_t bytes = sizeof(float) * cases.size();
    float* d = nullptr;  // energy, charge, r2, min_r2, out
    check(cudaMalloc(&d, 5 * bytes), "cudaMalloc");
    std::vector<float> out(cases.size());
    try {
      check(cudaMemcpy(d, f.energy.data(), bytes, cudaMemcpyHostToDevice), "copy");
      check(cudaMemcpy(d + n, f.charge.data(), bytes, cudaMemcpyHostToDevice), "copy");
      check(cudaMemcpy(d + 2 * n, f.r2.data(), bytes, cudaMemcpyHostToDevice), "copy");
      check(cudaMemcpy(d + 3 * n, f.min_r2.data(), bytes, cudaMemcpyHostToDevice), "copy");
      add_coulomb_terms_kernel<Rsqrt><<<1, 64>>>(d, d + n, d + 2 * n, d + 3 * n, d + 4 * n, n);
      check(cudaGetLastError(), "launch");
      check(cudaMemcpy(out.data(), d + 4 * n, bytes, cudaMemcpyDeviceToHost), "copy back");
    } catch (...) {
      cudaFree(d);
      throw;
    }
    cudaFree(d);
    return {out.begin(), out.end()};
  }
};

using DeviceEvaluators =
    ::testing::Types<DeviceEvaluator<HardwareRsqrt>, DeviceEvaluator<FmaPipeRsqrt>>;
INSTANTIATE_TYPED_TEST_SUITE_P(Device, CoulombTermTest, DeviceEvaluators);

}  // namespace
}  // namespace dcs::test
