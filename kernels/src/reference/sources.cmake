# The float64 reference at points on the device (PotentialBackend::reference_points). Included
# by kernels/CMakeLists.txt inside the CUDA branch; paths are relative to kernels/.
set(DCS_REFERENCE_SOURCES
  src/reference/reference_kernel.cu
)

# No FMA contraction: r^2 and each term round as in the CPU reference (reference_kernel.cu says
# why). Double sqrt and division stay IEEE-rounded either way; no -ftz (it is for floats).
set_source_files_properties(src/reference/reference_kernel.cu PROPERTIES COMPILE_OPTIONS
                            "$<$<COMPILE_LANGUAGE:CUDA>:-fmad=false>")
