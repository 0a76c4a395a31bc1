# Multilevel summation on the device: the slab kernel and its backend (the lattices are built on
# the CPU by libdcs/src/msm). Included by kernels/CMakeLists.txt inside the CUDA branch.
set(DCS_MSM_SOURCES
  src/msm/msm_kernels.cu
  src/msm/msm_cuda_backend.cpp
)
# Flush-to-zero for the kernel's rsqrtf (r^2 is clamped to min_distance^2 > 0 first).
dcs_cuda_flush_to_zero(src/msm/msm_kernels.cu)
