// The registry of CUDA potential kernels: the variant table's CUDA kernel rows
// (dcs/variants.hpp, checked at compile time) paired with their launch functions; --kernel, the
// backend and the benchmark reach the kernels through it. Adding a variant is one table row,
// one policy instantiation and one row in registry.cu.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "dcs/grid.hpp"
#include "potential/potential_kernels.hpp"

namespace dcs::cuda::detail {

/// What the backend must arrange around a kernel's launches.
struct KernelRequirements {
  std::size_t chunk_atoms = 0;  ///< atoms per launch (constant memory holds kConstantChunkAtoms)
  bool zeroed_output = false;   ///< adds into the slab from the first chunk: zero it first
  bool per_plane = false;       ///< one launch per z-plane per chunk (the textbook structure)
  /// Computes every pair model of dcs/physics.hpp (the production kernels); the textbook
  /// kernels keep the book's Coulomb term only.
  bool every_model = false;
};

struct PotentialKernel {
  std::string_view name;
  std::string_view summary;
  PotentialLaunchFn launch = nullptr;
  KernelRequirements requirements;
};

/// Every kernel, registry order (the first is the default).
std::span<const PotentialKernel> potential_kernels();
/// The kernel called `name`; an empty name gives the default. Throws UsageError listing the
/// valid names otherwise.
const PotentialKernel& find_potential_kernel(const std::string& name);
/// Enqueues `kernel` for atoms [0, atom_count) of d_atoms on the planes of `slab` of `grid`,
/// written to d_slab (slab.z_count planes of nx*ny floats): one launch per chunk of the kernel's
/// chunk_atoms, the first overwriting the slab and the rest adding to it. A zeroed_output kernel
/// adds from the first chunk on, so the caller zeroes d_slab first. min_r2 in Å^2; `pair` and
/// `screen_c` the model (PotentialLaunch). Asynchronous on `stream`.
void enqueue_potential(const PotentialKernel& kernel, const GridSpec& grid, const Slab& slab,
                       float min_r2, const GridAtom* d_atoms, std::size_t atom_count, float* d_slab,
                       StreamView stream, PairKind pair = PairKind::kCoulomb,
                       float screen_c = 0.0f);

}  // namespace dcs::cuda::detail
