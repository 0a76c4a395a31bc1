// The GPU benchmarks of `dcs bench` (target dcs::cuda_bench, bench/src/cuda/): they launch the
// kernels of dcs::cuda directly, so they live beside it rather than in it. In a build without
// CUDA they throw CudaError, as the backend does.
#pragma once

#include <vector>

#include "dcs/bench.hpp"

namespace dcs::cuda {

/// `dcs bench --potential`: the rsqrt ceiling microbenchmark, then every selected kernel of the
/// variant table on every grid x atom count, as atom-evaluations/s and % of the ceiling.
std::vector<BenchTable> benchmark_potential_kernels(const BenchOptions& options);
/// `dcs bench --reductions`: GB/s of every variant, % of a device copy, ratio to CUB.
std::vector<BenchTable> benchmark_reductions(const BenchOptions& options);

}  // namespace dcs::cuda
