// The images of the atoms in a region, binned (ghost_atoms.hpp): a count per atom, an exclusive
// scan, the images written at their atom's offset in a fixed order of translations, then the bin
// sort shared with the MSM atoms (bin_sort.hpp: a stable radix sort by bin, the gather, each
// bin's first image).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <limits>
#include <string>

#include "bin_sort.cuh"
#include "cuda_check.hpp"
#include "dcs/error.hpp"
#include "ewald_device.cuh"
#include "ghost_atoms.hpp"

namespace dcs::cuda::detail {
namespace {

/// The translations n[a] in [lo[a], hi[a]] that can bring an image of a wrapped atom into the
/// region (from the region's corners in fractional coordinates).
struct Translations {
  int lo[3], hi[3];
};

__device__ inline bool inside(const Region& region, const double r[3]) {
  return r[0] >= region.lower[0] && r[0] <= region.upper[0] && r[1] >= region.lower[1] &&
         r[1] <= region.upper[1] && r[2] >= region.lower[2] && r[2] <= region.upper[2];
}

/// Calls f(image position, translation) for every image of atom i inside the region, in the
/// fixed order n0, then n1, then n2 (n2 fastest).
template <class F>
__device__ inline void for_each_image(const double* positions, std::size_t i, const CellRows& cell,
                                      const Region& region, const Translations& t, F&& f) {
  double s[3];
  wrapped_fractional(cell, positions[3 * i], positions[3 * i + 1], positions[3 * i + 2], s);
  int n[3];
  for (n[0] = t.lo[0]; n[0] <= t.hi[0]; ++n[0])
    for (n[1] = t.lo[1]; n[1] <= t.hi[1]; ++n[1])
      for (n[2] = t.lo[2]; n[2] <= t.hi[2]; ++n[2]) {
        double r[3];
        to_cartesian(cell, s, n, r);
        if (inside(region, r)) f(r, n);
      }
}

__global__ void __launch_bounds__(kBinThreads)
    count_kernel(const double* __restrict__ positions, std::size_t n, CellRows cell, Region region,
                 Translations t, std::uint32_t* __restrict__ counts) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kBinThreads) + threadIdx.x;
  if (i >= n) return;
  std::uint32_t count = 0;
  for_each_image(positions, i, cell, region, t, [&](const double*, const int*) { ++count; });
  counts[i] = count;
}

__global__ void __launch_bounds__(kBinThreads)
    emit_kernel(const double* __restrict__ positions, const double* __restrict__ charges,
                std::size_t n, CellRows cell, Region region, Translations t, EwaldBins bins,
                const std::uint32_t* __restrict__ offsets, EwaldAtom* __restrict__ images,
                std::uint32_t* __restrict__ keys, std::uint32_t* __restrict__ order) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kBinThreads) + threadIdx.x;
  if (i >= n) return;
  std::uint32_t slot = offsets[i];
  const float q = static_cast<float>(charges[i]);
  for_each_image(positions, i, cell, region, t, [&](const double* r, const int* shift) {
    const bool home = shift[0] == 0 && shift[1] == 0 && shift[2] == 0;
    images[slot] = EwaldAtom{r[0], r[1], r[2], q, home ? static_cast<std::uint32_t>(i) : kGhost};
    long long c[3];
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      const long long cell_index =
          static_cast<long long>(floor((r[d] - bins.lower[d]) / bins.side));
      c[d] = cell_index < 0 ? 0 : cell_index < bins.n[d] - 1 ? cell_index : bins.n[d] - 1;
    }
    keys[slot] = static_cast<std::uint32_t>((c[2] * bins.n[1] + c[1]) * bins.n[0] + c[0]);
    order[slot] = static_cast<std::uint32_t>(slot);
    ++slot;
  });
}

Translations translations(const CellRows& cell, const Region& region) {
  Translations t{};
  for (int a = 0; a < 3; ++a) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (int corner = 0; corner < 8; ++corner) {
      double s = 0.0;
      for (int i = 0; i < 3; ++i)
        s += ((corner >> i) & 1 ? region.upper[i] : region.lower[i]) * cell.star[a][i];
      lo = std::min(lo, s);
      hi = std::max(hi, s);
    }
    if (!(hi - lo < 1e6)) throw UsageError("CUDA ewald: the map spans over a million cells");
    t.lo[a] = static_cast<int>(std::floor(lo)) - 1;
    t.hi[a] = static_cast<int>(std::ceil(hi));
  }
  return t;
}

}  // namespace

EwaldBins bin_images(const double* d_positions, const double* d_charges, std::size_t n,
                     const CellRows& cell, const Region& region, double side,
                     std::size_t max_images, DeviceBuffer<EwaldAtom>& atoms,
                     DeviceBuffer<std::uint32_t>& start, StreamView stream) {
  if (n == 0) throw UsageError("CUDA ewald: no atoms");
  const Translations t = translations(cell, region);
  // Counts, their exclusive scan and the total.
  // 32-bit counts and offsets (cub's 64-bit scan spills registers): refused where the
  // translations tried could make 2^32 images or more.
  const double candidates = static_cast<double>(n) * (t.hi[0] - t.lo[0] + 1) *
                            (t.hi[1] - t.lo[1] + 1) * (t.hi[2] - t.lo[2] + 1);
  if (!(candidates < 4.0e9))
    throw UsageError("CUDA ewald: " + std::to_string(n) +
                     " atoms and the images the map's region needs exceed the device's 32-bit "
                     "image offsets; give a grid over the cell (leave out --origin/--center/"
                     "--padding)");
  DeviceBuffer<std::uint32_t> counts(n), offsets(n + 1);
  count_kernel<<<bin_blocks(n), kBinThreads, 0, stream.get()>>>(d_positions, n, cell, region, t,
                                                                counts.data());
  DCS_CUDA_CHECK_LAUNCH("ewald_count_images", stream.get());
  std::size_t temp_bytes = 0;
  DCS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, counts.data(), offsets.data(),
                                               static_cast<std::int64_t>(n), stream.get()));
  {
    DeviceBuffer<unsigned char> temp(temp_bytes);
    DCS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, counts.data(),
                                                 offsets.data(), static_cast<std::int64_t>(n),
                                                 stream.get()));
    stream.synchronize();
  }
  std::uint32_t last_offset = 0, last_count = 0;
  offsets.download(&last_offset, 1, stream, n - 1);
  counts.download(&last_count, 1, stream, n - 1);
  stream.synchronize();
  const std::uint64_t total = std::uint64_t{last_offset} + last_count;
  if (total == 0) throw InternalError("CUDA ewald: no image of any atom in the region of work");
  if (total > max_images || total >= std::numeric_limits<std::uint32_t>::max())
    throw UsageError("CUDA ewald: the map's region holds " + std::to_string(total) +
                     " images of the atoms, more than the device holds (" +
                     std::to_string(max_images) +
                     "); give a grid over the cell (leave out --origin/--center/--padding)");
  // Bins about `side` across, coarser where there would be more bins than twice the images.
  EwaldBins bins;
  double extent[3];
  for (int d = 0; d < 3; ++d) extent[d] = region.upper[d] - region.lower[d];
  for (;; side *= 1.25) {
    long long count = 1;
    for (int d = 0; d < 3; ++d) {
      bins.n[d] = std::max(1, static_cast<int>(std::ceil(extent[d] / side)));
      count *= bins.n[d];
    }
    if (count <= 2 * static_cast<long long>(total) + 64) break;
  }
  for (int d = 0; d < 3; ++d) bins.lower[d] = region.lower[d];
  bins.side = side;
  const long long bin_count = static_cast<long long>(bins.n[0]) * bins.n[1] * bins.n[2];
  if (bin_count >= static_cast<long long>(std::numeric_limits<std::uint32_t>::max()))
    throw UsageError("CUDA ewald: " + std::to_string(bin_count) +
                     " bins exceed the device sort's 32-bit keys");

  const std::size_t images_n = static_cast<std::size_t>(total);
  DeviceBuffer<EwaldAtom> images(images_n);
  BinSort sort(images_n);
  emit_kernel<<<bin_blocks(n), kBinThreads, 0, stream.get()>>>(
      d_positions, d_charges, n, cell, region, t, bins, offsets.data(), images.data(), sort.keys(),
      sort.order());
  DCS_CUDA_CHECK_LAUNCH("ewald_emit_images", stream.get());
  sort.sort(bin_count, stream);
  gather_sorted(images.data(), images_n, sort, atoms, stream, "ewald_gather_images");
  sort.starts(bin_count, start, stream, "ewald_bin_starts");
  stream.synchronize();  // the temporaries are freed on return
  bins.d_atoms = atoms.data();
  bins.d_start = start.data();
  return bins;
}

}  // namespace dcs::cuda::detail
