// Launch wrappers of the potential kernels (private to dcs::cuda). Each wrapper computes the
// potential of one atom chunk on a whole slab: the textbook kernels stage the chunk in constant
// memory and launch once per z-plane, the production kernels launch once over the slab.
// Wrappers are asynchronous on `stream` (they synchronise only with debug sync on).
#pragma once

#include <cstddef>

#include "dcs/atoms.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

/// One chunk on one slab. The slab holds z_count planes of nx*ny floats, x fastest.
struct PotentialLaunch {
  float* d_slab = nullptr;             ///< device output of the slab
  const GridAtom* d_atoms = nullptr;   ///< device atoms of this chunk
  int atom_count = 0;                  ///< 1..chunk_atoms of the kernel
  int nx = 0, ny = 0;                  ///< points per row, rows per plane
  int z_begin = 0;                     ///< grid index of the slab's first plane
  int z_count = 0;                     ///< planes in the slab
  float hx = 0, hy = 0, hz = 0;        ///< Å
  float min_r2 = 0;                    ///< Å^2, the clamp of r^2 (min_distance^2)
  PairKind pair = PairKind::kCoulomb;  ///< the physics model's pair term (production kernels)
  float screen_c = 0;                  ///< screened term: -kappa log2(e), per Å
  bool accumulate = false;             ///< add to the slab (a later chunk) or overwrite it
};

using PotentialLaunchFn = void (*)(const PotentialLaunch& launch, StreamView stream);

/// Atoms one constant-memory chunk holds: 2000 GridAtoms = 64 000 bytes of the 64 KiB bank.
inline constexpr std::size_t kConstantChunkAtoms = 2000;
/// Atoms per launch of the production kernels (shared-memory tiles: any size works; 4000
/// keeps float accumulation per chunk as in the CPU backends).
inline constexpr std::size_t kProductionChunkAtoms = 4000;

// --- Textbook kernels (PMPP ch. 18), per z-plane, atoms in constant memory ---------------------

/// Fig. 18.5: one thread per atom, atomicAdd into the plane. Adds into the slab, which the
/// caller zeroes before the first chunk.
void launch_scatter(const PotentialLaunch& launch, StreamView stream);

/// The gather family (Figs. 18.6, 18.8, 18.10) as points of one parameter space: a block of
/// BlockX x BlockY threads, PointsPerThread x-points per thread, consecutive (false) or strided
/// by BlockX so that a warp's stores are contiguous (true). Adds into the slab (+=, as the book).
template <int BlockX, int BlockY, int PointsPerThread, bool CoalescedStore>
struct GatherPolicy {
  static constexpr int kBlockX = BlockX;
  static constexpr int kBlockY = BlockY;
  static constexpr int kPointsPerThread = PointsPerThread;
  static constexpr bool kCoalescedStore = CoalescedStore;
  /// x-points one block covers and the x-distance (in points) between one thread's points.
  static constexpr int kBlockPointsX = BlockX * PointsPerThread;
  static constexpr int kPointStride = CoalescedStore ? BlockX : 1;
};
using GatherPlain = GatherPolicy<16, 16, 1, false>;      // Fig. 18.6
using GatherCoarsened = GatherPolicy<16, 16, 8, false>;  // Fig. 18.8
using GatherCoalesced = GatherPolicy<16, 16, 8, true>;   // Fig. 18.10

template <class Policy>
void launch_gather(const PotentialLaunch& launch, StreamView stream);
extern template void launch_gather<GatherPlain>(const PotentialLaunch&, StreamView);
extern template void launch_gather<GatherCoarsened>(const PotentialLaunch&, StreamView);
extern template void launch_gather<GatherCoalesced>(const PotentialLaunch&, StreamView);

// --- Production kernels: one launch per chunk over the whole slab -----------------------------

/// Threads of a block cover kThreads consecutive points of a plane (x fastest, rows wrap, so
/// tails cost at most one block per plane group) and PointsPerThread consecutive planes; atoms
/// are staged in shared-memory tiles of kTileAtoms. SoftwarePoints of a thread's points take
/// their rsqrt from an FMA-pipe Newton iteration instead of MUFU. MinBlocksPerSm caps the
/// registers (__launch_bounds__) so that this many blocks fit on an SM.
template <int PointsPerThread, int SoftwarePoints, int MinBlocksPerSm, int AtomsPerVote = 4>
struct ProductionPolicy {
  static constexpr int kThreads = 256;
  static constexpr int kTileAtoms = 500;
  static constexpr int kPointsPerThread = PointsPerThread;
  static constexpr int kSoftwarePoints = SoftwarePoints;
  static constexpr int kMinBlocksPerSm = MinBlocksPerSm;
  /// Atoms per step of the pair loop (one warp vote for the exact path per step): 4 amortises
  /// the vote, 2 halves the run of MUFU instructions one step issues (1, 2 or 4).
  static constexpr int kUnroll = AtomsPerVote;
  /// Whether the screened and inverse-square pair models are compiled too: not under the
  /// 48-register cap of 5 blocks per SM, where the screened term spills.
  static constexpr bool kEveryModel = MinBlocksPerSm <= 4;
};
// Measured on an H200 and an H100 (bench/results/gpu_hybrid_rsqrt_2026-11-23.md): voting per 2
// atoms keeps each step's run of MUFU instructions short enough for the MIO queue; 3 of 16 in
// software balances MUFU against issue best.
using ProductionDefault = ProductionPolicy<16, 3, 4, 2>;    // "production"
using ProductionMufu = ProductionPolicy<16, 0, 4>;          // "production-mufu"
using ProductionSoftware4 = ProductionPolicy<16, 4, 4, 2>;  // "production-sw4"
using ProductionSoftware2 = ProductionPolicy<16, 2, 4>;     // "production-sw2"
using Production8 = ProductionPolicy<8, 2, 5>;              // "production-8"

/// Overwrites the slab on a chunk with accumulate == false, adds otherwise. Launched with
/// programmatic dependent launch: the next chunk's blocks start on SMs this launch frees and
/// wait (griddepcontrol.wait) only before touching the slab.
template <class Policy>
void launch_production(const PotentialLaunch& launch, StreamView stream);
extern template void launch_production<ProductionDefault>(const PotentialLaunch&, StreamView);
extern template void launch_production<ProductionMufu>(const PotentialLaunch&, StreamView);
extern template void launch_production<ProductionSoftware4>(const PotentialLaunch&, StreamView);
extern template void launch_production<ProductionSoftware2>(const PotentialLaunch&, StreamView);
extern template void launch_production<Production8>(const PotentialLaunch&, StreamView);

}  // namespace dcs::cuda::detail
