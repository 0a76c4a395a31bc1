// The SIMD port limit of the CPU fast backend on the CPU it runs on: how many
// atom-point pairs per second one core can do when nothing but the kernel's arithmetic limits
// it, measured by microbenchmarks on registers only (no loads), as the GPU benchmark measures
// the MUFU ceiling. Each function is defined in a translation unit compiled for its instruction
// set (port_limit_avx2.cpp, port_limit_avx512.cpp), reached through port_limit_probe(isa).
#pragma once

#include "dcs/physics.hpp"
#include "fast_kernels.hpp"

namespace dcs::bench {

/// Throughput of one core, in vector instructions per second (one vector = `lanes` floats),
/// each measured alone with enough independent chains to hide its latency, and of the kernel's
/// per-pair instruction mix (row_kernel.hpp's sweep with dcs::NewtonRsqrt) in pairs per second.
struct PortRates {
  int lanes = 0;
  double fma = 0.0;        ///< vfmadd...ps
  double mul = 0.0;        ///< vmulps
  double add = 0.0;        ///< vaddps
  double max = 0.0;        ///< vmaxps
  double rsqrt = 0.0;      ///< vrsqrtps (AVX2) / vrsqrt14ps (AVX-512)
  double mix_pairs = 0.0;  ///< pairs/s of the kernel's arithmetic: dx (2 adds), r^2 (FMA),
                           ///< rsqrt, Newton step and accumulate (2 MUL, FNMADD, FMA)
};

/// The instructions one vector of pairs costs in the fast kernel's sweep (per atom and vector;
/// the atom's 4 broadcasts, shared by 4 vectors, are loads).
struct PairInstructions {
  static constexpr int kFma = 3;    // r^2 = dx dx + yz2; s = 3 - (r2 y0) y0; acc += (q y0) s
  static constexpr int kMul = 2;    // r2 y0; q y0
  static constexpr int kAdd = 2;    // (i - ia), + (-fx)
  static constexpr int kRsqrt = 1;  // the estimate
};

/// Pairs per second one core can do by issue rates alone: the multiply pipes do the FMAs and
/// MULs, the add pipes the ADDs, the estimate unit the rsqrts (each at its measured rate):
/// lanes / max(time of each group). The clamp's MAX is left out: the sweep applies it only to
/// the rare atoms within r_min of a row (row_kernel.hpp).
double issue_limit_pairs(const PortRates& rates);

/// One instruction set's measurements, each taking about `seconds` of thread CPU time (best of
/// 5 runs):
/// - port_rates: the issue rates and the per-pair mix (PortRates);
/// - mix_pairs: the per-pair mix alone (PortRates::mix_pairs), cheap enough to measure right
///   before and right after each repetition of a kernel on the same thread, so that a kernel's
///   share of the limit is taken under the conditions it ran in (another tenant on the core's
///   sibling hardware thread, a clock change), which a best-of-run limit cannot see;
/// - model_mix: the per-pair mix of one pair model (dcs::PairKind) in pairs/s: the row sweep's
///   (row_kernel.hpp: dx, r^2 and the unclamped term; for Coulomb the same as mix_pairs) or, with
///   `points`, the points sweep's (points_kernel.hpp: dx, dy, dz, r^2, the clamp and the term).
struct PortLimitProbe {
  PortRates (*port_rates)(double seconds) = nullptr;
  double (*mix_pairs)(double seconds) = nullptr;
  double (*model_mix)(PairKind kind, bool points, double seconds) = nullptr;
};

/// The probes compiled for AVX2 + FMA and for AVX-512F (port_limit_avx2.cpp,
/// port_limit_avx512.cpp); on a non-x86 build every measurement is 0 (port_limit_none.cpp).
PortLimitProbe port_limit_probe_avx2();
PortLimitProbe port_limit_probe_avx512();

/// The probe of `isa`, all null for the portable kernels; call it only where the CPU has the set.
inline PortLimitProbe port_limit_probe(cpu_fast::Isa isa) {
  if (isa == cpu_fast::Isa::Avx512) return port_limit_probe_avx512();
  if (isa == cpu_fast::Isa::Avx2) return port_limit_probe_avx2();
  return {};
}

}  // namespace dcs::bench
