// The MSM long-range lattice steps on the device (plain C++ launch wrappers; lattice_kernels.cu
// holds the kernels). Every kernel is a gather: each output value is summed by one thread over
// its inputs in a fixed order, in double, with no atomics, so a lattice is the same bits on
// every run and device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dcs/host_device.hpp"
#include "msm_kernels.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

/// Lattice indices lo .. lo + n - 1 per axis, x fastest.
struct LatticeExtent {
  int lo[3] = {0, 0, 0};
  int n[3] = {0, 0, 0};
  DCS_HD std::size_t points() const noexcept {
    return static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) *
           static_cast<std::size_t>(n[2]);
  }
};

/// q[m] = sum_i q_i Phi(u_i - m) over the atoms, given in lattice units (to_lattice_units) and
/// sorted by lattice cell floor(u) (cells[0] x cells[1] x cells[2] from cell 0, x fastest, with
/// cell_start as bin_atoms makes it). Each point gathers the (order)^3 cells that reach it, cells
/// in (z, y, x) order and atoms in their sorted order.
void launch_msm_anterpolate(const MsmAtom* d_cell_atoms, const std::uint32_t* d_cell_start,
                            const int cells[3], const LatticeExtent& q, int order, double* d_q,
                            StreamView stream);

/// One axis of the two-scale transfer (libdcs/src/msm/lattice.cpp transfer_axis): restrict
/// out_m = sum_k J_k in_{2m+k}; prolong out_n += sum_m J_{n-2m} in_m (m increasing). `in` and
/// `out` agree on the other two axes. J[k + reach] = J_k, reach <= kMaxReach.
inline constexpr int kMaxReach = 5;
struct TransferWeights {
  double J[2 * kMaxReach + 1] = {};
  int reach = 0;
};
void launch_msm_transfer(bool prolong, int axis, const TransferWeights& weights,
                         const LatticeExtent& in, const double* d_in, const LatticeExtent& out,
                         double* d_out, StreamView stream);

/// e_n = scale * sum_d K(d) q_{n+d}, K(d) = by_d2[dx^2 + dy^2 + dz^2] on |d_axis| <= radius,
/// each point summed in (dz, dy, dx) order with fma. `direct`: one thread per point, every tap
/// (the top level's all-pairs sum, and the oracle of the tiled kernel). `tiled` (radius R on
/// every axis, R <= kMaxTiledRadius): 64 x 8 x 8 points per block of 32 x 8 threads, input
/// planes staged in shared memory one at a time, each thread 2 x 8 accumulators; it skips only
/// taps whose kernel value is 0 (d_span: MsmLatticePlan::cutoff_span) and sources outside the
/// lattice, which add exactly +0, so it gives the direct kernel's bits.
inline constexpr int kMaxTiledRadius = 40;
void launch_msm_direct_sum(const LatticeExtent& extent, const double* d_q, const double* d_by_d2,
                           const int radius[3], double scale, double* d_e, StreamView stream);
/// Whether the tiled kernel runs for radius R on the current device (shared memory fits).
bool msm_tiled_sum_fits(int R);
void launch_msm_tiled_sum(const LatticeExtent& extent, const double* d_q, const double* d_by_d2,
                          const int* d_span, int R, double scale, double* d_e, StreamView stream);

}  // namespace dcs::cuda::detail
