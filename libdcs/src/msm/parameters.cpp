// Choosing (h, a, order, k) from a relative RMS error target, and checking a choice. The table
// is calibrated on real molecules (tests/unit/msm_test.cpp, MsmCalibration): each row's
// measured error stays below its target with margin.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/method.hpp"
#include "dcs/msm.hpp"
#include "dcs/physics.hpp"

namespace dcs {
namespace {

struct Row {
  double target;
  MsmParameters parameters;
};

// Loosest first; a target picks the first row whose own target is at or below it. Measured
// relative RMS on the default 65^3 grids (10 A padding) of hca and 1a63 (apbs-data), the worst
// of the four calibration molecules (2lzt, hca, 1a63, actin-dimer complex):
//   target  order    h     a   k   worst measured
//   1e-2    cubic    2.0   8   2   4.2e-3
//   1e-3    quintic  1.5   8   3   5.0e-4
//   1e-4    quintic  1.25 11   4   4.4e-5
//   1e-5    quintic  1.0  13   4   5.8e-6
// Lowering h helps more than raising a per unit of cost until the level-0 lattice sum,
// (2a/h)^3 per lattice point, dominates (h = 1 A); the split degree k matters little
// beyond C2 for cubic and C3 for quintic.
constexpr Row kTable[] = {
    {1e-2, {2.0, 8.0, 4, 2, 1e-2}},
    {1e-3, {1.5, 8.0, 6, 3, 1e-3}},
    {1e-4, {1.25, 11.0, 6, 4, 1e-4}},
    {1e-5, {1.0, 13.0, 6, 4, 1e-5}},
};

}  // namespace

MsmParameters msm_parameters(double target) {
  if (!(target >= 1e-5 && target <= 1e-1))
    throw UsageError("--msm-error must be in [1e-5, 1e-1], got " + fmt::format("{}", target));
  // A testing aid, not an option: DCS_MSM_TESTING_PARAMETERS="h a order k" replaces the
  // table's choice (still checked by validate()), so that tests can make a run miss its target
  // on purpose and see it exit 4 (tests/integration/cli_msm_tests.py).
  if (const char* text = std::getenv("DCS_MSM_TESTING_PARAMETERS"); text != nullptr && *text) {
    MsmParameters p;
    if (std::sscanf(text, "%lf %lf %d %d", &p.spacing, &p.cutoff, &p.order, &p.split) != 4)
      throw UsageError(std::string("DCS_MSM_TESTING_PARAMETERS must be \"h a order k\", got \"") +
                       text + "\"");
    p.target = target;
    validate(p);
    return p;
  }
  for (const Row& row : kTable)
    if (row.target <= target * (1.0 + 1e-9)) {
      MsmParameters p = row.parameters;
      p.target = target;
      return p;
    }
  MsmParameters p = kTable[std::size(kTable) - 1].parameters;
  p.target = target;
  return p;
}

void validate(const MsmParameters& p) {
  if (!(p.spacing >= 0.25 && p.spacing <= 20.0))
    throw UsageError("MSM lattice spacing must be in [0.25, 20] A, got " +
                     fmt::format("{}", p.spacing));
  if (!(p.cutoff >= 2.0 * p.spacing && p.cutoff <= 100.0))
    throw UsageError("MSM cutoff must be in [2 h, 100] A, got " + fmt::format("{}", p.cutoff));
  if (p.order != 4 && p.order != 6)
    throw UsageError("MSM interpolation order must be 4 or 6, got " + std::to_string(p.order));
  if (p.split < 1 || p.split > 6)
    throw UsageError("MSM splitting degree must be 1..6, got " + std::to_string(p.split));
}

void check_msm_input(const System& system, const Physics& physics,
                     const MsmParameters& parameters) {
  if (system.atoms.empty()) throw UsageError("no atoms to compute");
  if (!traits(Method::kMsm).supports(pair_term(physics).kind))
    throw UsageError("--method msm supports the Coulomb model only; the " +
                     describe_model(physics) + " model needs --method exact");
  if (physics.min_distance >= 0.5 * parameters.cutoff)
    throw UsageError("--method msm needs --min-distance below half the MSM cutoff (" +
                     fmt::format("{}", parameters.cutoff) + " A)");
}

std::string describe(const MsmParameters& p) {
  char text[160];
  std::snprintf(text, sizeof text, "msm %s, h = %g A, a = %g A, C%d splitting",
                p.order == 4 ? "cubic" : "quintic", p.spacing, p.cutoff, p.split);
  return text;
}

}  // namespace dcs
