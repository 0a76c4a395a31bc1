// The ranges dcs accepts for every input value and option, checked before any computation
// (options: UsageError, exit 2; file contents: InputError naming file:line, exit 3).
//
// They come from the float32 arithmetic of the kernels, with room to spare, and are far beyond
// any molecule (README "What dcs refuses, and why" has the table):
// - Kernels form displacements from the grid in float32 as (i - i_atom)·h - residual
//   (atoms.hpp), square them and sum q'/max(r, r_min) with q' = q·C. FLT_MAX is 3.4e38, so
//   |displacement| must stay below 1.8e19 Å; grid points within 1e7 Å of the coordinate origin
//   and atoms within 1e6 Å keep it below 1.1e7 Å (squares ≤ 1.3e14).
// - Neighbouring grid points must differ in float32 and in OpenDX's 7 significant digits:
//   h ≥ 2^-20 · (largest |coordinate| of the grid). Absolutely, h ∈ [1e-4, 1e4] Å.
// - The largest |V| any point can reach is C·Σ|q|/r_min. With C ≤ 560.5·298.15/T_min/ε_min =
//   1.7e11 (kT/e at 1e-3 K and ε = 1e-3), |q| ≤ 1e6 e and r_min ≥ 1e-6 Å one atom contributes at
//   most 1.7e23, so float32 overflows only beyond 2e15 atoms; check_potential_bound() still
//   refuses C·Σ|q|/r_min > 1e30 so the bound is stated rather than implied.
#pragma once

#include <cstdint>

namespace dcs::limits {

inline constexpr double kMaxCoordinate = 1e6;  ///< Å: |x|, |y|, |z| of atoms, --origin, --center
inline constexpr double kMaxCharge = 1e6;      ///< e: |q| of one atom
inline constexpr double kMaxRadius = 1e6;      ///< Å: PQR radius (>= 0; stored, not used)
inline constexpr double kMinSpacing = 1e-4;    ///< Å
inline constexpr double kMaxSpacing = 1e4;     ///< Å
inline constexpr double kMaxPadding = 1e6;     ///< Å
inline constexpr double kMaxGridCoordinate = 1e7;  ///< Å: |coordinate| of every grid point
/// h >= kSpacingResolution * (largest |coordinate| of the grid): 2^-20, about 1e-6, so that
/// neighbouring points differ in float32 (2^-23 relative) and in OpenDX's %12.6e.
inline constexpr double kSpacingResolution = 0x1p-20;
inline constexpr std::int64_t kMaxCountPerAxis = 1'000'000;  ///< --grid, and derived counts
inline constexpr double kMinTemperature = 1e-3;              ///< K
inline constexpr double kMaxTemperature = 1e6;               ///< K
inline constexpr double kMinDielectric = 1e-3;
inline constexpr double kMaxDielectric = 1e6;
inline constexpr double kMinMinDistance = 1e-6;  ///< Å
inline constexpr double kMaxMinDistance = 1e3;   ///< Å
inline constexpr double kMaxPotential = 1e30;    ///< bound on C·Σ|q|/r_min in the output unit
/// mol/L. Debye-Hueckel is a dilute-solution theory (good to ~0.1 M, used to ~1 M); 10 M is past
/// any solution and keeps kappa (and exp(-kappa r) per Å) finite in float32.
inline constexpr double kMaxIonicStrength = 10.0;
/// A preset's Coulomb constant (unit·Å/e²): the largest CODATA one is e/Å in kT/e at 1e-3 K.
inline constexpr double kMinCoulombConstant = 1e-6;
inline constexpr double kMaxCoulombConstant = 1e12;

}  // namespace dcs::limits
