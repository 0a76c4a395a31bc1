// The images of a cell's atoms that lie in a region of work, binned in space on the device
// (ghost_atoms.cu): every atom wrapped into the cell (fractional coordinates in [0, 1)), then each
// of its images inside the region (the map's box, or the cell's, grown by the real-space cutoff)
// kept, then a stable sort by bin. Every output element comes from data fixed by the input, so the
// binned images are the same bits on every run and device. Private to dcs::cuda.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device_buffer.hpp"
#include "ewald_kernels.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

/// An axis-aligned box (Å).
struct Region {
  double lower[3] = {0, 0, 0};
  double upper[3] = {0, 0, 0};
};

/// The images of the n atoms (d_positions: x, y, z each; d_charges: e) inside `region`, in bins of
/// about `side` Å (coarser where more bins than twice the images would be), into `atoms` and
/// `start`; returns the bins' description (pointing into those buffers). Refuses (UsageError)
/// more than `max_images` images (the device memory the caller measured) or 2^32 - 2 of them.
EwaldBins bin_images(const double* d_positions, const double* d_charges, std::size_t n,
                     const CellRows& cell, const Region& region, double side,
                     std::size_t max_images, DeviceBuffer<EwaldAtom>& atoms,
                     DeviceBuffer<std::uint32_t>& start, StreamView stream);

}  // namespace dcs::cuda::detail
