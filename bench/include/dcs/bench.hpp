// Benchmark results as plain tables, so that every benchmark (CPU, CUDA potentials, CUDA
// reductions) reports through one Markdown writer, to_markdown().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dcs {

struct BenchTable {
  // Each member initialised, so that a designated initialiser may leave any out.
  std::string name{};   ///< file stem, e.g. "potential_kernels"
  std::string title{};  ///< one line, includes the ceiling used
  std::vector<std::string> columns{};
  std::vector<std::vector<std::string>> rows{};  ///< each row has columns.size() cells
  std::vector<std::string> notes{};              ///< lines printed under the table
};

/// Options shared by the benchmarks.
struct BenchOptions {
  std::vector<std::int64_t> grid_sizes;  ///< cubic grid edge lengths (points); empty: defaults
  std::vector<std::size_t> atom_counts;  ///< empty: defaults
  std::vector<std::string> kernels;      ///< variant names; empty: all
  /// Physics models: "coulomb", "screened" (0.15 M in water), "distance" (eps = 4r). GPU
  /// kernel table: empty is coulomb. CPU benchmark: empty is no models table; else each
  /// model's fast kernels on the grid and at points against its own port limit.
  std::vector<std::string> models;
  /// GPU points table (dcs_potential_bench --points): point counts; when given, the potential
  /// benchmark times the points kernel (compute_points) instead of the grid kernels.
  std::vector<std::size_t> point_counts;
  int repetitions = 5;  ///< timed repetitions after one warm-up; median taken
  int device = 0;
  unsigned threads = 0;
  bool peers = true;  ///< CPU benchmark: also measure PyMOL in the same run
};

/// Markdown of a table: a "### title" heading, the table, then each note as a paragraph.
std::string to_markdown(const BenchTable& table);

}  // namespace dcs

namespace dcs {
/// Benchmark of the CPU backends (fast and reference) on protein-like random atoms:
/// atom-evaluations/s per backend and per core, % of the SIMD port limit measured on this CPU
/// (table "cpu_port_limit") and the ratio to PyMOL measured in the same run.
std::vector<BenchTable> benchmark_cpu_backends(const BenchOptions& options);
}  // namespace dcs
