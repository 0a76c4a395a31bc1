// Smooth PME's reciprocal part on the device (pme_mesh.cu), the CPU's PmeReciprocal
// (dcs/periodic/pme.hpp) step for step: the charges spread onto the mesh with the same B-spline
// weights, a real-to-complex cuFFT, the influence function θ(m) (computed on the device from the
// same formula and B-spline moduli), the inverse transform. The spreading adds in 64-bit fixed
// point (integer atomics: the sum is the same whatever order the atoms arrive in), so the mesh is
// the same bits on every run and device. Private to dcs::cuda.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "device_buffer.hpp"
#include "ewald_kernels.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

class PmeMesh {
 public:
  PmeMesh() = default;
  ~PmeMesh();
  PmeMesh(const PmeMesh&) = delete;
  PmeMesh& operator=(const PmeMesh&) = delete;

  /// Device bytes a mesh of k points takes (buffers and cuFFT's work areas, estimated).
  static std::size_t bytes(const std::array<int, 3>& k);

  /// Spreads the n charges (d_positions: x, y, z each, anywhere; d_charges: e; abs_charge_sum
  /// Σ|q|, which bounds every mesh value and so sets the fixed point's scale), transforms,
  /// convolves with θ and transforms back; afterwards read() points at φ_rec on the mesh.
  /// `volume` is the cell's (Å³); beta the Ewald parameter (1/Å). The plans are kept while the
  /// mesh keeps its size (a trajectory's frames).
  void solve(const double* d_positions, const double* d_charges, std::size_t n,
             double abs_charge_sum, const CellRows& cell, double volume, double beta,
             const std::array<int, 3>& k, int order, StreamView stream);

  PmeRead read() const;

 private:
  void plan(const std::array<int, 3>& k, StreamView stream);
  void release_plans() noexcept;

  std::array<int, 3> k_{0, 0, 0};
  int order_ = 0;
  CellRows cell_;
  int forward_ = 0, backward_ = 0;  ///< cufftHandle (an int), 0 when not planned
  bool planned_ = false;
  DeviceBuffer<unsigned long long> fixed_;  ///< the charge mesh in fixed point
  DeviceBuffer<double> mesh_;               ///< the charge mesh, then φ_rec
  DeviceBuffer<double> spectrum_;           ///< complex: 2 doubles per half-spectrum point
  DeviceBuffer<double> moduli_;             ///< |b(m)|² per axis, k[0] + k[1] + k[2]
};

}  // namespace dcs::cuda::detail
