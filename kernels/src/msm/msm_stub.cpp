// make_msm_cuda_backend() in a build without CUDA (cuda_stub.cpp's counterpart).
#include <memory>
#include <string>

#include "dcs/cuda/msm_backend.hpp"
#include "dcs/error.hpp"

namespace dcs::cuda {

std::unique_ptr<PotentialBackend> make_msm_cuda_backend(std::unique_ptr<PotentialBackend>,
                                                        const MsmParameters&,
                                                        const BackendOptions&) {
  throw CudaError("MSM on a CUDA device is not available: built without CUDA");
}

MsmCudaPrepareTimings msm_cuda_prepare_timings(const PotentialBackend&) {
  throw CudaError("MSM on a CUDA device is not available: built without CUDA");
}

MsmLatticeValues msm_cuda_finest_lattice(const PotentialBackend&) {
  throw CudaError("MSM on a CUDA device is not available: built without CUDA");
}

}  // namespace dcs::cuda
