// --box, the cell of atom files and the rules of --method ewald (--periodic) (run_config.hpp,
// periodic_config.hpp).
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "periodic_config.hpp"

#include "dcs/error.hpp"
#include "dcs/io/cryst1.hpp"
#include "dcs/log.hpp"
#include "dcs/periodic/ewald_backend.hpp"
#include "dcs/pipeline/run_config.hpp"

namespace dcs {

UnitCell parse_box(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return UsageError(fmt::format(
        "--box {}: {} (give a,b,c in Å, or a,b,c,alpha,beta,gamma with the angles in degrees, "
        "e.g. --box 40,40,40 or --box 77.1,77.1,77.1,109.47,109.47,109.47)",
        text.empty() ? "\"\"" : text, why));
  };
  std::vector<double> values;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = text.find(',', from);
    const std::string part =
        text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    double value = 0.0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || error != std::errc() || end != part.data() + part.size())
      throw bad(fmt::format("'{}' is not a number", part));
    if (!std::isfinite(value)) throw bad(fmt::format("'{}' is not a finite number", part));
    values.push_back(value);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (values.size() != 3 && values.size() != 6)
    throw bad(fmt::format("{} values; expected 3 or 6", values.size()));
  for (int i = 0; i < 3; ++i)
    if (!(values[i] > 0.0)) throw bad(fmt::format("the length {:g} is not positive", values[i]));
  const Vec3 angles =
      values.size() == 6 ? Vec3{values[3], values[4], values[5]} : Vec3{90.0, 90.0, 90.0};
  const UnitCell cell = UnitCell::from_lengths_angles({values[0], values[1], values[2]}, angles);
  if (!cell.is_periodic())
    throw bad(cell.why_unusable() ? *cell.why_unusable() : std::string("no usable cell"));
  return cell;
}

void check_periodic(const RunConfig& config) {
  if (config.input.box && config.trajectory)
    throw UsageError(
        "--box gives atom files their cell; a trajectory's frames carry their own (or the "
        "topology's)");
  if (config.method.kind != Method::kEwald) return;
  periodic::ewald_settings(config.method.ewald_error);  // throws for a target out of range
  if (!traits(Method::kEwald).supports(pair_term(config.physics).kind))
    throw UsageError("--periodic (--method ewald) supports the Coulomb model only; the " +
                     describe_model(config.physics) +
                     " model has no periodic form here: leave out --ionic-strength and "
                     "--dielectric-model distance, or drop --periodic");
  if (config.trajectory && !config.trajectory->align.empty())
    throw UsageError(
        "--align with --periodic: fitting rotates the atoms but not their cell, which breaks "
        "the periodic images; leave out --align (--center-on keeps the solute in the cell)");
  if (config.points && config.validation.enabled)
    throw UsageError(
        "--validate of --points/--at-atoms compares with the open-boundary direct sum; with "
        "--periodic it is not available (maps measure their error against the float64 Ewald "
        "sum in every run)");
}

}  // namespace dcs

namespace dcs::pipeline {

void apply_cell(const RunConfig& config, const std::string& input, System& system) {
  if (config.input.box) {
    system.cell = *config.input.box;
  } else if (config.method.kind == Method::kEwald) {
    if (const std::optional<UnitCell> cell = io::read_cryst1(input)) {
      system.cell = *cell;
      log().info("{}: the cell of its CRYST1 record: {}", input, cell->describe());
    }
  }
  // Refused now, before a grid is placed or a file begun: no cell, no atoms, another model.
  if (config.method.kind == Method::kEwald) periodic::check_ewald_input(system, config.physics);
}

}  // namespace dcs::pipeline
