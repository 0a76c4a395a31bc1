// Public, plain-C++ face of multilevel summation on a CUDA device (dcs/msm.hpp is the CPU one).
// In a build without CUDA make_msm_cuda_backend() exists and throws.
#pragma once

#include <memory>

#include "dcs/backend.hpp"
#include "dcs/msm.hpp"

namespace dcs::cuda {

/// MSM on device options.device around an exact CUDA backend (make_cuda_backend on the same
/// device): prepare() builds the lattices and bins on the CPU (msm_prepare_host, on
/// options.threads threads) and uploads the finest lattice and the binned atoms; compute_slab()
/// sums each point's short-range part and interpolates the lattice on the device
/// (kernels/src/msm/). A point's value is the same bits for any slab split and device count
/// (not the CPU backend's bits: float short-range sums). statistics(), difference(),
/// compute_points() and allocate_host() are the wrapped backend's.
std::unique_ptr<PotentialBackend> make_msm_cuda_backend(std::unique_ptr<PotentialBackend> exact,
                                                        const MsmParameters& parameters,
                                                        const BackendOptions& options);

}  // namespace dcs::cuda
