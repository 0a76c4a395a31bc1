// Binning on the device (atom_bins.hpp): keys, then the bin sort shared with the Ewald images
// (bin_sort.hpp: a stable radix sort, a gather of the atoms into that order, each bin's start
// from the sorted keys). Every output element is written by one thread from data fixed by the
// input, so the result does not depend on scheduling.
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>

#include "atom_bins.hpp"
#include "bin_sort.cuh"
#include "cuda_check.hpp"
#include "dcs/error.hpp"

namespace dcs::cuda::detail {
namespace {

__global__ void __launch_bounds__(kBinThreads)
    bin_keys_kernel(const MsmAtom* __restrict__ atoms, std::size_t n, BoxBins bins,
                    std::uint32_t* __restrict__ keys, std::uint32_t* __restrict__ order) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kBinThreads) + threadIdx.x;
  if (i >= n) return;
  const MsmAtom atom = atoms[i];
  const double p[3] = {atom.x, atom.y, atom.z};
  long long c[3];
#pragma unroll
  for (int d = 0; d < 3; ++d) {
    // As the CPU's ShortRange::bin and anterpolation compute it.
    const long long cell = static_cast<long long>(floor((p[d] - bins.lower[d]) / bins.side));
    c[d] = cell < bins.n[d] - 1 ? cell : bins.n[d] - 1;
  }
  keys[i] = static_cast<std::uint32_t>((c[2] * bins.n[1] + c[1]) * bins.n[0] + c[0]);
  order[i] = static_cast<std::uint32_t>(i);
}

__global__ void __launch_bounds__(kBinThreads)
    lattice_units_kernel(MsmAtom* __restrict__ atoms, std::size_t n, double ox, double oy,
                         double oz, double h) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kBinThreads) + threadIdx.x;
  if (i >= n) return;
  MsmAtom a = atoms[i];
  a.x = (a.x - ox) / h;
  a.y = (a.y - oy) / h;
  a.z = (a.z - oz) / h;
  atoms[i] = a;
}

}  // namespace

void bin_atoms(const MsmAtom* d_atoms, std::size_t n, const BoxBins& bins,
               DeviceBuffer<MsmAtom>& sorted, DeviceBuffer<std::uint32_t>& start,
               StreamView stream) {
  const long long count = bins.count();
  if (n == 0 || n >= std::numeric_limits<std::uint32_t>::max())
    throw UsageError("CUDA msm: " + std::to_string(n) + " atoms (1 .. 2^32 - 2 supported)");
  if (count < 1 || count >= static_cast<long long>(std::numeric_limits<std::uint32_t>::max()))
    throw UsageError("CUDA msm: " + std::to_string(count) +
                     " bins exceed the device sort's 32-bit keys");
  BinSort sort(n);
  bin_keys_kernel<<<bin_blocks(n), kBinThreads, 0, stream.get()>>>(d_atoms, n, bins, sort.keys(),
                                                                   sort.order());
  DCS_CUDA_CHECK_LAUNCH("msm_bin_keys", stream.get());
  sort.sort(count, stream);
  gather_sorted(d_atoms, n, sort, sorted, stream, "msm_bin_gather");
  sort.starts(count, start, stream, "msm_bin_starts");
  // cudaFree waits for the device anyway; synchronize so the frees below are plainly safe.
  stream.synchronize();
}

void to_lattice_units(MsmAtom* d_atoms, std::size_t n, const double origin[3], double h,
                      StreamView stream) {
  if (n == 0) return;
  lattice_units_kernel<<<bin_blocks(n), kBinThreads, 0, stream.get()>>>(d_atoms, n, origin[0],
                                                                        origin[1], origin[2], h);
  DCS_CUDA_CHECK_LAUNCH("msm_lattice_units", stream.get());
}

}  // namespace dcs::cuda::detail
