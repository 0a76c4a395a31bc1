// Binning on the device (atom_bins.hpp): keys, cub::DeviceRadixSort::SortPairs (an LSD radix
// sort, stable: equal keys keep their input order), a gather of the atoms into that order, and
// each bin's start from the sorted keys. Every output element is written by one thread from
// data fixed by the input, so the result does not depend on scheduling.
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <limits>
#include <string>

#include "atom_bins.hpp"
#include "cuda_check.hpp"
#include "dcs/error.hpp"

namespace dcs::cuda::detail {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__global__ void __launch_bounds__(kThreads)
    bin_keys_kernel(const MsmAtom* __restrict__ atoms, std::size_t n, BoxBins bins,
                    std::uint32_t* __restrict__ keys, std::uint32_t* __restrict__ order) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x;
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

__global__ void __launch_bounds__(kThreads)
    gather_kernel(const MsmAtom* __restrict__ atoms, const std::uint32_t* __restrict__ order,
                  std::size_t n, MsmAtom* __restrict__ sorted) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x;
  if (i < n) sorted[i] = atoms[order[i]];
}

/// start[b] = the first sorted position whose key is >= b (a binary search per bin; b = count
/// gives n): one thread per bin, so no bin's start waits on a long run of empty bins.
__global__ void __launch_bounds__(kThreads)
    starts_kernel(const std::uint32_t* __restrict__ keys, std::size_t n, long long count,
                  std::uint32_t* __restrict__ start) {
  const long long b = blockIdx.x * static_cast<long long>(kThreads) + threadIdx.x;
  if (b > count) return;
  std::size_t lo = 0, hi = n;  // the answer is in [lo, hi]
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (static_cast<long long>(keys[mid]) < b) lo = mid + 1;
    else hi = mid;
  }
  start[b] = static_cast<std::uint32_t>(lo);
}

__global__ void __launch_bounds__(kThreads)
    lattice_units_kernel(MsmAtom* __restrict__ atoms, std::size_t n, double ox, double oy,
                         double oz, double h) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x;
  if (i >= n) return;
  MsmAtom a = atoms[i];
  a.x = (a.x - ox) / h;
  a.y = (a.y - oy) / h;
  a.z = (a.z - oz) / h;
  atoms[i] = a;
}

int key_bits(long long count) {
  int bits = 1;
  while (bits < 32 && (1LL << bits) < count) ++bits;
  return bits;
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
  DeviceBuffer<std::uint32_t> keys(n), keys_alt(n), order(n), order_alt(n);
  bin_keys_kernel<<<blocks_for(n), kThreads, 0, stream.get()>>>(d_atoms, n, bins, keys.data(),
                                                                order.data());
  DCS_CUDA_CHECK_LAUNCH("msm_bin_keys", stream.get());
  // Only the bits a bin index can use: fewer radix passes.
  cub::DoubleBuffer<std::uint32_t> key_buffers(keys.data(), keys_alt.data());
  cub::DoubleBuffer<std::uint32_t> order_buffers(order.data(), order_alt.data());
  const int bits = key_bits(count);
  std::size_t temp_bytes = 0;
  DCS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, key_buffers, order_buffers,
                                                 static_cast<std::int64_t>(n), 0, bits,
                                                 stream.get()));
  DeviceBuffer<unsigned char> temp(temp_bytes);
  DCS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, key_buffers,
                                                 order_buffers, static_cast<std::int64_t>(n), 0,
                                                 bits, stream.get()));
  sorted = DeviceBuffer<MsmAtom>();
  sorted = DeviceBuffer<MsmAtom>(n);
  gather_kernel<<<blocks_for(n), kThreads, 0, stream.get()>>>(d_atoms, order_buffers.Current(), n,
                                                              sorted.data());
  DCS_CUDA_CHECK_LAUNCH("msm_bin_gather", stream.get());
  start = DeviceBuffer<std::uint32_t>();
  start = DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(count) + 1);
  starts_kernel<<<blocks_for(static_cast<std::size_t>(count) + 1), kThreads, 0, stream.get()>>>(
      key_buffers.Current(), n, count, start.data());
  DCS_CUDA_CHECK_LAUNCH("msm_bin_starts", stream.get());
  // cudaFree waits for the device anyway; synchronize so the frees below are plainly safe.
  stream.synchronize();
}

void to_lattice_units(MsmAtom* d_atoms, std::size_t n, const double origin[3], double h,
                      StreamView stream) {
  if (n == 0) return;
  lattice_units_kernel<<<blocks_for(n), kThreads, 0, stream.get()>>>(d_atoms, n, origin[0],
                                                                     origin[1], origin[2], h);
  DCS_CUDA_CHECK_LAUNCH("msm_lattice_units", stream.get());
}

}  // namespace dcs::cuda::detail
