// Error checking for every CUDA runtime call and kernel launch (private to dcs::cuda).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "dcs/error.hpp"

namespace dcs::cuda::detail {

/// Global switch set by --debug-sync (initially on in a -DDCS_DEBUG_SYNC=ON build): launches
/// synchronise and check at once.
bool debug_sync_enabled() noexcept;
void set_debug_sync(bool enabled) noexcept;

/// Logs a CUDA error without throwing (destructors). Defined in a host .cpp so that no .cu file
/// includes spdlog: nvcc's C++20 front end rejects fmt 9's consteval format strings.
void log_cuda_error(const char* what, const char* file, int line, cudaError_t status) noexcept;

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* what, const char* file,
                                          int line) {
  cudaGetLastError();  // clear a non-sticky error so the context stays usable when possible
  throw CudaError(std::string("CUDA error in ") + what + " at " + file + ":" +
                  std::to_string(line) + ": " + cudaGetErrorName(status) + ": " +
                  cudaGetErrorString(status));
}

inline void check_launch(const char* kernel, cudaStream_t stream, const char* file, int line) {
  cudaError_t status = cudaPeekAtLastError();
  if (status == cudaSuccess && debug_sync_enabled()) status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess)
    throw_cuda_error(status, (std::string("launch of kernel '") + kernel + "'").c_str(), file,
                     line);
}

}  // namespace dcs::cuda::detail

/// Throws dcs::CudaError naming the expression, file:line and CUDA's error name and text.
#define DCS_CUDA_CHECK(expr)                                                              \
  do {                                                                                    \
    const cudaError_t dcs_cuda_status_ = (expr);                                          \
    if (dcs_cuda_status_ != cudaSuccess)                                                  \
      ::dcs::cuda::detail::throw_cuda_error(dcs_cuda_status_, #expr, __FILE__, __LINE__); \
  } while (0)

/// Right after every <<<>>>: checks the launch; with debug sync (--debug-sync, or on from the
/// start in a -DDCS_DEBUG_SYNC=ON build) also waits for the kernel so a fault is reported at the
/// kernel that caused it.
#define DCS_CUDA_CHECK_LAUNCH(name, stream) \
  ::dcs::cuda::detail::check_launch(name, stream, __FILE__, __LINE__)

/// For destructors: logs, never throws, ignores cudaErrorCudartUnloading at shutdown.
#define DCS_CUDA_CHECK_NOTHROW(expr)                                                     \
  do {                                                                                   \
    const cudaError_t dcs_cuda_status_ = (expr);                                         \
    if (dcs_cuda_status_ != cudaSuccess && dcs_cuda_status_ != cudaErrorCudartUnloading) \
      ::dcs::cuda::detail::log_cuda_error(#expr, __FILE__, __LINE__, dcs_cuda_status_);  \
  } while (0)
