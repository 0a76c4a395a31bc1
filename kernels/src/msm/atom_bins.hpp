// Atoms binned on the device (plain C++ launch wrappers; atom_bins.cu holds the kernels): a
// stable radix sort of (bin index, atom index), so a bin keeps its atoms in input order and the
// sorted array is the same bits on every run and device, then each bin's first atom.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device_buffer.hpp"
#include "msm_kernels.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

/// Bins of side `side` from `lower`, n[0] x n[1] x n[2], x fastest: an atom's bin on each axis is
/// min(n - 1, floor((x - lower) / side)) (atoms are never below `lower`).
struct BoxBins {
  double lower[3] = {0, 0, 0};
  double side = 1.0;
  long long n[3] = {1, 1, 1};
  long long count() const noexcept { return n[0] * n[1] * n[2]; }
};

/// sorted[...] = atoms in bin order (stable), start[b] = first sorted index of bin b,
/// start[count] = n. `sorted` and `start` are resized here; the temporaries (keys, indices,
/// CUB's workspace: 16 bytes an atom + a little) are freed before returning, after the work
/// they hold is done (the stream is synchronized only then).
void bin_atoms(const MsmAtom* d_atoms, std::size_t n, const BoxBins& bins,
               DeviceBuffer<MsmAtom>& sorted, DeviceBuffer<std::uint32_t>& start,
               StreamView stream);

/// atoms[i] = ((x - origin) / h, (y - ...) / h, (z - ...) / h, q): lattice coordinates, the
/// division as the CPU's anterpolation does it (IEEE double, correctly rounded).
void to_lattice_units(MsmAtom* d_atoms, std::size_t n, const double origin[3], double h,
                      StreamView stream);

}  // namespace dcs::cuda::detail
