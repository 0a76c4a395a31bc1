// The physics of dcs, written once: the Coulomb term shared by every CPU loop and CUDA kernel,
// the CODATA constants and the output units.
//
//   V(p) = factor * sum_i q_i / max(|p - r_i|, min_distance)
//
// with positions in Å, charges in e and `factor` the Coulomb constant expressed in the output
// unit and divided by the relative dielectric constant.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/host_device.hpp"

namespace dcs {

/// CODATA 2022 values (SI). e, k_B and N_A are exact since the 2019 SI redefinition.
namespace codata {
inline constexpr double kElementaryCharge = 1.602176634e-19;     // C
inline constexpr double kBoltzmann = 1.380649e-23;               // J/K
inline constexpr double kAvogadro = 6.02214076e23;               // 1/mol
inline constexpr double kVacuumPermittivity = 8.8541878188e-12;  // F/m (CODATA 2022)
inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kAngstrom = 1e-10;               // m
inline constexpr double kThermochemicalCalorie = 4.184;  // J
}  // namespace codata

/// e / (4 pi eps0 Å) in volts: the potential of one elementary charge at 1 Å in vacuum.
inline constexpr double kVoltsPerElementaryChargePerAngstrom =
    codata::kElementaryCharge /
    (4.0 * codata::kPi * codata::kVacuumPermittivity * codata::kAngstrom);

/// Output units of the potential. ElementaryChargePerAngstrom is the raw sum of q/r.
enum class Unit { kTPerE, KcalPerMolPerE, KJPerMolPerE, Volt, ElementaryChargePerAngstrom };

/// Canonical spelling used on the command line and in file metadata ("kT/e", "kcal/mol/e",
/// "kJ/mol/e", "V", "e/A").
std::string_view unit_name(Unit unit) noexcept;
/// Parses a unit name (case-sensitive canonical spelling); throws UsageError listing the valid
/// names otherwise.
Unit parse_unit(std::string_view name);
/// All unit names, for help texts.
std::vector<std::string> unit_names();

inline constexpr double kDefaultTemperature = 298.15;  ///< K
inline constexpr double kDefaultDielectric = 1.0;
inline constexpr double kDefaultMinDistance = 0.1;  ///< Å; clamp of |p - r| (no infinities)

/// Physical parameters of one map.
struct Physics {
  Unit unit = Unit::kTPerE;
  double temperature = kDefaultTemperature;   ///< K; used only by kT/e
  double dielectric = kDefaultDielectric;     ///< relative permittivity, > 0
  double min_distance = kDefaultMinDistance;  ///< Å, > 0
};

/// Throws UsageError, naming the option, when temperature, dielectric or min_distance is
/// outside its range in dcs/limits.hpp (which says why the ranges are what they are).
void validate(const Physics& physics);

struct System;

/// The largest |V| any grid point can reach: |coulomb_factor| * sum |q| / min_distance.
double max_potential(const System& system, const Physics& physics);

/// Throws UsageError when max_potential() exceeds limits::kMaxPotential (1e30): the map would
/// no longer be meaningful in float32. Call after reading the atoms, before computing.
void check_potential_bound(const System& system, const Physics& physics);

/// The factor that turns sum q/r (e/Å) into the requested unit, divided by the dielectric.
/// kT/e at 298.15 K: about 560.4593; kcal/mol/e: about 332.0637.
double coulomb_factor(const Physics& physics);

/// Human-readable unit of the factor itself, e.g. "kT*A/e^2".
std::string factor_unit(Unit unit);

// --- The Coulomb term ------------------------------------------------------------------------
//
// Every backend adds q / max(r, r_min) for each atom-point pair through add_coulomb_term():
// the float64 reference, the CPU fast backend's scalar and SIMD kernels and the CUDA kernels.
// It is written once for any Real that has the four operations below: double and float
// (overloads here, DCS_HD for the device) and the CPU SIMD vector types (overloads found by
// argument-dependent lookup in libdcs/src/cpu/simd_*.hpp). The pieces:
//   clamp_r2(r2, min_r2)             max(r2, min_r2), NaN in, NaN out;
//   rsqrt policy .add(e, q, x)       e + q / sqrt(x): hardware, FMA-pipe or Newton-refined;
//   multiply_add(a, b, c)            a * b + c, fused where the hardware fuses it.
// Edge cases (r2 = 0, inside and on r_min, +inf, NaN, the smallest accepted r_min) are tested
// once for every Real and policy (tests/support/coulomb_term_cases.hpp).

/// Reciprocal square root in the precision of Real. On the device the float overload is the
/// special-function unit's rsqrt (MUFU.RSQ, ~2 ulp); on the host it is exact to rounding.
DCS_HD inline double reciprocal_sqrt(double x) { return 1.0 / sqrt(x); }
DCS_HD inline float reciprocal_sqrt(float x) {
#if defined(__CUDA_ARCH__)
  return rsqrtf(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}

/// r2 clamped from below at min_r2, NaN in, NaN out: a NaN r2 (a broken input) shows as a NaN
/// point and is counted by the statistics instead of passing silently as q/r_min.
/// On the device the float overload is one FMNMX.NAN (max.NaN.f32); the SIMD overloads put r2
/// in the operand that (v)maxps returns when either is NaN.
template <class Real>
DCS_HD inline Real clamp_r2(Real r2, Real min_r2) {
  return r2 < min_r2 ? min_r2 : r2;
}
#if defined(__CUDA_ARCH__)
__device__ inline float clamp_r2(float r2, float min_r2) {
  float clamped;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(clamped) : "f"(r2), "f"(min_r2));
  return clamped;
}
#endif

/// a * b + c, fused on the device (FFMA); on the host as the compiler contracts it.
DCS_HD inline float multiply_add(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return fmaf(a, b, c);
#else
  return a * b + c;
#endif
}
DCS_HD inline double multiply_add(double a, double b, double c) { return a * b + c; }

/// 1/sqrt(x) for normal positive float x without the special-function unit, as y0 * P(e) with
/// e = x * y0^2: the bit-level first guess y0 (relative error within 3.5%, so e lies in
/// [0.9324, 1.0692]) corrected by the cubic P that is minimax for the relative error of
/// e^(-1/2) on that interval (Remez, 7.5e-7; 1.1e-6 measured in float over [1e-12, 1.3e14];
/// MUFU.RSQ is ~1.2e-7). Seven FMA/ALU instructions (SHF, IADD, FMUL, FMUL, 3 FFMA) instead of
/// one MUFU: worth it only where MUFU is the bottleneck and issue slots are left over (the
/// production kernel). NaN in, NaN out; +inf gives 0 * P(NaN) = NaN (never reached: r2 is
/// bounded by dcs/limits.hpp). The host version does the same arithmetic (for the tests).
struct RsqrtParts {
  float seed;        ///< y0
  float correction;  ///< P(x * y0^2)
};
DCS_HD inline RsqrtParts rsqrt_fma_pipe_parts(float x) {
  // (One IMAD.HI, i * -2^31 + K, would save an issue slot, but its two constants need registers
  // the 16-plane loop does not have: ptxas rematerialises them with MOVs, a net loss.)
#if defined(__CUDA_ARCH__)
  const float y0 = __int_as_float(0x5F375A86 - (__float_as_int(x) >> 1));
  const float e = (x * y0) * y0;
  const float p = fmaf(fmaf(fmaf(-0.313054074f, e, 1.31544123f), e, -2.19172067f), e, 2.18933276f);
#else
  const float y0 = std::bit_cast<float>(0x5F375A86 - (std::bit_cast<std::int32_t>(x) >> 1));
  const float e = (x * y0) * y0;
  const float p =
      std::fma(std::fma(std::fma(-0.313054074f, e, 1.31544123f), e, -2.19172067f), e, 2.18933276f);
#endif
  return {y0, p};
}

// Rsqrt policies: how the term e + q / sqrt(x) is formed from a reciprocal square root. Each
// has add(energy, charge, x) and kChargeScale, the factor the caller applies to the charges it
// passes (once, when staging atoms): a power of two, so scaled sums round exactly as unscaled.

/// reciprocal_sqrt(): MUFU.RSQ on the device, correctly rounded 1/sqrt on the host.
struct HardwareRsqrt {
  static constexpr float kChargeScale = 1.0f;
  template <class Real>
  DCS_HD Real add(Real energy, Real charge, Real x) const {
    return multiply_add(charge, reciprocal_sqrt(x), energy);
  }
};

/// rsqrt_fma_pipe_parts() with the charge folded into the seed: (q y0) P(e) + energy, float only.
struct FmaPipeRsqrt {
  static constexpr float kChargeScale = 1.0f;
  DCS_HD float add(float energy, float charge, float x) const {
    const RsqrtParts parts = rsqrt_fma_pipe_parts(x);
    return multiply_add(charge * parts.seed, parts.correction, energy);
  }
};

/// A hardware estimate y0 (approximate_reciprocal_sqrt: vrsqrtps, 12 bits; vrsqrt14ps, 14 bits)
/// refined by one Newton step, 1/sqrt(x) = y0/2 (3 - x y0^2) to a few ulp, for the SIMD types.
/// The 1/2 is folded into the charges (kChargeScale), leaving 4 operations after the estimate:
/// (q/2 y0) (3 - x y0 y0) + energy as FMUL, FNMADD, FMUL, FMADD.
struct NewtonRsqrt {
  static constexpr float kChargeScale = 0.5f;
  template <class Vec>
  Vec add(Vec energy, Vec half_charge, Vec x) const {
    const Vec y0 = approximate_reciprocal_sqrt(x);
    const Vec three = Vec::broadcast(3.0f);
    return multiply_add(half_charge * y0, negative_multiply_add(x * y0, y0, three), energy);
  }
};

/// The Coulomb term of every backend: energy + q / max(r, r_min) for one charge at squared
/// distance r2, given r_min^2 (charge pre-multiplied by Rsqrt::kChargeScale). Clamping r2
/// rather than r keeps one rsqrt per pair and removes the singularity; a NaN r2 gives a NaN
/// energy on every backend.
template <class Real, class Rsqrt = HardwareRsqrt>
DCS_HD inline Real add_coulomb_term(Real energy, Real charge, Real r2, Real min_r2,
                                    Rsqrt rsqrt = {}) {
  return rsqrt.add(energy, charge, clamp_r2(r2, min_r2));
}

/// add_coulomb_term() for a caller that has shown r2 >= min_r2 already (the CUDA production
/// kernel's fast path, whose warps vote atoms near a point onto the clamped path): the same
/// arithmetic without the clamp.
template <class Real, class Rsqrt = HardwareRsqrt>
DCS_HD inline Real add_unclamped_coulomb_term(Real energy, Real charge, Real r2, Rsqrt rsqrt = {}) {
  return rsqrt.add(energy, charge, r2);
}

/// q / max(r, r_min) on its own (scatter's atomicAdd operand): add_coulomb_term() onto zero.
template <class Real>
DCS_HD inline Real coulomb_term(Real charge, Real r2, Real min_r2) {
  return add_coulomb_term(Real(0), charge, r2, min_r2);
}

}  // namespace dcs
