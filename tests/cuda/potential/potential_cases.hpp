// Systems and grids for the CUDA potential tests and the sanitizer case, and the comparison with
// the float64 reference. Plain C++ (no CUDA headers): the tests compile in every build.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/types.hpp"

namespace dcs::test {

/// One test problem: atoms, grid, physics and the slabs to compute (each compared on its own).
struct PotentialCase {
  std::string name;
  System system;
  GridSpec grid;
  Physics physics;
  std::vector<Slab> slabs;  ///< empty: the whole grid as one slab
};

inline GridSpec make_spec(std::int64_t nx, std::int64_t ny, std::int64_t nz, Vec3 origin, Vec3 spacing) {
  GridSpec grid;
  grid.counts = {nx, ny, nz};
  grid.origin = origin;
  grid.spacing = spacing;
  return grid;
}

inline Atom make_atom(double x, double y, double z, double q) {
  Atom atom;
  atom.position = {x, y, z};
  atom.charge = q;
  return atom;
}

/// n atoms uniform in a box of side `side` centred on `centre`, charges uniform in [-1, 1]
/// (or [0.1, 1] when `positive`), fixed seed.
inline System random_atoms(std::size_t n, Vec3 centre, double side, std::uint64_t seed,
                           bool positive = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> offset(-0.5 * side, 0.5 * side);
  std::uniform_real_distribution<double> charge(positive ? 0.1 : -1.0, 1.0);
  System system;
  system.source_path = "random";
  for (std::size_t i = 0; i < n; ++i) {
    const double x = centre[0] + offset(rng), y = centre[1] + offset(rng), z = centre[2] + offset(rng);
    system.atoms.push_back(make_atom(x, y, z, charge(rng)));
  }
  return system;
}

/// Protein-like: atoms in a few Gaussian blobs of residue-sized clusters, partial charges of
/// typical size (|q| <= 0.8 e), net charge near zero.
inline System protein_like(std::size_t n, Vec3 centre, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> spread(0.0, 6.0), local(0.0, 1.2);
  std::uniform_real_distribution<double> charge(-0.8, 0.8);
  System system;
  system.source_path = "protein-like";
  while (system.atoms.size() < n) {
    const Vec3 residue{centre[0] + spread(rng), centre[1] + spread(rng), centre[2] + spread(rng)};
    for (int k = 0; k < 12 && system.atoms.size() < n; ++k) {
      // One draw per statement: argument evaluation order is unspecified in C++.
      const double x = residue[0] + local(rng);
      const double y = residue[1] + local(rng);
      const double z = residue[2] + local(rng);
      const double q = charge(rng);
      system.atoms.push_back(make_atom(x, y, z, q));
    }
  }
  return system;
}

/// Minimal PQR reader for test data: ATOM/HETATM lines, the last five whitespace-separated
/// fields are x y z charge radius. (dcs::io has the real reader; the kernels' tests should not
/// depend on it.)
inline System read_pqr_for_test(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  System system;
  system.source_path = path;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("ATOM", 0) != 0 && line.rfind("HETATM", 0) != 0) continue;
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string word; fields >> word;) words.push_back(word);
    if (words.size() < 6) throw std::runtime_error(path + ": short record: " + line);
    const std::size_t n = words.size();
    system.atoms.push_back(make_atom(std::stod(words[n - 5]), std::stod(words[n - 4]),
                                     std::stod(words[n - 3]), std::stod(words[n - 2])));
  }
  if (system.atoms.empty()) throw std::runtime_error(path + ": no atoms");
  return system;
}

/// Where the apbs-data molecules are: $DCS_APBS_DATA_DIR, else the build-time path.
inline std::string apbs_data_dir() {
  if (const char* env = std::getenv("DCS_APBS_DATA_DIR"); env != nullptr && *env != '\0') return env;
#if defined(DCS_APBS_DATA_DIR)
  return DCS_APBS_DATA_DIR;
#else
  return "/usr/share/apbs";
#endif
}

/// Points of `slab` in storage order (x fastest).
inline std::vector<Vec3> slab_points(const GridSpec& grid, const Slab& slab) {
  std::vector<Vec3> points;
  points.reserve(grid.plane_points() * static_cast<std::size_t>(slab.z_count));
  for (std::int64_t k = slab.z_begin; k < slab.z_begin + slab.z_count; ++k)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t i = 0; i < grid.nx(); ++i) points.push_back(grid.point(i, j, k));
  return points;
}

/// How a computed slab compares with the float64 reference.
struct Comparison {
  std::size_t points = 0;
  std::size_t nonfinite = 0;  ///< points left unwritten (poisoned with NaN) or broken
  double max_abs_error = 0.0;
  double max_abs_reference = 0.0;
  std::size_t worst_index = 0;
  double relative() const { return max_abs_reference > 0 ? max_abs_error / max_abs_reference : max_abs_error; }
};

inline Comparison compare(const std::vector<float>& computed, const std::vector<double>& reference) {
  Comparison result;
  result.points = computed.size();
  for (std::size_t p = 0; p < computed.size(); ++p) {
    result.max_abs_reference = std::max(result.max_abs_reference, std::fabs(reference[p]));
    if (!std::isfinite(computed[p])) {
      ++result.nonfinite;
      continue;
    }
    const double error = std::fabs(static_cast<double>(computed[p]) - reference[p]);
    if (error > result.max_abs_error) {
      result.max_abs_error = error;
      result.worst_index = p;
    }
  }
  return result;
}

/// The tolerance every float32 kernel is held to: |V - V_ref| <= 1e-5 * max|V_ref| over the
/// compared points (the backend's tolerance()).
inline constexpr double kRelativeTolerance = 1e-5;

}  // namespace dcs::test
