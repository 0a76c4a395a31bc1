// The float64 reference potential at points on a device (PotentialBackend::reference_points of
// the CUDA backend): the same sums as dcs::reference_potential(), in a fixed order of atoms so
// that a value is the same bits on every run and every GPU of the same build. Private to
// dcs::cuda; reference_kernel.cu says how it works.
#pragma once

#include <cstddef>

#include "dcs/physics.hpp"
#include "dcs/types.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

/// Threads per block: each sums the atoms t, t + kReferenceThreads, ... of its block's points,
/// then the block adds the partial sums in a fixed tree. Part of the order of the sums (changing
/// it changes the bits), so a constant, not a launch choice.
inline constexpr int kReferenceThreads = 256;
/// Points per block: every atom a thread loads serves this many points (the atoms are read
/// once per block from global memory/L2).
inline constexpr int kReferencePoints = 8;

/// An atom in float64: position (Å) and charge (e), as the CPU reference reads it.
struct alignas(32) ReferenceAtom {
  double x, y, z, q;
};
static_assert(sizeof(ReferenceAtom) == 32, "ReferenceAtom is one 32-byte load");

/// Writes out[0, n) on the current device: factor(physics) * sum over every atom of the clamped
/// pair term of `physics` (dcs::add_coulomb_term in double), as reference_potential() does.
/// Uploads the atoms and points for this call and frees them before it returns; synchronous.
void reference_points_on_device(const System& system, const Physics& physics, const Vec3* points,
                                std::size_t n, double* out, StreamView stream);

}  // namespace dcs::cuda::detail
