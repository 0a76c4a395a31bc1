# Multilevel summation on the device: the binning, the lattice hierarchy, the slab kernel and
# the backend (the plan of the lattices comes from libdcs/src/msm/plan.cpp). Included by
# kernels/CMakeLists.txt inside the CUDA branch.
set(DCS_MSM_SOURCES
  src/msm/atom_bins.cu
  src/msm/lattice_kernels.cu
  src/msm/device_lattice.cpp
  src/msm/msm_kernels.cu
  src/msm/msm_cuda_backend.cpp
)
# Flush-to-zero for the kernel's rsqrtf (r^2 is clamped to min_distance^2 > 0 first).
dcs_cuda_flush_to_zero(src/msm/msm_kernels.cu)
