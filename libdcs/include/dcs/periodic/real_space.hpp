// The real-space part of the Ewald sum for a map or at the atoms: Σ_j Σ_n q_j erfc(β r)/r over
// every periodic image n of every charge j within the cutoff, r = |p - r_j - n|. The charges
// are wrapped into the cell and binned on a cell list in fractional coordinates (bins about
// half a cutoff across the lattice planes); a point visits the bins, with the image shift of
// each, that can hold a charge within the cutoff. Each point's sum runs over the bins and
// their atoms in a fixed order, so the result is the same bits for any thread count.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "dcs/unit_cell.hpp"
#include "dcs/vec3.hpp"

namespace dcs::periodic {

class RealSpaceSum {
 public:
  /// Bins `positions` (Å, anywhere: they are wrapped) with their `charges` (e) for Ewald
  /// parameter `beta` (Å⁻¹) and `cutoff` (Å, any length: images beyond the neighbour cells are
  /// visited as well). The cell must be periodic.
  RealSpaceSum(std::span<const Vec3> positions, std::span<const double> charges,
               const UnitCell& cell, double beta, double cutoff);

  /// out[i] = Σ q erfc(β r)/r (e/Å) at points[i], r clamped below at `min_distance` (Å).
  void potential_at(std::span<const Vec3> points, std::span<double> out, double min_distance,
                    unsigned threads) const;

  /// out[i] at atom i from every other atom and every image of all atoms, atom i's own n = 0
  /// term left out (out has one value per atom, in the input order).
  void potential_at_atoms(std::span<double> out, unsigned threads) const;

  const std::array<int, 3>& bins() const noexcept { return bins_; }

 private:
  /// The sum at wrapped point `p` in bin `bin`; `own` is the sorted slot to skip at n = 0
  /// (or npos).
  double sum_at(const Vec3& p, const std::array<int, 3>& bin, std::size_t own,
                double min_distance) const;
  std::array<int, 3> bin_of(const Vec3& fractional) const noexcept;

  UnitCell cell_;
  double beta_, cutoff_;
  std::array<int, 3> bins_{};
  std::array<int, 3> reach_{};         ///< bins visited on each side of a point's bin
  std::vector<std::size_t> starts_;    ///< first sorted slot of each bin (+ one past the end)
  std::vector<double> x_, y_, z_, q_;  ///< wrapped positions and charges, in bin order
  std::vector<std::size_t> slot_of_;   ///< sorted slot of each input atom
  std::vector<std::array<int, 3>> atom_bin_;  ///< bin of each input atom
};

}  // namespace dcs::periodic
