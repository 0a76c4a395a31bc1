#include "dcs/atoms.hpp"

#include <algorithm>
#include <cmath>

namespace dcs {

std::vector<AtomChunk> atom_chunks(std::size_t n_atoms, std::size_t chunk_size) {
  std::vector<AtomChunk> chunks;
  if (chunk_size == 0) chunk_size = kAtomsPerChunk;
  for (std::size_t begin = 0; begin < n_atoms; begin += chunk_size)
    chunks.push_back({begin, std::min(chunk_size, n_atoms - begin)});
  return chunks;
}

namespace {

struct AxisSplit {
  float index;
  float residual;
};

// Integer-valued floats are exact below 2^24; 2^22 leaves room for i - index in the kernels.
constexpr double kMaxIndex = 4194304.0;

AxisSplit split_axis(double position, double origin, double spacing) {
  const double relative = position - origin;
  const double index = std::clamp(std::nearbyint(relative / spacing), -kMaxIndex, kMaxIndex);
  return {static_cast<float>(index), static_cast<float>(relative - index * spacing)};
}

}  // namespace

std::vector<GridAtom> pack_grid_atoms(const System& system, const GridSpec& grid, double factor) {
  std::vector<GridAtom> packed;
  packed.reserve(system.atoms.size());
  for (const Atom& atom : system.atoms) {
    const AxisSplit x = split_axis(atom.position[0], grid.origin[0], grid.spacing[0]);
    const AxisSplit y = split_axis(atom.position[1], grid.origin[1], grid.spacing[1]);
    const AxisSplit z = split_axis(atom.position[2], grid.origin[2], grid.spacing[2]);
    packed.push_back({x.index, y.index, z.index, static_cast<float>(atom.charge * factor),
                      x.residual, y.residual, z.residual, 0.0f});
  }
  return packed;
}

}  // namespace dcs
