// The fast backend's points kernel (compute_points: --points, meshes, --at-atoms), written once
// for every instruction set like row_kernel.hpp and instantiated by fast_kernels_<isa>.cpp.
//
// A block of up to kPointsBlock points is evaluated relative to its own centre (the midpoint of
// its points' bounding box): points and atoms come as float offsets from that centre, each
// rounded once from float64 (fast_backend.cpp), so near pairs keep their digits far from the
// coordinate origin. Points sit in the lanes of Vectors vectors while a chunk's atoms stream
// past (one broadcast per atom for all of them), every pair through dcs::add_coulomb_term with
// the clamp; an atom a point skips (its own, for --at-atoms) is taken with that lane's charge
// zeroed, in its place in the sum, so the other lanes' arithmetic is unchanged.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dcs/backend.hpp"
#include "dcs/physics.hpp"
#include "fast_kernels.hpp"
#include "row_kernel.hpp"

namespace dcs::cpu_fast {

/// CentreFn: a chunk's atoms as float offsets from a block's centre, each rounded once from
/// float64. A template on Vec only so that each instruction set's translation unit has its own
/// symbol (compiled, and vectorised, for that set).
template <class Vec>
void centre_atoms(const double* x, const double* y, const double* z, std::size_t n,
                  const double* centre, float* ax, float* ay, float* az) {
  const double cx = centre[0], cy = centre[1], cz = centre[2];
  for (std::size_t a = 0; a < n; ++a) ax[a] = static_cast<float>(x[a] - cx);
  for (std::size_t a = 0; a < n; ++a) ay[a] = static_cast<float>(y[a] - cy);
  for (std::size_t a = 0; a < n; ++a) az[a] = static_cast<float>(z[a] - cz);
}

/// Adds atom `a` with the charges `q` (per lane) to the block's sums.
template <class Vec, int Vectors, class Rsqrt, class Model>
[[gnu::always_inline]] inline void add_point_atom(const PointsArgs& args, std::size_t a,
                                                  const Vec (&q)[Vectors], const Vec (&px)[Vectors],
                                                  const Vec (&py)[Vectors],
                                                  const Vec (&pz)[Vectors], Vec (&acc)[Vectors],
                                                  Model model) {
  const Vec ax = Vec::broadcast(args.ax[a]);
  const Vec ay = Vec::broadcast(args.ay[a]);
  const Vec az = Vec::broadcast(args.az[a]);
  const Vec min_r2 = Vec::broadcast(args.min_r2);
  for (int v = 0; v < Vectors; ++v) {
    const Vec dx = px[v] - ax, dy = py[v] - ay, dz = pz[v] - az;
    const Vec r2 = multiply_add(dx, dx, multiply_add(dy, dy, dz * dz));
    acc[v] = add_coulomb_term(acc[v], q[v], r2, min_r2, Rsqrt{}, model);
  }
}

/// The chunk's contribution to out[0, Vectors * lanes) of the block's padded points.
template <class Vec, int Vectors, class Rsqrt, PairKind Kind>
void sweep_points(const PointsArgs& args) {
  constexpr int kLanes = Vec::kLanes;
  const auto model = pair_model<Kind>(Vec::broadcast(args.screen_c));
  for (std::size_t p0 = 0; p0 < args.points; p0 += std::size_t{kLanes} * Vectors) {
    Vec px[Vectors], py[Vectors], pz[Vectors], acc[Vectors];
    for (int v = 0; v < Vectors; ++v) {
      const std::size_t at = p0 + std::size_t{kLanes} * static_cast<std::size_t>(v);
      px[v] = Vec::load(args.px + at);
      py[v] = Vec::load(args.py + at);
      pz[v] = Vec::load(args.pz + at);
      acc[v] = Vec::zero();
    }
    // The skipped atoms of these points that fall in this chunk, in atom order (insertion sort:
    // at most Vectors * kLanes of them).
    std::uint32_t skipped[Vectors * kLanes];
    int skips = 0;
    for (int i = 0; i < Vectors * kLanes; ++i) {
      const std::uint32_t s = args.skip[p0 + static_cast<std::size_t>(i)];
      if (s == kNoAtom || s < args.first_atom || s - args.first_atom >= args.count) continue;
      int at = skips++;
      for (; at > 0 && skipped[at - 1] > s - args.first_atom; --at) skipped[at] = skipped[at - 1];
      skipped[at] = s - args.first_atom;
    }
    std::size_t a = 0;
    for (int k = 0; k <= skips; ++k) {
      const std::size_t end = k < skips ? skipped[k] : args.count;
      for (; a < end; ++a) {
        Vec q[Vectors];
        for (int v = 0; v < Vectors; ++v) q[v] = Vec::broadcast(args.q[a]);
        add_point_atom<Vec, Vectors, Rsqrt>(args, a, q, px, py, pz, acc, model);
      }
      if (k == skips || a >= args.count) break;
      if (k + 1 < skips && skipped[k + 1] == skipped[k]) continue;  // same atom: once
      // Atom a is skipped by some lanes: their charge is zero for this one term.
      float lane_q[Vectors * kLanes];
      for (int i = 0; i < Vectors * kLanes; ++i)
        lane_q[i] =
            args.skip[p0 + static_cast<std::size_t>(i)] == args.first_atom + a ? 0.0f : args.q[a];
      Vec q[Vectors];
      for (int v = 0; v < Vectors; ++v) q[v] = Vec::load(lane_q + kLanes * v);
      add_point_atom<Vec, Vectors, Rsqrt>(args, a, q, px, py, pz, acc, model);
      ++a;
    }
    for (int v = 0; v < Vectors; ++v)
      Vec::add_to(args.out + p0 + std::size_t{kLanes} * static_cast<std::size_t>(v), acc[v],
                  kLanes);
  }
}

/// The kernels of one instruction set for one pair model (rows: Vectors; points: PointVectors).
template <class Vec, int Vectors, int PointVectors, class Rsqrt, PairKind Kind>
constexpr ModelKernels make_model_kernels() {
  static_assert(kPointsBlock % (std::size_t{Vec::kLanes} * PointVectors) == 0);
  TailFn tail = nullptr;
  if constexpr (Vec::kLanes > 1) tail = &sweep_tail<Vec, Rsqrt, Kind>;
  return {&sweep_row<Vec, Vectors, Rsqrt, Kind>, tail,
          &sweep_points<Vec, PointVectors, Rsqrt, Kind>};
}

/// The kernels of one instruction set, for fast_kernels_<isa>.cpp to return.
template <class Vec, int Vectors, int PointVectors, class Rsqrt>
constexpr IsaKernels make_isa_kernels() {
  return {&stage_row<Vec>,
          &centre_atoms<Vec>,
          {make_model_kernels<Vec, Vectors, PointVectors, Rsqrt, PairKind::kCoulomb>(),
           make_model_kernels<Vec, Vectors, PointVectors, Rsqrt, PairKind::kScreened>(),
           make_model_kernels<Vec, Vectors, PointVectors, Rsqrt, PairKind::kInverseSquare>()},
          Vec::kLanes,
          Rsqrt::kChargeScale};
}

}  // namespace dcs::cpu_fast
