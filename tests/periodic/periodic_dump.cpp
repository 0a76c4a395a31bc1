// periodic_dump: the Ewald energy and the potential at each atom of a charge set in a cell, by
// dcs::periodic (smooth PME, or the float64 Ewald sum with --reference), for the OpenMM
// cross-check (openmm_check.py) until the `dcs --periodic --at-atoms` command exists.
//   INPUT (text): "cell a b c alpha beta gamma" (Å, degrees), then one "x y z q" line per
//   atom (Å, e); '#' lines are comments.
//   stdout: one JSON object {"atoms", "energy" (e²/Å), "parameters", "prepare_s", "atoms_s"};
//   --potentials FILE writes φ_i (e/Å) as float64, little-endian, in atom order.
//   --map-spacing H also reads φ on the cell's fractional grid of about H Å spacing ("map_points",
//   "map_s"), and --reference-points M compares the first M of those points (every
//   ⌈points/M⌉-th) with the float64 Ewald sum at reference_parameters() (accuracy
//   min(1e-8, D/1000), real cutoff max(2 rc, shortest width / 2), or --reference-cutoff)
//   ("map_error": relative RMS, "reference_cutoff", "reference_s").
//   The timings are for bench/periodic_cpu_bench.py.
//   --reference-at POINTS OUT: the float64 Ewald sum (reference_parameters()) at the "x y z"
//   lines of POINTS into OUT (float64, e/Å): the oracle of tests/periodic/periodic_cli_tests.py.
// Usage: periodic_dump INPUT [--accuracy D] [--cutoff RC] [--order P] [--threads N]
//                            [--reference] [--potentials FILE] [--map-spacing H]
//                            [--reference-points M] [--reference-cutoff RC]
//                            [--reference-at POINTS OUT]
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/periodic/ewald_reference.hpp"
#include "dcs/periodic/periodic_potential.hpp"

namespace {

struct Input {
  dcs::UnitCell cell;
  std::vector<dcs::Vec3> positions;
  std::vector<double> charges;
};

Input read_input(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw dcs::InputError(path, 0, "cannot open the file");
  Input input;
  bool have_cell = false;
  std::string line;
  for (std::uint64_t number = 1; std::getline(file, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    if (!have_cell) {
      std::string word;
      dcs::Vec3 lengths{}, angles{};
      if (!(fields >> word >> lengths[0] >> lengths[1] >> lengths[2] >> angles[0] >> angles[1] >>
            angles[2]) ||
          word != "cell")
        throw dcs::InputError(path, number, "expected 'cell a b c alpha beta gamma'");
      input.cell = dcs::UnitCell::from_lengths_angles(lengths, angles);
      if (!input.cell.is_periodic())
        throw dcs::InputError(path, number, "the cell is not periodic: " + input.cell.describe());
      have_cell = true;
      continue;
    }
    dcs::Vec3 r{};
    double q = 0.0;
    if (!(fields >> r[0] >> r[1] >> r[2] >> q))
      throw dcs::InputError(path, number, "expected 'x y z q'");
    input.positions.push_back(r);
    input.charges.push_back(q);
  }
  if (!have_cell) throw dcs::InputError(path, 0, "no 'cell' line");
  return input;
}

struct Options {
  dcs::periodic::PeriodicSettings settings;
  bool reference = false;
  std::string potentials_path;
  double map_spacing = 0.0;
  std::size_t reference_points = 0;
  double reference_cutoff = 0.0;            ///< 0: max(2 cutoff, shortest width / 2)
  std::string reference_at, reference_out;  ///< --reference-at POINTS OUT
};

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 2; i < argc; ++i) {
    const std::string option = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw dcs::UsageError(option + " needs a value");
      return argv[++i];
    };
    if (option == "--accuracy") options.settings.accuracy = std::stod(value());
    else if (option == "--cutoff") options.settings.real_cutoff = std::stod(value());
    else if (option == "--order") options.settings.order = std::stoi(value());
    else if (option == "--threads") options.settings.threads = unsigned(std::stoul(value()));
    else if (option == "--reference") options.reference = true;
    else if (option == "--potentials") options.potentials_path = value();
    else if (option == "--map-spacing") options.map_spacing = std::stod(value());
    else if (option == "--reference-points") options.reference_points = std::stoul(value());
    else if (option == "--reference-cutoff") options.reference_cutoff = std::stod(value());
    else if (option == "--reference-at") {
      options.reference_at = value();
      options.reference_out = value();
    } else throw dcs::UsageError("unknown option " + option);
  }
  return options;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The points (i + ½)/n_k along each cell vector, n_k = ⌈|a_k| / spacing⌉.
std::vector<dcs::Vec3> cell_grid(const dcs::UnitCell& cell, double spacing) {
  std::array<int, 3> n{};
  for (int k = 0; k < 3; ++k) n[k] = std::max(1, int(std::ceil(cell.lengths()[k] / spacing)));
  std::vector<dcs::Vec3> points;
  points.reserve(std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]));
  for (int i = 0; i < n[0]; ++i)
    for (int j = 0; j < n[1]; ++j)
      for (int k = 0; k < n[2]; ++k)
        points.push_back(
            cell.to_cartesian(dcs::Vec3{(i + 0.5) / n[0], (j + 0.5) / n[1], (k + 0.5) / n[2]}));
  return points;
}

/// The map part of the JSON: its points' timing and, with a sample, its measured error.
std::string map_report(const Input& input, const Options& options,
                       const dcs::periodic::PeriodicPotential& potential) {
  const std::vector<dcs::Vec3> points = cell_grid(input.cell, options.map_spacing);
  auto start = std::chrono::steady_clock::now();
  const std::vector<double> phi = potential.potential_at(points);
  std::string report =
      fmt::format(", \"map_points\": {}, \"map_s\": {:.3f}", points.size(), seconds_since(start));
  if (options.reference_points == 0) return report;
  const std::size_t stride =
      (points.size() + options.reference_points - 1) / options.reference_points;
  std::vector<dcs::Vec3> sample;
  std::vector<double> sampled;
  for (std::size_t i = 0; i < points.size(); i += stride)
    sample.push_back(points[i]), sampled.push_back(phi[i]);
  start = std::chrono::steady_clock::now();
  dcs::periodic::EwaldParameters parameters =
      dcs::periodic::reference_parameters(input.cell, options.settings);
  if (options.reference_cutoff > 0.0) {
    dcs::periodic::PeriodicSettings tight = options.settings;
    tight.accuracy = std::min(1e-8, options.settings.accuracy * 1e-3);
    tight.real_cutoff = options.reference_cutoff;
    parameters = dcs::periodic::choose_ewald_parameters(input.cell, tight);
  }
  const auto expected = dcs::periodic::ewald_reference_at(
      input.positions, input.charges, input.cell, sample, parameters, options.settings.min_distance,
      options.settings.threads);
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < sample.size(); ++i) {
    diff += (sampled[i] - expected[i]) * (sampled[i] - expected[i]);
    norm += expected[i] * expected[i];
  }
  return report + fmt::format(
                      ", \"reference_points\": {}, \"reference_cutoff\": {:g}, "
                      "\"reference_s\": {:.3f}, \"map_error\": {:.3e}",
                      sample.size(), parameters.real_cutoff, seconds_since(start),
                      std::sqrt(diff / norm));
}

/// --reference-at POINTS OUT: the float64 Ewald sum at reference_parameters() (the oracle a dcs
/// --periodic run measures its error against) at the "x y z" lines of POINTS, written to OUT as
/// float64 e/Å, little-endian, in order (real-space distances clamped at the settings'
/// min_distance, dcs's default, as dcs maps are).
int reference_at(const Input& input, const Options& options) {
  std::ifstream file(options.reference_at);
  if (!file) throw dcs::InputError(options.reference_at, 0, "cannot open the file");
  std::vector<dcs::Vec3> points;
  for (dcs::Vec3 p{}; file >> p[0] >> p[1] >> p[2];) points.push_back(p);
  const auto parameters = dcs::periodic::reference_parameters(input.cell, options.settings);
  const std::vector<double> phi = dcs::periodic::ewald_reference_at(
      input.positions, input.charges, input.cell, points, parameters, options.settings.min_distance,
      options.settings.threads);
  std::ofstream out(options.reference_out, std::ios::binary);
  out.write(reinterpret_cast<const char*>(phi.data()),
            std::streamsize(phi.size() * sizeof(double)));
  if (!out) throw dcs::IoError("cannot write " + options.reference_out);
  std::printf("%s\n", fmt::format("{{\"points\": {}, \"parameters\": \"reference, {}\"}}",
                                  points.size(), parameters.describe())
                          .c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  static_assert(std::endian::native == std::endian::little, "potentials are little-endian");
  try {
    if (argc < 2) throw dcs::UsageError("usage: periodic_dump INPUT [options]");
    const Options options = parse_options(argc, argv);
    const Input input = read_input(argv[1]);
    if (!options.reference_at.empty()) return reference_at(input, options);
    const auto parameters = dcs::periodic::choose_ewald_parameters(input.cell, options.settings);
    const auto start = std::chrono::steady_clock::now();
    std::vector<double> phi;
    double prepare_s = 0.0, atoms_s = 0.0;
    std::string map;
    if (options.reference) {
      phi = dcs::periodic::ewald_reference_at_atoms(input.positions, input.charges, input.cell,
                                                    parameters, options.settings.threads);
      atoms_s = seconds_since(start);
    } else {
      const dcs::periodic::PeriodicPotential potential(input.positions, input.charges, input.cell,
                                                       options.settings);
      prepare_s = seconds_since(start);
      phi = potential.potential_at_atoms();
      atoms_s = seconds_since(start) - prepare_s;
      if (options.map_spacing > 0.0) map = map_report(input, options, potential);
    }
    double energy = 0.0;
    for (std::size_t i = 0; i < phi.size(); ++i) energy += input.charges[i] * phi[i];
    energy *= 0.5;
    if (!options.potentials_path.empty()) {
      std::ofstream out(options.potentials_path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(phi.data()),
                std::streamsize(phi.size() * sizeof(double)));
      if (!out) throw dcs::IoError("cannot write " + options.potentials_path);
    }
    std::printf("%s\n", fmt::format("{{\"atoms\": {}, \"energy\": {:.17g}, \"parameters\": "
                                    "\"{}{}\", \"prepare_s\": {:.3f}, \"atoms_s\": {:.3f}{}}}",
                                    phi.size(), energy, options.reference ? "reference, " : "",
                                    parameters.describe(), prepare_s, atoms_s, map)
                            .c_str());
    return 0;
  } catch (const dcs::Error& error) {
    std::fprintf(stderr, "periodic_dump: %s\n", error.what());
    return int(error.exit_code());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "periodic_dump: %s\n", error.what());
    return 2;
  }
}
