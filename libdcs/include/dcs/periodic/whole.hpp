// Molecules made whole across the cell boundary, as `gmx trjconv -pbc mol` and MDAnalysis's
// `unwrap` do: MD engines write each atom's image inside the box, so a molecule that straddles
// a face comes out in pieces a box width apart. Along the topology's bonds each atom is placed
// at the image nearest the atom it is bonded to, starting from the first atom of each molecule
// (a connected set of bonded atoms).
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "dcs/unit_cell.hpp"
#include "dcs/vec3.hpp"

namespace dcs {

/// What making one frame whole found.
struct WholeReport {
  /// Bonds still at least half the cell's shortest width long once whole (a molecule that spans
  /// the box, such as a polymer bonded to its own image, or a damaged frame): these cannot be
  /// told apart from a bond across the boundary.
  std::size_t long_bonds = 0;
  double longest_bond = 0.0;  ///< Å, over every bond after making whole
};

class MoleculeGraph {
 public:
  /// The molecules of `atoms` atoms bonded by `bonds` (0-based index pairs, each < atoms; a
  /// pair listed twice counts once). Atoms without bonds are molecules of their own.
  MoleculeGraph(std::size_t atoms, const std::vector<std::array<std::size_t, 2>>& bonds);

  std::size_t atoms() const noexcept { return atoms_; }
  std::size_t molecules() const noexcept { return molecule_starts_.size(); }
  std::size_t bonds() const noexcept { return bonds_.size(); }
  /// The molecule of each atom (0-based, numbered by their lowest atom index).
  const std::vector<std::size_t>& molecule_of() const noexcept { return molecule_of_; }

  /// Moves atoms by whole cell vectors so that every molecule is whole; positions.size() must
  /// be atoms(). An infinite cell changes nothing. The first atom of each molecule stays put.
  WholeReport make_whole(const UnitCell& cell, std::vector<Vec3>& positions) const;

  /// Moves each molecule (made whole first) by whole cell vectors so that its centre of
  /// geometry lies in the cell, fractional [0, 1)³ (gmx trjconv -pbc mol after -center).
  void wrap_molecules(const UnitCell& cell, std::vector<Vec3>& positions) const;

 private:
  std::size_t atoms_ = 0;
  std::vector<std::array<std::size_t, 2>> bonds_;  ///< unique, first < second
  /// Breadth-first order over each molecule: (atom, the atom it is placed next to); a
  /// molecule's first atom has itself as parent.
  std::vector<std::array<std::size_t, 2>> order_;
  std::vector<std::size_t> molecule_of_;
  std::vector<std::size_t> molecule_starts_;  ///< index into order_ of each molecule's first atom
};

}  // namespace dcs
