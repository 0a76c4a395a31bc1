// dcs::cuda_bench in a build without CUDA: the same functions, throwing as the backend does.
#include <string>
#include <vector>

#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/cuda_bench.hpp"
#include "dcs/error.hpp"

namespace dcs::cuda {

std::vector<BenchTable> benchmark_potential_kernels(const BenchOptions&) {
  throw CudaError("cannot benchmark the CUDA potential kernels: " + cuda_unavailable_reason());
}

std::vector<BenchTable> benchmark_reductions(const BenchOptions&) {
  throw CudaError("cannot benchmark the CUDA reductions: " + cuda_unavailable_reason());
}

}  // namespace dcs::cuda
