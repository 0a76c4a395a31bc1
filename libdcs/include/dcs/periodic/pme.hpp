// Smooth particle-mesh Ewald (Essmann et al. 1995) for the reciprocal part of the periodic
// potential, at arbitrary points: the charges are spread onto a K1 × K2 × K3 mesh in
// fractional coordinates with cardinal B-splines of order p, transformed with FFTW (real to
// complex and back), multiplied by the influence function
//     θ(m) = exp(-π² |m*|² / β²) / (π V |m*|²) · |b1(m1) b2(m2) b3(m3)|²,  m* = m1 a* + m2 b* + m3
//     c*
// (θ(0) = 0: the k = 0 term is left out, i.e. the neutralising background's gauge), and the
// resulting mesh potential is interpolated at any point with the same splines:
//     φ_rec(r) ≈ (4π/V) Σ_{k≠0} exp(-k²/4β²)/k² Re[S(k) e^{-ik·r}].
// FFTW plans are made once per mesh with FFTW_ESTIMATE (no timing of candidate algorithms),
// and run on one thread, so the result is the same bits on every run and for every thread
// count; spreading and interpolation run on all threads in a fixed summation order.
#pragma once

#include <array>
#include <memory>
#include <span>
#include <vector>

#include "dcs/unit_cell.hpp"
#include "dcs/vec3.hpp"

namespace dcs::periodic {

class PmeReciprocal {
 public:
  /// A mesh of `mesh` points along the cell vectors (each ≥ 2·order), B-spline `order` 4..8,
  /// Ewald parameter `beta` (Å⁻¹). Plans the FFTs (throws dcs::Error where FFTW cannot).
  PmeReciprocal(const UnitCell& cell, double beta, std::array<int, 3> mesh, int order);
  ~PmeReciprocal();
  PmeReciprocal(const PmeReciprocal&) = delete;
  PmeReciprocal& operator=(const PmeReciprocal&) = delete;

  /// Spreads the charges (e; positions in Å, anywhere: they are wrapped), transforms and
  /// convolves: afterwards potential_at() reads this charge set's reciprocal potential.
  void solve(std::span<const Vec3> positions, std::span<const double> charges, unsigned threads);

  /// out[i] = φ_rec(points[i]) in e/Å (the k = 0 term excluded); needs solve() first.
  void potential_at(std::span<const Vec3> points, std::span<double> out, unsigned threads) const;

  /// The mesh potential after solve(): φ_rec at mesh point (k1, k2, k3) of the convolved mesh
  /// before interpolation, row-major with k3 fastest (for a map on the PME mesh itself, or a
  /// GPU gather that takes the mesh over).
  std::span<const double> mesh_potential() const noexcept;
  /// θ(m) on the half spectrum the real-to-complex transform keeps, K1 × K2 × (K3/2 + 1) with
  /// m3 fastest, m_i ≥ K_i/2 standing for m_i - K_i (θ(0) = 0); a cuFFT path multiplies by the
  /// same table.
  std::span<const double> influence() const noexcept { return influence_; }
  const std::array<int, 3>& mesh() const noexcept { return mesh_; }
  int order() const noexcept { return order_; }

 private:
  struct Fft;  // the FFTW arrays and plans (fftw3.h stays out of this header)

  UnitCell cell_;
  std::array<int, 3> mesh_;
  int order_;
  std::vector<double> influence_;  ///< θ on the half spectrum K1 × K2 × (K3/2 + 1)
  std::unique_ptr<Fft> fft_;
  bool solved_ = false;
};

}  // namespace dcs::periodic
