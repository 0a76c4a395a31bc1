# The CUDA backend outside reduce/: the backend, device queries, error and launch helpers and
# the potential kernels with their registry and benchmark. Included by kernels/CMakeLists.txt
# inside the CUDA branch; paths are relative to kernels/.
set(DCS_POTENTIAL_SOURCES
  src/cuda_backend.cu
  src/cuda_check.cpp
  src/device_info.cu
  src/launch.cpp
  src/potential/registry.cu
  src/potential/scatter.cu
  src/potential/gather.cu
  src/potential/production.cu
  src/potential/potential_bench.cu
)

# Flush-to-zero makes rsqrtf a single MUFU.RSQ (no denormal fix-up around it). The kernels clamp
# r^2 to min_distance^2 > 0 first, so no denormal ever reaches it.
set_source_files_properties(
  src/potential/scatter.cu src/potential/gather.cu src/potential/production.cu
  src/potential/potential_bench.cu
  PROPERTIES COMPILE_OPTIONS "$<$<COMPILE_LANGUAGE:CUDA>:-ftz=true>")

# dcs_potential_bench: the potential benchmark on its own (device runs; `dcs bench --potential`
# calls the same benchmark_potential_kernels()). dcs_cuda is defined right after this file.
add_executable(dcs_potential_bench src/potential/bench_main.cpp)
target_link_libraries(dcs_potential_bench PRIVATE dcs_cuda CUDA::cudart dcs::warnings)
set_target_properties(dcs_potential_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/bin")
