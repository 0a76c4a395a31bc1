// The potential at arbitrary points (PotentialBackend::compute_points): launch wrapper of the
// points kernel (private to dcs::cuda). points_kernel.cu says how it works.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dcs/atoms.hpp"
#include "dcs/physics.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

/// An atom as the points kernel reads it: each coordinate (Å) split into a float and the float
/// of its remainder, x = hi + lo to ~2^-48 relative (make_points_atom), so that a group of points
/// forms atom - centre as (hi - centre_hi) + (lo - centre_lo) in float, rounded relative to the
/// offset's own size (no double arithmetic or conversion per atom in the kernel); q is the charge
/// times coulomb_factor(physics). Two float4s.
struct alignas(16) PointsAtom {
  float x, y, z;  ///< float(coordinate)
  float q;
  float x_lo, y_lo, z_lo;  ///< float(coordinate - double(float(coordinate)))
  float unused;
};
static_assert(sizeof(PointsAtom) == 32, "PointsAtom must be two float4s");

/// The split atom at `position` (Å) with charge q times the factor.
inline PointsAtom make_points_atom(double x, double y, double z, double scaled_charge) {
  const auto hi = [](double v) { return static_cast<float>(v); };
  const auto lo = [](double v) {
    return static_cast<float>(v - static_cast<double>(static_cast<float>(v)));
  };
  return {hi(x), hi(y), hi(z), static_cast<float>(scaled_charge), lo(x), lo(y), lo(z), 0.0f};
}

/// The system's atoms as the kernel reads them (charges times `factor`), in Z order
/// (dcs/spatial_order.hpp): the few atoms near a group of points then share a few of the
/// kernel's 8-atom tiles, which take its exact path whole (bench/results/points_*). rank[i] is
/// atom i's place, for the skips (compute_points translates them).
std::vector<PointsAtom> pack_points_atoms(const System& system, double factor,
                                          std::vector<std::uint32_t>& rank);

/// Points per group: one warp takes kPointsGroup consecutive points of the list, as
/// kPointsTiles tensor-core tiles of 16 rows; the kPointsWarps warps of a block share one
/// centre (that of their kPointsBlock points' bounding box) and one staging of the atoms. A
/// value depends only on its block's points, so PointsHint::block is kPointsBlock.
inline constexpr int kPointsTiles = 4;
inline constexpr int kPointsGroup = 16 * kPointsTiles;
inline constexpr int kPointsWarps = 4;
inline constexpr int kPointsBlock = kPointsWarps * kPointsGroup;

/// How a thread's pairs form their 1/sqrt (dcs/physics.hpp policies): kBalanced gives a few
/// pairs of every 16 to the FMA pipe (dcs::FmaPipeRsqrt) so that it works while MUFU is busy,
/// kMufu takes every rsqrt from MUFU (the benchmark compares them).
enum class PointsRsqrt { kBalanced, kMufu };

struct PointsLaunch {
  const double* d_points = nullptr;       ///< x, y, z (Å) per point: n Vec3s
  const std::uint32_t* d_skip = nullptr;  ///< per point, the atom left out (kNoAtom), or nullptr
  float* d_out = nullptr;                 ///< n values
  std::size_t n = 0;                      ///< points
  const PointsAtom* d_atoms = nullptr;
  std::size_t atom_count = 0;   ///< 1 .. kNoAtom - 1
  std::size_t chunk_atoms = 0;  ///< atoms summed in float before adding to the value
  double min_distance = 0.0;    ///< Å, the clamp of r
  PairKind pair = PairKind::kCoulomb;
  float screen_c = 0.0f;  ///< screened term: -kappa log2(e), per Å
  PointsRsqrt rsqrt = PointsRsqrt::kBalanced;
};

/// The compile-time variant of this build's points kernel, for the benchmark's row names: empty,
/// the default being the only one now (the variants measured and where their code is:
/// docs/points-kernel.md).
std::string points_variant();

/// Enqueues one launch that writes out[0, n): every point summed over atoms [0, atom_count) in
/// chunks of chunk_atoms (a float sum per chunk, added in chunk order), skip[i] left out.
/// Asynchronous on `stream`; n = 0 enqueues nothing.
void launch_points(const PointsLaunch& launch, StreamView stream);

}  // namespace dcs::cuda::detail
