// Whole molecules along the bonds (dcs/periodic/whole.hpp).
#include "dcs/periodic/whole.hpp"

#include <algorithm>
#include <cmath>

#include "dcs/error.hpp"

namespace dcs {

MoleculeGraph::MoleculeGraph(std::size_t atoms,
                             const std::vector<std::array<std::size_t, 2>>& bonds)
    : atoms_(atoms) {
  bonds_.reserve(bonds.size());
  for (auto bond : bonds) {
    if (bond[0] >= atoms || bond[1] >= atoms || bond[0] == bond[1])
      throw InternalError("MoleculeGraph: a bond outside the atoms or to itself");
    if (bond[0] > bond[1]) std::swap(bond[0], bond[1]);
    bonds_.push_back(bond);
  }
  std::sort(bonds_.begin(), bonds_.end());
  bonds_.erase(std::unique(bonds_.begin(), bonds_.end()), bonds_.end());

  // Adjacency in compressed rows, then a breadth-first walk from each unvisited atom in index
  // order: the order (and so every placement) depends only on the topology.
  std::vector<std::size_t> degree(atoms + 1, 0);
  for (const auto& bond : bonds_) {
    ++degree[bond[0] + 1];
    ++degree[bond[1] + 1];
  }
  for (std::size_t i = 0; i < atoms; ++i) degree[i + 1] += degree[i];
  std::vector<std::size_t> neighbours(degree[atoms]);
  std::vector<std::size_t> fill(degree.begin(), degree.end() - 1);
  for (const auto& bond : bonds_) {
    neighbours[fill[bond[0]]++] = bond[1];
    neighbours[fill[bond[1]]++] = bond[0];
  }
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  molecule_of_.assign(atoms, kNone);
  order_.reserve(atoms);
  for (std::size_t root = 0; root < atoms; ++root) {
    if (molecule_of_[root] != kNone) continue;
    const std::size_t molecule = molecule_starts_.size();
    molecule_starts_.push_back(order_.size());
    molecule_of_[root] = molecule;
    order_.push_back({root, root});
    for (std::size_t next = order_.size() - 1; next < order_.size(); ++next) {
      const std::size_t atom = order_[next][0];
      for (std::size_t k = degree[atom]; k < degree[atom + 1]; ++k) {
        const std::size_t other = neighbours[k];
        if (molecule_of_[other] != kNone) continue;
        molecule_of_[other] = molecule;
        order_.push_back({other, atom});
      }
    }
  }
}

WholeReport MoleculeGraph::make_whole(const UnitCell& cell, std::vector<Vec3>& positions) const {
  if (positions.size() != atoms_) throw InternalError("MoleculeGraph::make_whole: atom count");
  WholeReport report;
  if (!cell.is_periodic()) return report;
  for (const auto& [atom, parent] : order_) {
    if (atom == parent) continue;
    const Vec3& p = positions[parent];
    const Vec3 d = cell.minimum_image(
        {positions[atom][0] - p[0], positions[atom][1] - p[1], positions[atom][2] - p[2]});
    positions[atom] = {p[0] + d[0], p[1] + d[1], p[2] + d[2]};
  }
  const double half = 0.5 * cell.shortest_width();
  for (const auto& [i, j] : bonds_) {
    const double length =
        std::hypot(positions[i][0] - positions[j][0], positions[i][1] - positions[j][1],
                   positions[i][2] - positions[j][2]);
    report.longest_bond = std::max(report.longest_bond, length);
    if (length >= half) ++report.long_bonds;
  }
  return report;
}

void MoleculeGraph::wrap_molecules(const UnitCell& cell, std::vector<Vec3>& positions) const {
  if (positions.size() != atoms_) throw InternalError("MoleculeGraph::wrap_molecules: atom count");
  if (!cell.is_periodic()) return;
  for (std::size_t m = 0; m < molecule_starts_.size(); ++m) {
    const std::size_t begin = molecule_starts_[m];
    const std::size_t end =
        m + 1 < molecule_starts_.size() ? molecule_starts_[m + 1] : order_.size();
    Vec3 centre{0.0, 0.0, 0.0};
    for (std::size_t k = begin; k < end; ++k)
      for (int a = 0; a < 3; ++a) centre[a] += positions[order_[k][0]][a];
    for (int a = 0; a < 3; ++a) centre[a] /= static_cast<double>(end - begin);
    const Vec3 inside = cell.wrap(centre);
    const Vec3 move{inside[0] - centre[0], inside[1] - centre[1], inside[2] - centre[2]};
    if (move[0] == 0.0 && move[1] == 0.0 && move[2] == 0.0) continue;
    for (std::size_t k = begin; k < end; ++k)
      for (int a = 0; a < 3; ++a) positions[order_[k][0]][a] += move[a];
  }
}

}  // namespace dcs
