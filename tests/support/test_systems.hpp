// Helpers shared by every backend's tests: test systems, grids, whole-grid computation through
// the PotentialBackend interface, the float64 oracle at the same points and the comparison with
// it, and a minimal PQR fixture reader (the product's reader lives in dcs::io; the backends'
// tests must not depend on it). Plain C++: the GPU tests compile in every build.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/physics.hpp"
#include "dcs/stats.hpp"
#include "dcs/types.hpp"

namespace dcs::test {

inline Atom make_atom(double x, double y, double z, double charge) {
  Atom atom;
  atom.position = {x, y, z};
  atom.charge = charge;
  return atom;
}

inline System make_system(std::vector<Atom> atoms) {
  System system;
  system.atoms = std::move(atoms);
  system.source_path = "test";
  return system;
}

/// +1 e at the origin and -1 e at (10, 4, 2) Å: an atom box of 10 x 4 x 2 Å.
inline System two_atoms() {
  return make_system({make_atom(0, 0, 0, 1.0), make_atom(10, 4, 2, -1.0)});
}

/// Protein-like random system: residue-sized clusters of 10 atoms (within 2 Å of a centre)
/// inside a sphere of protein density, charges uniform in [-0.8, 0.8], fixed seed.
inline System protein_like_system(std::size_t atoms, std::uint32_t seed, Vec3 offset = {}) {
  std::mt19937 rng(seed);
  const double radius =
      std::cbrt(3.0 * 11.0 * static_cast<double>(atoms) / (4.0 * 3.14159265358979));
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_real_distribution<double> charge(-0.8, 0.8);
  std::vector<Atom> list;
  Vec3 centre{};
  while (list.size() < atoms) {
    if (list.size() % 10 == 0) {
      do centre = {radius * unit(rng), radius * unit(rng), radius * unit(rng)};
      while (centre[0] * centre[0] + centre[1] * centre[1] + centre[2] * centre[2] >
             radius * radius);
    }
    // One draw per statement: the order of function arguments is unspecified in C++, and the
    // molecule must be the same whatever the compiler.
    const double x = offset[0] + centre[0] + 2.0 * unit(rng);
    const double y = offset[1] + centre[1] + 2.0 * unit(rng);
    const double z = offset[2] + centre[2] + 2.0 * unit(rng);
    const double q = charge(rng);
    list.push_back(make_atom(x, y, z, q));
  }
  return make_system(std::move(list));
}

/// n atoms uniform in a box of side `side` centred on `centre`, charges uniform in [-1, 1]
/// (or [0.1, 1] when `positive`), fixed seed.
inline System random_atoms(std::size_t n, Vec3 centre, double side, std::uint64_t seed,
                           bool positive = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> offset(-0.5 * side, 0.5 * side);
  std::uniform_real_distribution<double> charge(positive ? 0.1 : -1.0, 1.0);
  std::vector<Atom> list;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = centre[0] + offset(rng);
    const double y = centre[1] + offset(rng);
    const double z = centre[2] + offset(rng);
    const double q = charge(rng);
    list.push_back(make_atom(x, y, z, q));
  }
  return make_system(std::move(list));
}

/// `system` with net charge `net` (e), the first atom's charge adjusted, in `cell` (atoms
/// outside it are wrapped by the periodic methods), named `path`.
inline System in_cell(System system, double net, const UnitCell& cell, std::string path) {
  system.atoms[0].charge += net - system.total_charge();
  system.cell = cell;
  system.source_path = std::move(path);
  return system;
}

/// Points at every atom of a system, each skipping its own atom (the own term left out).
struct AtomPoints {
  std::vector<Vec3> points;
  std::vector<std::uint32_t> skip;
};

inline AtomPoints points_at_atoms(const System& system) {
  AtomPoints at;
  for (std::uint32_t i = 0; i < system.size(); ++i) {
    at.points.push_back(system.atoms[i].position);
    at.skip.push_back(i);
  }
  return at;
}

/// Options of a CPU backend on `threads` threads.
inline BackendOptions cpu_options(unsigned threads) {
  BackendOptions options;
  options.threads = threads;
  return options;
}

/// A grid with explicit counts, one spacing and an origin.
inline GridSpec make_spec(std::array<std::int64_t, 3> counts, double spacing, Vec3 origin) {
  GridSpec grid;
  grid.counts = counts;
  grid.spacing = {spacing, spacing, spacing};
  grid.origin = origin;
  return grid;
}

/// A grid with explicit counts, origin and per-axis spacing.
inline GridSpec make_spec(std::int64_t nx, std::int64_t ny, std::int64_t nz, Vec3 origin,
                          Vec3 spacing) {
  GridSpec grid;
  grid.counts = {nx, ny, nz};
  grid.origin = origin;
  grid.spacing = spacing;
  return grid;
}

/// Computes the whole grid through the interface, in slabs of `slab_planes` z-planes
/// (0: one slab). The map starts as NaN, so a point the backend never writes shows. Returns
/// the map; `stats` receives the slabs' statistics combined.
inline std::vector<float> compute_grid(PotentialBackend& backend, const System& system,
                                       const GridSpec& grid, const Physics& physics,
                                       std::int64_t slab_planes = 0, StatsAccum* stats = nullptr) {
  std::vector<float> map(grid.points(), std::numeric_limits<float>::quiet_NaN());
  backend.prepare(system, grid, physics);
  if (slab_planes <= 0) slab_planes = grid.nz();
  StatsAccum total;
  for (std::int64_t z = 0; z < grid.nz(); z += slab_planes) {
    const Slab slab{z, std::min(slab_planes, grid.nz() - z)};
    total = StatsAccum::combine(
        total,
        backend.compute(slab, map.data() + static_cast<std::size_t>(z) * grid.plane_points()));
  }
  if (stats != nullptr) *stats = total;
  return map;
}

/// `backend` prepared for `grid` and its map computed by compute_slab() in two slabs, the upper
/// one [split, nz) first, then [0, split): against one slab, whether the bits depend on the split.
inline std::vector<float> compute_two_slabs(PotentialBackend& backend, const System& system,
                                            const GridSpec& grid, const Physics& physics,
                                            std::int64_t split) {
  std::vector<float> map(grid.points());
  std::vector<StatsAccum> stats(static_cast<std::size_t>(grid.nz()));
  backend.prepare(system, grid, physics);
  backend.compute_slab({split, grid.nz() - split},
                       map.data() + static_cast<std::size_t>(split) * grid.plane_points(),
                       stats.data());
  backend.compute_slab({0, split}, map.data(), stats.data());
  return map;
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

/// The float64 oracle at every point of `slab` (default: the whole grid), storage order.
inline std::vector<double> reference_grid(const System& system, const GridSpec& grid,
                                          const Physics& physics, Slab slab = {0, -1}) {
  if (slab.z_count < 0) slab = {0, grid.nz()};
  const std::vector<Vec3> points = slab_points(grid, slab);
  std::vector<double> values(points.size());
  reference_potential(system, physics, points.data(), points.size(), values.data());
  return values;
}

/// How computed values compare with the float64 reference.
struct Comparison {
  std::size_t points = 0;
  std::size_t nonfinite = 0;   ///< points left unwritten (NaN poison) or broken
  double max_abs_error = 0.0;  ///< over the finite points
  double max_abs_reference = 0.0;
  std::size_t worst_index = 0;
  /// max|error| / max|V_ref|; infinite when any point is not finite.
  double relative() const {
    if (nonfinite > 0) return std::numeric_limits<double>::infinity();
    return max_abs_reference > 0 ? max_abs_error / max_abs_reference : max_abs_error;
  }
};

inline Comparison compare(const std::vector<float>& computed,
                          const std::vector<double>& reference) {
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

/// The tolerance every float32 path is held to: |V - V_ref| <= 1e-5 * max|V_ref| over the
/// compared points (PotentialBackend::tolerance()).
inline constexpr double kRelativeTolerance = 1e-5;

/// Where the apbs-data molecules are: $DCS_APBS_DATA_DIR, else the build-time path.
inline std::string apbs_data_dir() {
  if (const char* env = std::getenv("DCS_APBS_DATA_DIR"); env != nullptr && *env != '\0')
    return env;
#if defined(DCS_APBS_DATA_DIR)
  return DCS_APBS_DATA_DIR;
#else
  return "/usr/share/apbs";
#endif
}

/// Minimal PQR reader for test fixtures only: ATOM and HETATM records, x y z charge radius
/// taken as the last five whitespace-separated fields. Throws InputError on anything it cannot
/// read, so a fixture never silently loses atoms.
inline System read_pqr_fixture(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open");
  std::vector<Atom> atoms;
  std::string line;
  std::uint64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("ATOM", 0) != 0 && line.rfind("HETATM", 0) != 0) continue;
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string word; fields >> word;) words.push_back(word);
    if (words.size() < 8) throw InputError(path, number, "too few fields for the test reader");
    double v[5];
    for (int f = 0; f < 5; ++f) {
      std::size_t used = 0;
      const std::string& word = words[words.size() - 5 + static_cast<std::size_t>(f)];
      try {
        v[f] = std::stod(word, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != word.size()) throw InputError(path, number, "not a number: " + word);
    }
    Atom atom = make_atom(v[0], v[1], v[2], v[3]);
    atom.radius = v[4];
    atoms.push_back(atom);
  }
  if (atoms.empty()) throw InputError(path, 0, "no atoms");
  System system = make_system(std::move(atoms));
  system.source_path = path;
  return system;
}

}  // namespace dcs::test
