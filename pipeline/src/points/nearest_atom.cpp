// Distances to the nearest atom by a cell list (nearest_atom.hpp).
#include "nearest_atom.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace dcs::pipeline {
namespace {

/// The atoms sorted by cell of a uniform grid over their bounding box.
struct CellList {
  Vec3 low{}, high{};
  double size = 1.0;                 ///< a cell's edge, Å
  std::array<std::int64_t, 3> n{};   ///< cells per axis
  std::vector<std::uint32_t> start;  ///< cell c's atoms are order[start[c] .. start[c + 1])
  std::vector<Vec3> atoms;           ///< atom positions in cell order

  std::int64_t cell_of(double x, int a) const {
    const auto c = static_cast<std::int64_t>(std::floor((x - low[a]) / size));
    return std::clamp<std::int64_t>(c, 0, n[a] - 1);
  }
  std::size_t index(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return static_cast<std::size_t>((k * n[1] + j) * n[0] + i);
  }
};

CellList make_cells(const System& system) {
  CellList cells;
  cells.low = cells.high = system.atoms.front().position;
  for (const Atom& atom : system.atoms)
    for (int a = 0; a < 3; ++a) {
      cells.low[a] = std::min(cells.low[a], atom.position[a]);
      cells.high[a] = std::max(cells.high[a], atom.position[a]);
    }
  // About two atoms a cell for a compact molecule, never below 1 Å, at most 2^21 cells.
  double volume = 1.0;
  for (int a = 0; a < 3; ++a) volume *= std::max(1.0, cells.high[a] - cells.low[a]);
  cells.size = std::max(1.0, std::cbrt(2.0 * volume / static_cast<double>(system.size())));
  for (;;) {
    std::int64_t total = 1;
    for (int a = 0; a < 3; ++a) {
      cells.n[a] = 1 + static_cast<std::int64_t>((cells.high[a] - cells.low[a]) / cells.size);
      total *= cells.n[a];
    }
    if (total <= (std::int64_t{1} << 21)) break;
    cells.size *= 2.0;
  }
  const std::size_t count = static_cast<std::size_t>(cells.n[0] * cells.n[1] * cells.n[2]);
  std::vector<std::size_t> cell(system.size());
  cells.start.assign(count + 1, 0);
  for (std::size_t i = 0; i < system.size(); ++i) {
    const Vec3& p = system.atoms[i].position;
    cell[i] = cells.index(cells.cell_of(p[0], 0), cells.cell_of(p[1], 1), cells.cell_of(p[2], 2));
    ++cells.start[cell[i] + 1];
  }
  for (std::size_t c = 0; c < count; ++c) cells.start[c + 1] += cells.start[c];
  std::vector<std::uint32_t> next(cells.start.begin(), cells.start.end() - 1);
  cells.atoms.resize(system.size());
  for (std::size_t i = 0; i < system.size(); ++i)
    cells.atoms[next[cell[i]]++] = system.atoms[i].position;
  return cells;
}

/// The squared distance from `p` to its nearest atom: shells of cells (Chebyshev rings around
/// the cell nearest p) until the next shell cannot hold a nearer atom. A shell s is at least
/// (s - 1) cells from the point's projection onto the box, and so from the point.
double nearest_squared(const CellList& cells, const Vec3& p) {
  const std::array<std::int64_t, 3> c{cells.cell_of(p[0], 0), cells.cell_of(p[1], 1),
                                      cells.cell_of(p[2], 2)};
  const std::int64_t shells = std::max({cells.n[0], cells.n[1], cells.n[2]});
  double best = std::numeric_limits<double>::infinity();
  for (std::int64_t s = 0; s <= shells; ++s) {
    const double bound = static_cast<double>(std::max<std::int64_t>(0, s - 1)) * cells.size;
    if (bound * bound > best) break;
    for (std::int64_t k = std::max<std::int64_t>(0, c[2] - s);
         k <= std::min(cells.n[2] - 1, c[2] + s); ++k)
      for (std::int64_t j = std::max<std::int64_t>(0, c[1] - s);
           j <= std::min(cells.n[1] - 1, c[1] + s); ++j) {
        const bool face = std::abs(k - c[2]) == s || std::abs(j - c[1]) == s;
        // Inside the shell's faces in z and y only the two x ends are on the shell.
        const std::int64_t step = face ? 1 : std::max<std::int64_t>(1, 2 * s);
        for (std::int64_t i = c[0] - s; i <= c[0] + s; i += step) {
          if (i < 0 || i >= cells.n[0]) continue;
          const std::size_t cell = cells.index(i, j, k);
          for (std::uint32_t a = cells.start[cell]; a < cells.start[cell + 1]; ++a) {
            double d2 = 0.0;
            for (int axis = 0; axis < 3; ++axis) {
              const double d = p[axis] - cells.atoms[a][axis];
              d2 += d * d;
            }
            best = std::min(best, d2);
          }
        }
      }
  }
  return best;
}

}  // namespace

NearestAtomDistances nearest_atom_distances(const std::vector<Vec3>& points, const System& system) {
  const CellList cells = make_cells(system);
  std::vector<double> distances(points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
    distances[i] = std::sqrt(nearest_squared(cells, points[i]));
  NearestAtomDistances out;
  out.max = *std::max_element(distances.begin(), distances.end());
  const auto middle = distances.begin() + static_cast<std::ptrdiff_t>(distances.size() / 2);
  std::nth_element(distances.begin(), middle, distances.end());
  out.median = *middle;
  return out;
}

}  // namespace dcs::pipeline
