# The nvcc settings shared by every CUDA target of the project: dcs::cuda (kernels/), the
# benchmarks that measure its kernels (bench/) and the GPU tests (tests/cuda/), so all compile
# the kernels the same way.

# dcs_cuda_dialect(<target>): what every CUDA source of the project is compiled with: C++20
# (CMake 3.25, Debian 12's, has no dialect table for nvcc 13, so cuda_std_20 / CUDA_STANDARD fail
# at generate time: the flag is passed directly) and constexpr functions callable on the device.
function(dcs_cuda_dialect target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:-std=c++20;--expt-relaxed-constexpr>")
endfunction()

# dcs_cuda_target(<target>): a library of kernels (dcs::cuda and its benchmarks): the dialect,
# spill warnings, -lineinfo for the profilers in the optimised builds, whole-program compilation.
function(dcs_cuda_target target)
  dcs_cuda_dialect(${target})
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:-Xptxas=-warn-spills>"
    "$<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CONFIG:RelWithDebInfo,Release>>:-lineinfo>")
  set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF
                                             POSITION_INDEPENDENT_CODE ON)
endfunction()

# dcs_cuda_flush_to_zero(<source>...): flush-to-zero makes rsqrtf a single MUFU.RSQ (no denormal
# fix-up around it). For the potential kernels, which clamp r^2 to min_distance^2 > 0 first so no
# denormal ever reaches it, and for the benchmarks and tests that run them or their rsqrt ceiling.
function(dcs_cuda_flush_to_zero)
  set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS
                              "$<$<COMPILE_LANGUAGE:CUDA>:-ftz=true>")
endfunction()
