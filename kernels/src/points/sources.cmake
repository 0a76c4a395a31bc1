# The points kernel (PotentialBackend::compute_points): the potential at arbitrary points.
# Included by kernels/CMakeLists.txt inside the CUDA branch; paths are relative to kernels/.
set(DCS_POINTS_SOURCES
  src/points/points_kernel.cu
)

# Flush-to-zero for the rsqrtf of the kernel (cmake/DcsCuda.cmake says why): r^2 is clamped to
# min_distance^2 > 0 on the exact path and at least that on the fast path.
dcs_cuda_flush_to_zero(src/points/points_kernel.cu)
