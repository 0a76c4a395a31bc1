# The reduction family (kernels/src/reduce/): included by kernels/CMakeLists.txt inside the CUDA
# branch, paths relative to kernels/. The names and summaries (reduction_registry.hpp) are
# header-only plain C++, so the CPU-only stub (cuda_stub.cpp) lists them without a source here.
set(DCS_REDUCE_SOURCES
  src/reduce/device_reduce.cu
  src/reduce/textbook.cu
  src/reduce/reduce_bench.cu
  src/reduce/reduce_bench.cpp
)

# dcs_reduce_bench: the reduction benchmark and the seed measurements on their own (the device
# runs and scripts/seed_claims.sh use it; `dcs bench --reductions` calls the same
# benchmark_reductions()). Linked against dcs_cuda, defined right after this file is included.
add_executable(dcs_reduce_bench src/reduce/bench_main.cpp)
target_link_libraries(dcs_reduce_bench PRIVATE dcs_cuda dcs::warnings)
target_include_directories(dcs_reduce_bench PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/src")
set_target_properties(dcs_reduce_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/bin")
