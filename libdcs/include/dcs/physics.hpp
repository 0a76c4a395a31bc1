// The physics of dcs, written once: the Coulomb term shared by every CPU loop and CUDA kernel,
// the CODATA constants, the output units and the three physics models:
//
//   constant dielectric    V(p) = C/eps * sum_i q_i / r_i
//   Debye-Hueckel          V(p) = C/eps * sum_i q_i exp(-kappa r_i) / r_i
//   distance-dependent     V(p) = C/k   * sum_i q_i / r_i^2          (eps(r) = k r, r in Å)
//
// with r_i = max(|p - r_i|, min_distance), positions in Å, charges in e and C the Coulomb
// constant in the output unit (CODATA, or a preset's own constant). kappa follows from the
// ionic strength, temperature and dielectric (debye_length()).
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
inline constexpr double kWaterDielectric = 78.54;   ///< at 298.15 K (APBS's sdie)
inline constexpr double kDefaultMinDistance = 0.1;  ///< Å; clamp of |p - r| (no infinities)

/// How the dielectric enters: a constant eps, or eps(r) = k r with k = Physics::dielectric
/// per Å (ChimeraX coulombic's "distance-dependent dielectric", k = 4).
enum class DielectricModel { kConstant, kDistance };

/// "constant" | "distance" (the --dielectric-model spelling); parse throws UsageError.
std::string_view dielectric_model_name(DielectricModel model) noexcept;
DielectricModel parse_dielectric_model(std::string_view name);

/// Physical parameters of one map.
struct Physics {
  Unit unit = Unit::kTPerE;
  double temperature = kDefaultTemperature;   ///< K; used by kT/e and by Debye-Hueckel's kappa
  double dielectric = kDefaultDielectric;     ///< relative permittivity (> 0), or k of eps = k r
  double min_distance = kDefaultMinDistance;  ///< Å, > 0
  DielectricModel dielectric_model = DielectricModel::kConstant;
  /// mol/L; > 0 screens every charge by exp(-kappa r) (Debye-Hueckel; constant dielectric only).
  double ionic_strength = 0.0;
  /// The Coulomb constant in the output unit times Å per e^2 (e.g. 331.62 kcal/mol*Å/e^2 for
  /// ChimeraX); 0: the CODATA value for the unit (and temperature, for kT/e).
  double coulomb_constant = 0.0;
  /// The tool whose constants these are ("chimerax", "pymol"), for the file's metadata; or "".
  std::string preset;
};

/// The pair term g(r) each atom contributes, q g(r), before the factor: what a kernel computes.
enum class PairKind {
  kCoulomb = 0,        ///< 1/r
  kScreened = 1,       ///< exp(-kappa r) / r
  kInverseSquare = 2,  ///< 1/r^2 (distance-dependent dielectric; k is in the factor)
};
struct PairTerm {
  PairKind kind = PairKind::kCoulomb;
  double kappa = 0.0;  ///< 1/Å, kScreened only
  /// The power of length in g: a kernel working in units of h multiplies the factor by h^-power
  /// and kappa by h.
  int length_power() const noexcept { return kind == PairKind::kInverseSquare ? 2 : 1; }
};
PairTerm pair_term(const Physics& physics);

/// The Debye length 1/kappa in Å: sqrt(eps0 eps kB T / (2 N_A e^2 I)), I in mol/m^3
/// (7.857 Å at 0.15 M, eps = 78.54, 298.15 K); +inf when ionic_strength is 0.
double debye_length(const Physics& physics);

/// One line naming the model and its parameters, for logs and file metadata, e.g.
/// "Debye-Hueckel, I = 0.15 mol/L, eps = 78.54, T = 298.15 K (Debye length 7.857 A)".
std::string describe_model(const Physics& physics);

/// The pair term as a formula: "1/r", "exp(-r/lambda)/r" or "1/r^2".
std::string_view pair_formula(const Physics& physics) noexcept;

/// Throws UsageError, naming the option, when temperature, dielectric, min_distance, the ionic
/// strength or the Coulomb constant is outside its range in dcs/limits.hpp (which says why the
/// ranges are what they are), or when the ionic strength is combined with eps = k r.
void validate(const Physics& physics);

struct System;

/// The largest |V| any grid point can reach: |coulomb_factor| * sum |q| / min_distance (squared
/// for eps = k r).
double max_potential(const System& system, const Physics& physics);

/// Throws UsageError when max_potential() exceeds limits::kMaxPotential (1e30): the map would
/// no longer be meaningful in float32. Call after reading the atoms, before computing.
void check_potential_bound(const System& system, const Physics& physics);

/// The factor that turns sum q g(r) into the requested unit: the Coulomb constant divided by
/// the dielectric (by k for eps = k r). kT/e at 298.15 K: about 560.4593; kcal/mol/e: about
/// 332.0637.
double coulomb_factor(const Physics& physics);

/// The Coulomb constant in the unit (the preset's, or CODATA's): coulomb_factor() times eps.
double coulomb_constant(const Physics& physics);

/// Human-readable unit of the factor itself, e.g. "kT*A/e^2" ("kT*A^2/e^2" with eps = k r).
std::string factor_unit(Unit unit, DielectricModel model = DielectricModel::kConstant);

// --- The Coulomb term ------------------------------------------------------------------------
//
// Every backend adds q g(max(r, r_min)) for each atom-point pair through add_coulomb_term():
// the float64 reference, the CPU fast backend's scalar and SIMD kernels and the CUDA kernels.
// It is written once for any Real that has the operations below: double and float (overloads
// here, DCS_HD for the device) and the CPU SIMD vector types (overloads found by
// argument-dependent lookup in libdcs/src/cpu/simd_*.hpp). The pieces:
//   clamp_r2(r2, min_r2)             max(r2, min_r2), NaN in, NaN out;
//   a pair model (CoulombPair, ScreenedPair, InverseSquarePair): which g(r);
//   a special-function policy        how 1/sqrt, 1/x and 2^x are formed: hardware, FMA-pipe
//     (HardwareRsqrt, ...)           or Newton-refined; .add(e, q, x) is e + q / sqrt(x);
//   multiply_add(a, b, c)            a * b + c, fused where the hardware fuses it.
// Edge cases (r2 = 0, inside and on r_min, +inf, NaN, the smallest accepted r_min) are tested
// once for every Real, policy and model (tests/support/coulomb_term_cases.hpp).

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

/// 1/x in the precision of Real. On the device the float overload is MUFU.RCP (rcp.approx,
/// ~1 ulp, the same throughput as MUFU.RSQ); on the host it is exact to rounding.
DCS_HD inline double reciprocal(double x) { return 1.0 / x; }
DCS_HD inline float reciprocal(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return 1.0f / x;
#endif
}

/// 2^x in the precision of Real, for x <= 0 (the screened term's exp(-kappa r)). On the device
/// the float overload is MUFU.EX2 (ex2.approx, 2 ulp; 0 below 2^-126); on the host std::exp2.
DCS_HD inline double exponential2(double x) {
#if defined(__CUDA_ARCH__)
  return exp2(x);
#else
  return std::exp2(x);
#endif
}
DCS_HD inline float exponential2(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return std::exp2(x);
#endif
}

/// Coefficients of 2^f on f in [-1/2, 1/2] (f = x - round(x)), lowest order first: the Taylor
/// series of exp(f ln 2) to degree 6, relative error below 1.3e-7, for the SIMD exponential2()
/// overloads of libdcs/src/cpu/simd_*.hpp (vector types have no hardware 2^x).
inline constexpr float kExp2Coefficients[7] = {1.0f,           0.693147181f,   0.240226507f,
                                               0.0555041087f,  0.00961812911f, 0.00133335581f,
                                               0.000154035304f};

/// 2^f for f in [-1/2, 1/2] by Horner's rule on kExp2Coefficients, for a SIMD type Vec (with
/// broadcast and multiply_add); the caller scales by 2^round(x).
template <class Vec>
inline Vec exp2_fraction(Vec f) {
  Vec p = Vec::broadcast(kExp2Coefficients[6]);
  for (int i = 5; i >= 0; --i) p = multiply_add(p, f, Vec::broadcast(kExp2Coefficients[i]));
  return p;
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

// Special-function policies: how the terms are formed from 1/sqrt(x), 1/x and 2^x. Each has
//   add(e, q, x)                  e + q / sqrt(x)                       (Coulomb)
//   add_inverse_square(e, q, x)   e + q / x                             (eps = k r)
//   add_screened(e, q, x, c)      e + q 2^(c sqrt(x)) / sqrt(x)         (c = -kappa log2(e))
// and kChargeScale, the factor the caller applies to the charges it passes (once, when staging
// atoms): a power of two, so scaled sums round exactly as unscaled.

/// reciprocal_sqrt(), reciprocal() and exponential2(): MUFU on the device, correctly rounded
/// on the host.
struct HardwareRsqrt {
  static constexpr float kChargeScale = 1.0f;
  template <class Real>
  DCS_HD Real add(Real energy, Real charge, Real x) const {
    return multiply_add(charge, reciprocal_sqrt(x), energy);
  }
  template <class Real>
  DCS_HD Real add_inverse_square(Real energy, Real charge, Real x) const {
    return multiply_add(charge, reciprocal(x), energy);
  }
  /// r = x / sqrt(x): one MUFU.RSQ and one MUFU.EX2 per pair on the device.
  template <class Real>
  DCS_HD Real add_screened(Real energy, Real charge, Real x, Real c) const {
    const Real y = reciprocal_sqrt(x);
    return multiply_add(charge * y, exponential2(c * (x * y)), energy);
  }
};

/// rsqrt_fma_pipe_parts() with the charge folded into the seed: (q y0) P(e) + energy, float only.
/// 1/x is the square of the same 1/sqrt(x) (two FMULs more, still no MUFU); the screened term
/// takes its 2^x from MUFU.EX2, so a pair costs one MUFU instead of two.
struct FmaPipeRsqrt {
  static constexpr float kChargeScale = 1.0f;
  DCS_HD float add(float energy, float charge, float x) const {
    const RsqrtParts parts = rsqrt_fma_pipe_parts(x);
    return multiply_add(charge * parts.seed, parts.correction, energy);
  }
  DCS_HD float add_inverse_square(float energy, float charge, float x) const {
    const RsqrtParts parts = rsqrt_fma_pipe_parts(x);
    const float y = parts.seed * parts.correction;
    return multiply_add(charge * y, y, energy);
  }
  DCS_HD float add_screened(float energy, float charge, float x, float c) const {
    const RsqrtParts parts = rsqrt_fma_pipe_parts(x);
    const float y = parts.seed * parts.correction;
    return multiply_add(charge * y, exponential2(c * (x * y)), energy);
  }
};

/// A hardware estimate y0 (approximate_reciprocal_sqrt: vrsqrtps, 12 bits; vrsqrt14ps, 14 bits)
/// refined by one Newton step, 1/sqrt(x) = y0/2 (3 - x y0^2) to a few ulp, for the SIMD types.
/// The 1/2 is folded into the charges (kChargeScale), leaving 4 operations after the estimate:
/// (q/2 y0) (3 - x y0 y0) + energy as FMUL, FNMADD, FMUL, FMADD. 1/x likewise from
/// approximate_reciprocal (vrcpps, vrcp14ps): 1/x = y0 (2 - x y0) = (1/2) y0 (4 - 2 x y0).
struct NewtonRsqrt {
  static constexpr float kChargeScale = 0.5f;
  template <class Vec>
  Vec add(Vec energy, Vec half_charge, Vec x) const {
    const Vec y0 = approximate_reciprocal_sqrt(x);
    const Vec three = Vec::broadcast(3.0f);
    return multiply_add(half_charge * y0, negative_multiply_add(x * y0, y0, three), energy);
  }
  template <class Vec>
  Vec add_inverse_square(Vec energy, Vec half_charge, Vec x) const {
    const Vec y0 = approximate_reciprocal(x);
    const Vec two = Vec::broadcast(2.0f), four = Vec::broadcast(4.0f);
    return multiply_add(half_charge * y0, negative_multiply_add(x * y0, two, four), energy);
  }
  /// With t = 3 - x y0^2: 1/sqrt(x) = y0 t / 2 and r = x/sqrt(x) = (x y0) t / 2.
  template <class Vec>
  Vec add_screened(Vec energy, Vec half_charge, Vec x, Vec c) const {
    const Vec y0 = approximate_reciprocal_sqrt(x);
    const Vec xy = x * y0;
    const Vec t = negative_multiply_add(xy, y0, Vec::broadcast(3.0f));
    const Vec exponent = (c * Vec::broadcast(0.5f)) * xy * t;
    return multiply_add(half_charge * y0, t * exponential2(exponent), energy);
  }
};

// Pair models: which g(r) a kernel sums, by forwarding to the policy's matching term. The
// screened model carries its constant in the kernel's Real (a broadcast vector for SIMD).

struct CoulombPair {
  template <class Real, class Policy>
  DCS_HD Real add(Real energy, Real charge, Real x, Policy policy) const {
    return policy.add(energy, charge, x);
  }
};

struct InverseSquarePair {
  template <class Real, class Policy>
  DCS_HD Real add(Real energy, Real charge, Real x, Policy policy) const {
    return policy.add_inverse_square(energy, charge, x);
  }
};

template <class Real>
struct ScreenedPair {
  Real c;  ///< -kappa log2(e), kappa in the kernel's length unit
  template <class Policy>
  DCS_HD Real add(Real energy, Real charge, Real x, Policy policy) const {
    return policy.add_screened(energy, charge, x, c);
  }
};

/// The pair model of kind Kind, the one owner of that choice for every kernel (CPU SIMD, CUDA
/// grid and points kernels, benchmarks): the screened model takes its constant c in the
/// kernel's Real (a broadcast vector for SIMD); the others ignore it.
template <PairKind Kind, class Real>
DCS_HD inline auto pair_model(Real c) {
  if constexpr (Kind == PairKind::kScreened) return ScreenedPair<Real>{c};
  else if constexpr (Kind == PairKind::kInverseSquare) return InverseSquarePair{};
  else return CoulombPair{};
}

/// ScreenedPair's constant for a kappa in the kernel's length unit: -kappa log2(e).
inline double screened_exponent_scale(double kappa) { return -kappa * 1.4426950408889634; }

/// The Coulomb term of every backend: energy + q g(max(r, r_min)) for one charge at squared
/// distance r2, given r_min^2 (charge pre-multiplied by Policy::kChargeScale), g the model's.
/// Clamping r2 rather than r keeps one rsqrt per pair and removes the singularity; a NaN r2
/// gives a NaN energy on every backend.
template <class Real, class Policy = HardwareRsqrt, class Model = CoulombPair>
DCS_HD inline Real add_coulomb_term(Real energy, Real charge, Real r2, Real min_r2,
                                    Policy policy = {}, Model model = {}) {
  return model.add(energy, charge, clamp_r2(r2, min_r2), policy);
}

/// add_coulomb_term() for a caller that has shown r2 >= min_r2 already (the CUDA production
/// kernel's fast path, whose warps vote atoms near a point onto the clamped path): the same
/// arithmetic without the clamp.
template <class Real, class Policy = HardwareRsqrt, class Model = CoulombPair>
DCS_HD inline Real add_unclamped_coulomb_term(Real energy, Real charge, Real r2, Policy policy = {},
                                              Model model = {}) {
  return model.add(energy, charge, r2, policy);
}

/// q g(max(r, r_min)) on its own (scatter's atomicAdd operand): add_coulomb_term() onto zero.
template <class Real, class Model = CoulombPair>
DCS_HD inline Real coulomb_term(Real charge, Real r2, Real min_r2, Model model = {}) {
  return add_coulomb_term(Real(0), charge, r2, min_r2, HardwareRsqrt{}, model);
}

}  // namespace dcs
