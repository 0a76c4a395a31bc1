// Atoms as the float kernels consume them, and the chunking every backend shares.
//
// Positions are stored relative to the grid origin, so that a kernel computes a point's
// coordinate as i*h in float without losing digits to a large absolute origin; charges are
// pre-multiplied by the Coulomb factor, so a kernel sums q'/r and writes the result as is.
#pragma once

#include <cstddef>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/physics.hpp"
#include "dcs/types.hpp"

namespace dcs {

/// Layout-compatible with CUDA's float4 (16 bytes, 16-byte aligned).
struct alignas(16) PackedAtom {
  float x, y, z;  ///< Å, relative to the grid origin
  float q;        ///< charge (e) times coulomb_factor(physics)
};
static_assert(sizeof(PackedAtom) == 16, "PackedAtom must match float4");

/// Atoms per chunk: what 64 KB of CUDA constant memory holds (4096 float4) with room to spare,
/// as in PMPP's cenergy (MAX_ATOMS 4000). Every backend walks the atoms chunk by chunk, so a
/// float32 accumulation error is bounded per chunk and the GPU and CPU paths sum in the same
/// order of chunks.
inline constexpr std::size_t kAtomsPerChunk = 4000;

struct AtomChunk {
  std::size_t begin = 0;  ///< index of the first atom
  std::size_t count = 0;  ///< 1..kAtomsPerChunk
};

/// Splits n atoms into consecutive chunks of at most `chunk_size` (the last may be shorter).
/// n = 0 gives no chunks.
std::vector<AtomChunk> atom_chunks(std::size_t n_atoms, std::size_t chunk_size = kAtomsPerChunk);

/// Packs atoms for the float kernels: origin-relative positions and factor-scaled charges.
std::vector<PackedAtom> pack_atoms(const System& system, const GridSpec& grid, double factor);

}  // namespace dcs
