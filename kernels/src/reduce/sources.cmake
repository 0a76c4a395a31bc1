# The reduction family (kernels/src/reduce/): included by kernels/CMakeLists.txt inside the CUDA
# branch, paths relative to kernels/. The names and summaries are the variant table's
# (dcs/variants.hpp), so the CPU-only stub (cuda_stub.cpp) lists them without a source here.
# The books' own float-sum kernels and the benchmarks are bench/'s (bench/src/cuda/).
set(DCS_REDUCE_SOURCES
  src/reduce/device_reduce.cu
)
