// The port-limit microbenchmarks, written once as templates on the fast backend's vector types
// (libdcs/src/cpu/simd_*.hpp) and instantiated by one translation unit per instruction set.
// Timing is the thread's CPU time, so a shared machine's other processes do not count.
#pragma once

#include <time.h>

#include <algorithm>

#include "dcs/physics.hpp"
#include "port_limit.hpp"

namespace dcs::bench {

inline double thread_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

/// Keeps a value in a register the compiler cannot see through.
template <class Vec>
[[gnu::always_inline]] inline void opaque(Vec& x) {
  asm volatile("" : "+v"(x.v));
}

constexpr int kChains = 12;  // independent chains: >= latency (4 cycles) x pipes (2), and more

/// Instructions per second of `step` applied to kChains independent vectors, best of five runs
/// of about `seconds` each; `step` is one instruction whose other operands the compiler cannot
/// see (opaque), so that nothing folds and the chains stay in registers.
template <class Vec, class Step>
double instruction_rate(double seconds, Step step) {
  double best = 0.0;
  long iterations = 1 << 14;
  for (int run = 0; run < 6; ++run) {
    Vec x[kChains];
    for (int c = 0; c < kChains; ++c) {
      x[c] = Vec::broadcast(1.0f + 1e-3f * static_cast<float>(c));
      opaque(x[c]);
    }
    const double t0 = thread_seconds();
    for (long it = 0; it < iterations; ++it)
      for (int c = 0; c < kChains; ++c) x[c] = step(x[c]);
    for (int c = 0; c < kChains; ++c) opaque(x[c]);
    const double elapsed = thread_seconds() - t0;
    if (run == 0) {  // calibration: scale to the requested time
      iterations = std::max<long>(iterations, static_cast<long>(static_cast<double>(iterations) *
                                                                seconds / std::max(elapsed, 1e-6)));
      continue;
    }
    best = std::max(best, static_cast<double>(iterations) * kChains / elapsed);
  }
  return best;
}

/// The pair model of kind Kind on Vec (dcs::pair_model, as the sweep builds it); the screened
/// constant c (-kappa h log2(e), here for a Debye length of about 8 grid units) is opaque, so
/// that it stays a register as in the sweep.
template <class Vec, PairKind Kind>
[[gnu::always_inline]] inline auto bench_pair_model() {
  Vec c = Vec::broadcast(-0.18f);
  opaque(c);
  return pair_model<Kind>(c);
}

/// Calls `iterate(iterations)` (a loop of `pairs_per_iteration` pairs on registers) once to
/// calibrate to about `seconds`, then 5 times: the best rate in pairs per second.
template <class Iterate>
double best_pairs_rate(double seconds, double pairs_per_iteration, Iterate iterate) {
  double best = 0.0;
  long iterations = 1 << 12;
  for (int run = 0; run < 6; ++run) {
    const double elapsed = iterate(iterations);
    if (run == 0) {
      iterations = std::max<long>(iterations, static_cast<long>(static_cast<double>(iterations) *
                                                                seconds / std::max(elapsed, 1e-6)));
      continue;
    }
    best = std::max(best, static_cast<double>(iterations) * pairs_per_iteration / elapsed);
  }
  return best;
}

/// Pairs per second of the fast kernel's arithmetic per vector of pairs: dx from the split atom
/// (two additions, fed back so that nothing is loop-invariant), r^2, then
/// dcs::add_unclamped_coulomb_term with dcs::NewtonRsqrt and the pair model Kind (no clamp,
/// which the sweep applies only to the rare atoms within r_min of a row, row_kernel.hpp):
/// exactly the sweep's instructions without its loads, in kMixChains independent chains, best
/// of five runs.
template <class Vec, int kMixChains, PairKind Kind = PairKind::kCoulomb>
double mix_rate(double seconds) {
  return best_pairs_rate(seconds, double{kMixChains} * Vec::kLanes, [](long iterations) {
    Vec ia = Vec::broadcast(3.0f), neg_fx = Vec::broadcast(3.0f), yz2 = Vec::broadcast(2.25f);
    Vec q = Vec::broadcast(0.4f);
    opaque(ia), opaque(neg_fx), opaque(yz2), opaque(q);
    const auto model = bench_pair_model<Vec, Kind>();
    Vec ix[kMixChains], acc[kMixChains];
    for (int c = 0; c < kMixChains; ++c) {
      ix[c] = Vec::broadcast(static_cast<float>(c));
      acc[c] = Vec::zero();
    }
    const double t0 = thread_seconds();
    for (long it = 0; it < iterations; ++it) {
      for (int c = 0; c < kMixChains; ++c) {
        const Vec dx = (ix[c] - ia) + neg_fx;  // = ix: the next pair's displacement
        ix[c] = dx;
        acc[c] =
            add_unclamped_coulomb_term(acc[c], q, multiply_add(dx, dx, yz2), NewtonRsqrt{}, model);
      }
    }
    for (int c = 0; c < kMixChains; ++c) opaque(acc[c]);
    return thread_seconds() - t0;
  });
}

/// Pairs per second of the points kernel's arithmetic per vector of pairs (points_kernel.hpp's
/// add_point_atom): dx, dy, dz (three subtractions of the atom from the point, each fed back
/// as the point so that nothing is loop-invariant; the atom sits at the block's centre), r^2
/// (MUL and two FMAs), the clamp (MAX: the points sweep clamps every pair) and the model's term
/// with dcs::NewtonRsqrt; no loads, in kChains independent chains, best of five runs.
template <class Vec, int kChains, PairKind Kind = PairKind::kCoulomb>
double points_mix_rate(double seconds) {
  return best_pairs_rate(seconds, double{kChains} * Vec::kLanes, [](long iterations) {
    Vec ax = Vec::zero(), ay = Vec::zero(), az = Vec::zero();
    Vec q = Vec::broadcast(0.4f), min_r2 = Vec::broadcast(0.01f);
    opaque(ax), opaque(ay), opaque(az), opaque(q), opaque(min_r2);
    const auto model = bench_pair_model<Vec, Kind>();
    Vec px[kChains], py[kChains], pz[kChains], acc[kChains];
    for (int c = 0; c < kChains; ++c) {
      px[c] = Vec::broadcast(1.0f + static_cast<float>(c));
      py[c] = Vec::broadcast(1.5f);
      pz[c] = Vec::broadcast(-0.5f);
      acc[c] = Vec::zero();
    }
    const double t0 = thread_seconds();
    for (long it = 0; it < iterations; ++it) {
      for (int c = 0; c < kChains; ++c) {
        const Vec dx = px[c] - ax, dy = py[c] - ay, dz = pz[c] - az;  // = the point: fed back
        px[c] = dx, py[c] = dy, pz[c] = dz;
        const Vec r2 = multiply_add(dx, dx, multiply_add(dy, dy, dz * dz));
        acc[c] = add_coulomb_term(acc[c], q, r2, min_r2, NewtonRsqrt{}, model);
      }
    }
    for (int c = 0; c < kChains; ++c) opaque(acc[c]);
    return thread_seconds() - t0;
  });
}

/// As many chains as fit the registers with the six constants (16 ymm for AVX2, 32 zmm).
template <class Vec>
constexpr int kMixChainsOf = Vec::kLanes >= 16 ? 8 : 4;

/// The points mix keeps 4 registers per chain (the point and its sum): 4 chains in AVX-512's
/// 32 registers (the kernel's 4 vectors per block), 2 in AVX2's 16 (the kernel's 4 would not
/// fit with the constants; 2 chains of 11 instructions still hide every latency).
template <class Vec>
constexpr int kPointsMixChainsOf = Vec::kLanes >= 16 ? 4 : 2;

/// The per-pair mix in as many chains as fit the registers, in pairs/s.
template <class Vec>
double measure_mix_pairs(double seconds) {
  return mix_rate<Vec, kMixChainsOf<Vec>>(seconds);
}

/// The row sweep's (mix_rate) or the points sweep's (points_mix_rate) per-pair mix of one
/// pair model, in pairs/s, in as many chains as fit the registers.
template <class Vec>
double measure_model_mix(PairKind kind, bool points, double seconds) {
  constexpr int kRow = kMixChainsOf<Vec>, kPoints = kPointsMixChainsOf<Vec>;
  switch (kind) {
    case PairKind::kScreened:
      return points ? points_mix_rate<Vec, kPoints, PairKind::kScreened>(seconds)
                    : mix_rate<Vec, kRow, PairKind::kScreened>(seconds);
    case PairKind::kInverseSquare:
      return points ? points_mix_rate<Vec, kPoints, PairKind::kInverseSquare>(seconds)
                    : mix_rate<Vec, kRow, PairKind::kInverseSquare>(seconds);
    case PairKind::kCoulomb: break;
  }
  return points ? points_mix_rate<Vec, kPoints>(seconds) : mix_rate<Vec, kRow>(seconds);
}

template <class Vec>
PortRates measure_port_rates(double seconds) {
  PortRates rates;
  rates.lanes = Vec::kLanes;
  Vec one = Vec::broadcast(1.0f), tiny = Vec::broadcast(1e-7f);
  opaque(one), opaque(tiny);
  rates.fma = instruction_rate<Vec>(seconds, [=](Vec x) { return multiply_add(x, one, tiny); });
  rates.mul = instruction_rate<Vec>(seconds, [=](Vec x) { return x * one; });
  rates.add = instruction_rate<Vec>(seconds, [=](Vec x) { return x + tiny; });
  rates.max = instruction_rate<Vec>(seconds, [=](Vec x) { return clamp_r2(x, tiny); });
  rates.rsqrt =
      instruction_rate<Vec>(seconds, [](Vec x) { return approximate_reciprocal_sqrt(x); });
  rates.mix_pairs = measure_mix_pairs<Vec>(seconds);
  return rates;
}

/// The probe of one vector type: its translation unit, compiled for the instruction set, returns
/// it from port_limit_probe_<set>() (port_limit.hpp).
template <class Vec>
PortLimitProbe probe_of() {
  return {&measure_port_rates<Vec>, &measure_mix_pairs<Vec>, &measure_model_mix<Vec>};
}

}  // namespace dcs::bench
