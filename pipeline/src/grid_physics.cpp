// The grid and physics options resolved into a RunConfig (run_config.hpp): one set of rules for
// the command line and for library callers (the Python package), so the same options place the
// same grid and select the same physics.
#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/presets.hpp"

namespace dcs {
namespace {

/// --grid N or --grid NX NY NZ.
std::array<std::int64_t, 3> grid_counts(const std::vector<std::int64_t>& counts) {
  if (counts.size() == 1) return {counts[0], counts[0], counts[0]};
  if (counts.size() == 3) return {counts[0], counts[1], counts[2]};
  throw UsageError(fmt::format("--grid takes 1 (N) or 3 (NX NY NZ) counts, not {}", counts.size()));
}

/// --preset: the tool's physics and grid defaults, under the options given explicitly.
void apply_preset(const GridPhysicsOptions& options, RunConfig& config) {
  const Preset& preset = find_preset(options.preset);
  // The preset's Coulomb constant is a number in its own unit (and, for kT/e, at its own
  // temperature): another unit would silently rescale it.
  if (options.units && preset.physics.coulomb_constant != 0.0)
    throw UsageError(
        fmt::format("--units does not combine with --preset {} (its Coulomb "
                    "constant {:g} is in {}); drop one of them",
                    preset.name, preset.physics.coulomb_constant, unit_name(preset.physics.unit)));
  Physics physics = preset.physics;
  if (options.temperature) physics.temperature = *options.temperature;
  if (options.dielectric) physics.dielectric = *options.dielectric;
  if (options.dielectric_model)
    physics.dielectric_model = parse_dielectric_model(*options.dielectric_model);
  physics.ionic_strength = config.physics.ionic_strength;
  physics.min_distance = config.physics.min_distance;
  config.physics = physics;
  GridRequest& grid = config.grid;
  if (options.counts.empty() && !options.spacing) {
    grid.counts.reset();
    grid.spacing = preset.spacing;
  }
  if (!options.padding) grid.padding = preset.padding;
  grid.layout = preset.layout;
  config.method.pmepot =
      preset.pmepot_map;  // the method and its error target: the CLI's set_periodic
}

}  // namespace

void resolve_grid_and_physics(const GridPhysicsOptions& options, RunConfig& config) {
  GridRequest& grid = config.grid;
  grid = GridRequest{};
  if (!options.counts.empty()) grid.counts = grid_counts(options.counts);
  grid.spacing = options.spacing;
  if (!grid.counts && !grid.spacing) grid.counts = {{129, 129, 129}};
  if (options.padding) grid.padding = *options.padding;
  grid.origin = options.origin;
  grid.center = options.center;

  Physics& physics = config.physics;
  physics = Physics{};
  physics.unit = parse_unit(options.units.value_or("kT/e"));
  if (options.temperature) physics.temperature = *options.temperature;
  if (options.dielectric) physics.dielectric = *options.dielectric;
  physics.dielectric_model = parse_dielectric_model(options.dielectric_model.value_or("constant"));
  if (options.ionic_strength) physics.ionic_strength = *options.ionic_strength;
  if (options.min_distance) physics.min_distance = *options.min_distance;
  // Debye-Hueckel screening is a property of a solvent: without --dielectric, water's. Any
  // --ionic-strength given, 0 included, means "in water", so a salt sweep from I = 0 is continuous
  // (I -> 0 is the unscreened limit in the same eps, not a jump to vacuum).
  if (options.ionic_strength && !options.dielectric &&
      physics.dielectric_model == DielectricModel::kConstant)
    physics.dielectric = kWaterDielectric;
  if (!options.preset.empty()) apply_preset(options, config);
  validate(config.grid);
  validate(config.physics);
}

}  // namespace dcs
