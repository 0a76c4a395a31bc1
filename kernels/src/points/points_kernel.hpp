// The potential at arbitrary points (PotentialBackend::compute_points): launch wrapper of the
// points kernel (private to dcs::cuda). points_kernel.cu says how it works.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dcs/physics.hpp"
#include "stream.hpp"

namespace dcs::cuda::detail {

/// An atom as the points kernel reads it: the position in Å in double (each group of points
/// subtracts its own centre in double, so the float offsets it works with are rounded once,
/// relative to their own size) and the charge times coulomb_factor(physics). 32 bytes.
struct alignas(16) PointsAtom {
  double x, y, z;
  float q;
  float unused;
};
static_assert(sizeof(PointsAtom) == 32, "PointsAtom must be 32 bytes");

/// Points per thread, and points per group: the 32 threads of a warp take 32 x 4 consecutive
/// points of the list, relative to the centre of their bounding box. A value depends only on
/// its group's points, so PointsHint::block is kPointsGroup.
inline constexpr int kPointsPerThread = 4;
inline constexpr int kPointsGroup = 32 * kPointsPerThread;

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

/// Enqueues one launch that writes out[0, n): every point summed over atoms [0, atom_count) in
/// chunks of chunk_atoms (a float sum per chunk, added in chunk order), skip[i] left out.
/// Asynchronous on `stream`; n = 0 enqueues nothing.
void launch_points(const PointsLaunch& launch, StreamView stream);

}  // namespace dcs::cuda::detail
