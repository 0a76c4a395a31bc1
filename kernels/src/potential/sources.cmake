# The CUDA backend outside reduce/: the backend, device queries, error and launch helpers, the
# bin sort (msm and periodic) and the potential kernels with their registry. Included by
# kernels/CMakeLists.txt inside the CUDA branch; paths are relative to kernels/. (The
# benchmarks are bench/'s.)
set(DCS_POTENTIAL_SOURCES
  src/bin_sort.cu
  src/cuda_backend.cu
  src/cuda_check.cpp
  src/device_info.cu
  src/launch.cpp
  src/potential/registry.cu
  src/potential/scatter.cu
  src/potential/gather.cu
  src/potential/production.cu
)

# Flush-to-zero for the rsqrtf of the kernels (cmake/DcsCuda.cmake says why).
dcs_cuda_flush_to_zero(src/potential/scatter.cu src/potential/gather.cu src/potential/production.cu)
