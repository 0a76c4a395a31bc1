# The CUDA backend outside reduce/: the backend, device queries, error and launch helpers and
# the potential kernels with their registry. Included by kernels/CMakeLists.txt inside the CUDA
# branch; paths are relative to kernels/. (The benchmarks are bench/'s.)
set(DCS_POTENTIAL_SOURCES
  src/cuda_backend.cu
  src/cuda_check.cpp
  src/device_info.cu
  src/launch.cpp
  src/potential/registry.cu
  src/potential/scatter.cu
  src/potential/gather.cu
  src/potential/production.cu
)

# Flush-to-zero makes rsqrtf a single MUFU.RSQ (no denormal fix-up around it). The kernels clamp
# r^2 to min_distance^2 > 0 first, so no denormal ever reaches it.
set_source_files_properties(
  src/potential/scatter.cu src/potential/gather.cu src/potential/production.cu
  PROPERTIES COMPILE_OPTIONS "$<$<COMPILE_LANGUAGE:CUDA>:-ftz=true>")
