# The periodic (Ewald) method on the device: the binned images of the atoms, smooth PME with
# cuFFT, the map and points kernels and the backend (the parameters come from
# libdcs/src/periodic/ewald_parameters.cpp, as on the CPU). Included by kernels/CMakeLists.txt
# inside the CUDA branch; ewald_stub.cpp stands in for a build without CUDA.
set(DCS_PERIODIC_SOURCES
  src/periodic/ghost_atoms.cu
  src/periodic/pme_mesh.cu
  src/periodic/ewald_sums.cu
  src/periodic/ewald_cuda_backend.cpp
)
