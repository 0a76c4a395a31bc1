#include "dcs/atoms.hpp"

#include <algorithm>

namespace dcs {

std::vector<AtomChunk> atom_chunks(std::size_t n_atoms, std::size_t chunk_size) {
  std::vector<AtomChunk> chunks;
  if (chunk_size == 0) chunk_size = kAtomsPerChunk;
  for (std::size_t begin = 0; begin < n_atoms; begin += chunk_size)
    chunks.push_back({begin, std::min(chunk_size, n_atoms - begin)});
  return chunks;
}

std::vector<PackedAtom> pack_atoms(const System& system, const GridSpec& grid, double factor) {
  std::vector<PackedAtom> packed;
  packed.reserve(system.atoms.size());
  for (const Atom& atom : system.atoms)
    packed.push_back({static_cast<float>(atom.position[0] - grid.origin[0]),
                      static_cast<float>(atom.position[1] - grid.origin[1]),
                      static_cast<float>(atom.position[2] - grid.origin[2]),
                      static_cast<float>(atom.charge * factor)});
  return packed;
}

}  // namespace dcs
