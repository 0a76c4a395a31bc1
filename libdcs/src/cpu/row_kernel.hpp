// The fast backend's kernel, written once for every instruction set: a template on the vector
// type (simd_avx512.hpp, simd_avx2.hpp, simd_scalar.hpp) and the rsqrt policy of
// dcs/physics.hpp, instantiated by one translation unit per instruction set
// (fast_kernels_<isa>.cpp, compiled with that set's flags) and chosen at run time.
//
// Decomposition (fast_backend.cpp): for one row of the grid (fixed j, k; nx points along x)
// and one chunk of atoms, dy^2 + dz^2 of every atom is staged once (stage_row), then the row
// is swept in blocks of Vectors * kLanes x-points held in registers while the chunk's atoms
// stream past (sweep_row); a block's sum over the chunk is added to the output once, so float32
// rounding is bounded per chunk. Lengths are in units of hx, so grid point i sits at x = i and
// dx = (i - ia) - fx is exact but for one rounding relative to |dx| (see fast_backend.cpp).
//
// Everything here is a template on Vec, so each instruction set's translation unit gets its own
// symbols: code compiled for AVX-512 can never be linked in place of the portable code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dcs/physics.hpp"
#include "fast_kernels.hpp"

namespace dcs::cpu_fast {

/// yz2[a] = (y - ay[a])^2 + (z - az[a])^2 in float64, rounded once (vectorised by the compiler
/// for the translation unit's instruction set), and the atoms the row passes within r_min of:
/// their indices, in order, into near[] (RowArgs::near), and their count returned. Only these
/// need the clamp: for any other atom yz2 >= min_r2, so r2 = dx^2 + yz2 >= min_r2 once rounded
/// (rounding is monotone), and max(r2, min_r2) is r2 itself. A NaN yz2 counts as near.
template <class Vec>
std::size_t stage_row(const double* ay, const double* az, std::size_t n, double y, double z,
                      float min_r2, float* yz2, std::uint32_t* near) {
  std::size_t near_count = 0;
  for (std::size_t a = 0; a < n; ++a) {
    const double dy = y - ay[a];
    const double dz = z - az[a];
    const float r2 = static_cast<float>(dy * dy + dz * dz);
    yz2[a] = r2;
    near_count += !(r2 >= min_r2);
  }
  if (near_count == 0) return 0;  // the common case: the scan above vectorises, this one not
  near_count = 0;
  for (std::size_t a = 0; a < n; ++a)
    if (!(yz2[a] >= min_r2)) near[near_count++] = static_cast<std::uint32_t>(a);
  return near_count;
}

/// Adds atom `a` of the chunk to every vector of sums: through dcs::add_coulomb_term's clamp
/// (Clamp) or without it, for an atom stage_row found never to need it.
template <class Vec, int Vectors, class Rsqrt, bool Clamp, class Model>
[[gnu::always_inline]] inline void add_atom(const RowArgs& args, std::size_t a,
                                            const Vec (&ix)[Vectors], Vec (&acc)[Vectors],
                                            Model model) {
  const ChunkView& c = args.atoms;
  const Vec ia = Vec::broadcast(c.ia[a]);
  const Vec neg_fx = Vec::broadcast(c.neg_fx[a]);
  const Vec yz2 = Vec::broadcast(args.yz2[a]);
  const Vec q = Vec::broadcast(c.q[a]);
  for (int v = 0; v < Vectors; ++v) {
    const Vec dx = (ix[v] - ia) + neg_fx;
    const Vec r2 = multiply_add(dx, dx, yz2);
    if constexpr (Clamp)
      acc[v] = add_coulomb_term(acc[v], q, r2, Vec::broadcast(args.min_r2), Rsqrt{}, model);
    else acc[v] = add_unclamped_coulomb_term(acc[v], q, r2, Rsqrt{}, model);
  }
}

/// Adds the chunk's contribution to out_row[i0, i0 + valid), valid <= Vectors * kLanes: every
/// pair through dcs::add_coulomb_term (clamp at min_r2, NaN kept, Rsqrt's reciprocal square
/// root; the staged charges carry Rsqrt::kChargeScale), whose clamp is skipped for the atoms
/// stage_row found never to need it (the result is the same to the bit).
template <class Vec, int Vectors, class Rsqrt, PairKind Kind>
[[gnu::always_inline]] inline void sweep_block(const RowArgs& args, std::int64_t i0,
                                               std::int64_t valid) {
  const auto model = pair_model<Kind>(Vec::broadcast(args.screen_c));
  Vec ix[Vectors];
  Vec acc[Vectors];
  for (int v = 0; v < Vectors; ++v) {
    ix[v] = Vec::iota(static_cast<float>(i0 + Vec::kLanes * v));
    acc[v] = Vec::zero();
  }
  // Atoms in input order: runs of far atoms without the clamp (bit for bit the clamped sum, see
  // stage_row), each near atom through the clamp in its place.
  std::size_t a = 0;
  for (std::size_t n = 0; n < args.near_count; ++n, ++a) {
    for (; a < args.near[n]; ++a) add_atom<Vec, Vectors, Rsqrt, false>(args, a, ix, acc, model);
    add_atom<Vec, Vectors, Rsqrt, true>(args, a, ix, acc, model);
  }
  for (; a < args.atoms.count; ++a) add_atom<Vec, Vectors, Rsqrt, false>(args, a, ix, acc, model);
  for (int v = 0; v < Vectors; ++v) {
    const std::int64_t start = std::int64_t{Vec::kLanes} * v;
    if (start >= valid) break;
    const std::int64_t rest = valid - start;
    Vec::add_to(args.out_row + i0 + start, acc[v],
                static_cast<int>(rest < Vec::kLanes ? rest : Vec::kLanes));
  }
}

/// The whole row [0, nx): blocks of Vectors vectors, then a tail of as many vectors as it needs.
template <class Vec, int Vectors, class Rsqrt, PairKind Kind = PairKind::kCoulomb>
void sweep_row(const RowArgs& args) {
  constexpr std::int64_t kWidth = std::int64_t{Vec::kLanes} * Vectors;
  std::int64_t i0 = 0;
  for (; i0 + kWidth <= args.nx; i0 += kWidth)
    sweep_block<Vec, Vectors, Rsqrt, Kind>(args, i0, kWidth);
  const std::int64_t rest = args.nx - i0;
  if (rest <= 0) return;
  const std::int64_t vectors = (rest + Vec::kLanes - 1) / Vec::kLanes;
  if constexpr (Vectors > 1) {
    if (vectors == 1) return sweep_block<Vec, 1, Rsqrt, Kind>(args, i0, rest);
  }
  if constexpr (Vectors > 2) {
    if (vectors == 2) return sweep_block<Vec, 2, Rsqrt, Kind>(args, i0, rest);
  }
  if constexpr (Vectors > 3) {
    if (vectors == 3) return sweep_block<Vec, 3, Rsqrt, Kind>(args, i0, rest);
  }
  sweep_block<Vec, Vectors, Rsqrt, Kind>(args, i0, rest);
}

/// Points from the ends of several rows, one per lane, each with its own (i, j, k): the
/// displacement along every axis from the split atoms (d = (p - i_atom) * h/hx - residual/hx,
/// with p - i_atom an exact integer, so each is rounded once relative to itself), then
/// dcs::add_coulomb_term. Six operations per pair more than a row's sweep, whose dy^2 + dz^2
/// comes staged; worth it where the alternative is a vector mostly past the row's end.
template <class Vec, class Rsqrt, PairKind Kind = PairKind::kCoulomb>
void sweep_tail(const TailArgs& t) {
  const auto model = pair_model<Kind>(Vec::broadcast(t.screen_c));
  const Vec px = Vec::load(t.x), py = Vec::load(t.y), pz = Vec::load(t.z);
  const Vec y_scale = Vec::broadcast(t.y_scale), z_scale = Vec::broadcast(t.z_scale);
  const Vec min_r2 = Vec::broadcast(t.min_r2);
  const ChunkView& c = t.atoms;
  Vec acc = Vec::zero();
  for (std::size_t a = 0; a < c.count; ++a) {
    const Vec dx = (px - Vec::broadcast(c.ia[a])) + Vec::broadcast(c.neg_fx[a]);
    const Vec dy = multiply_add(py - Vec::broadcast(t.iy[a]), y_scale, Vec::broadcast(t.neg_fy[a]));
    const Vec dz = multiply_add(pz - Vec::broadcast(t.iz[a]), z_scale, Vec::broadcast(t.neg_fz[a]));
    const Vec r2 = multiply_add(dx, dx, multiply_add(dy, dy, dz * dz));
    acc = add_coulomb_term(acc, Vec::broadcast(c.q[a]), r2, min_r2, Rsqrt{}, model);
  }
  float sums[Vec::kLanes];
  Vec::store(sums, acc);
  for (int lane = 0; lane < t.lanes && lane < Vec::kLanes; ++lane) *t.out[lane] += sums[lane];
}

}  // namespace dcs::cpu_fast
