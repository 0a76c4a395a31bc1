#include "dcs/presets.hpp"

#include "dcs/error.hpp"

namespace dcs {
namespace {

Preset chimerax() {
  // RBVI/ChimeraX@6911d7b src/bundles/coulombic: esp_cpp/esp.cpp sums q / r^2 (no sqrt when
  // dist_dep) times 331.62 / dielectric, i.e. eps(r) = 4 r with the default dielectric 4
  // (cmd.py); kcal/(mol e). Grid: gspacing 1.0, gpadding 5.0, origin min - (padding +
  // spacing/2), numpy.arange counts; vertices moved 1.4 Å along the normals; red-white-blue
  // over -10..10.
  Preset p{"chimerax", "ChimeraX coulombic", {}, 1.0, 5.0, GridLayout::kChimerax, 1.4, 10.0, false};
  p.physics.unit = Unit::KcalPerMolPerE;
  p.physics.dielectric_model = DielectricModel::kDistance;
  p.physics.dielectric = 4.0;
  p.physics.coulomb_constant = 331.62;
  p.physics.preset = p.name;
  return p;
}

Preset pymol() {
  // schrodinger/pymol-open-source@9b9cd6f: layer1/SettingInfo.h coulomb_units_factor 557.0
  // (kT/e at 300 K) and coulomb_dielectric 2.0; layer3/Selector.cpp SelectorMapCoulomb sums
  // q * 557/2 / r without cutoff for map type "coulomb". map_new's defaults
  // (modules/pymol/creating.py): grid gaussian_resolution / 3 = 2/3 Å, buffer
  // gaussian_resolution = 2 Å; layer2/ObjectMap.cpp lays the points out (GridLayout::kPymol).
  // PyMOL colours ramps from -range to range; its coulomb maps are usually shown at +-10 kT/e.
  Preset p{"pymol", "PyMOL map_new coulomb", {}, 2.0 / 3.0, 2.0, GridLayout::kPymol, 0.0, 10.0,
           false};
  p.physics.unit = Unit::kTPerE;
  p.physics.temperature = 300.0;
  p.physics.dielectric = 2.0;
  p.physics.coulomb_constant = 557.0;
  p.physics.preset = p.name;
  return p;
}

Preset pmepot() {
  // VMD's plugins/pmepot (DESIGN.md §10): the reciprocal part of smooth PME only, Gaussian
  // charges of sigma = 1/(sqrt 2 * ewaldfactor), ewaldfactor 0.25 1/A, order-4 B-splines, the
  // map grid = the PME mesh over the cell at about 1 A (-grid 1.0), k = 0 left out; kT/e at
  // 300 K in vacuum (dielectric 1). The grid spans the cell: no padding. Colour scale: VMD
  // users colour PMEpot maps over about -10..10 kT/e.
  Preset p{"pmepot", "VMD PMEpot", {}, 1.0, 0.0, GridLayout::kDcs, 0.0, 10.0, true};
  p.physics.unit = Unit::kTPerE;
  p.physics.temperature = 300.0;
  p.physics.dielectric = 1.0;
  p.physics.preset = p.name;
  return p;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all{chimerax(), pymol(), pmepot()};
  return all;
}

const Preset& find_preset(std::string_view name) {
  std::string valid;
  for (const Preset& preset : presets()) {
    if (preset.name == name) return preset;
    valid += (valid.empty() ? "" : ", ") + preset.name;
  }
  throw UsageError("unknown --preset '" + std::string(name) + "' (valid: " + valid + ")");
}

}  // namespace dcs
