// make_ewald_cuda_backend() in a build without CUDA (cuda_stub.cpp's counterpart).
#include <memory>

#include "dcs/cuda/ewald_backend.hpp"
#include "dcs/error.hpp"

namespace dcs::cuda {

std::unique_ptr<PotentialBackend> make_ewald_cuda_backend(std::unique_ptr<PotentialBackend>,
                                                          const periodic::PeriodicSettings&,
                                                          const BackendOptions&) {
  throw CudaError("the periodic method on a CUDA device is not available: built without CUDA");
}

EwaldCudaPrepareTimings ewald_cuda_prepare_timings(const PotentialBackend&) {
  throw CudaError("the periodic method on a CUDA device is not available: built without CUDA");
}

}  // namespace dcs::cuda
