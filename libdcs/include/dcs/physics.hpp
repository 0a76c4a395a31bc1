// The physics of dcs, written once: the Coulomb term shared by every CPU loop and CUDA kernel,
// the CODATA constants and the output units.
//
//   V(p) = factor * sum_i q_i / max(|p - r_i|, min_distance)
//
// with positions in Å, charges in e and `factor` the Coulomb constant expressed in the output
// unit and divided by the relative dielectric constant.
#pragma once

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#if defined(__CUDACC__)
#define DCS_HD __host__ __device__
#else
#define DCS_HD
#endif

namespace dcs {

/// CODATA 2022 values (SI). e, k_B and N_A are exact since the 2019 SI redefinition.
namespace codata {
inline constexpr double kElementaryCharge = 1.602176634e-19;    // C
inline constexpr double kBoltzmann = 1.380649e-23;              // J/K
inline constexpr double kAvogadro = 6.02214076e23;              // 1/mol
inline constexpr double kVacuumPermittivity = 8.8541878188e-12; // F/m (CODATA 2022)
inline constexpr double kPi = 3.14159265358979323846;
inline constexpr double kAngstrom = 1e-10;                      // m
inline constexpr double kThermochemicalCalorie = 4.184;         // J
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
inline constexpr double kDefaultMinDistance = 0.1;     ///< Å; clamp of |p - r| (no infinities)

/// Physical parameters of one map.
struct Physics {
  Unit unit = Unit::kTPerE;
  double temperature = kDefaultTemperature;  ///< K; used only by kT/e
  double dielectric = kDefaultDielectric;    ///< relative permittivity, > 0
  double min_distance = kDefaultMinDistance; ///< Å, > 0
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
/// On the device the float overload is one FMNMX.NAN (max.NaN.f32).
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

/// The reciprocal square root of reciprocal_sqrt(), as a function object (the default of
/// add_coulomb_term(); kernels may pass another, such as an FMA-pipe rsqrt).
struct HardwareRsqrt {
  template <class Real>
  DCS_HD Real operator()(Real x) const { return reciprocal_sqrt(x); }
};

/// The Coulomb term of every backend: energy + q / max(r, r_min) for one charge at squared
/// distance r2, given r_min^2. Clamping r2 rather than r keeps one rsqrt per pair and removes
/// the singularity; a NaN r2 gives a NaN energy. Real is double (reference), float (GPU and
/// scalar CPU) or a SIMD vector type with clamp_r2 / reciprocal_sqrt / multiply_add overloads
/// found by argument-dependent lookup (the CPU fast backend).
template <class Real, class Rsqrt = HardwareRsqrt>
DCS_HD inline Real add_coulomb_term(Real energy, Real charge, Real r2, Real min_r2,
                                    Rsqrt rsqrt = {}) {
  return multiply_add(charge, rsqrt(clamp_r2(r2, min_r2)), energy);
}

/// Contribution q / max(r, r_min) of one charge at squared distance r2, given r_min^2.
template <class Real>
DCS_HD inline Real coulomb_term(Real charge, Real r2, Real min_r2) {
  return charge * reciprocal_sqrt(clamp_r2(r2, min_r2));
}

}  // namespace dcs
