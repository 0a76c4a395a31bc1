// Benchmark of the CPU backends: atom-evaluations/s of every fast kernel this CPU supports
// (all threads and one thread) and of the float64 reference (one thread, smaller grid).
//
// The atoms are a protein-like random system with a fixed seed. Direct summation has no
// cutoff and the kernels are branch-free, so the cost depends only on the numbers of atoms and
// grid points, not on where the atoms are: a random system of a real molecule's size measures
// what that molecule would.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dcs/backend.hpp"
#include "dcs/bench.hpp"
#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/parallel.hpp"
#include "fast_kernels.hpp"

namespace dcs {
namespace {

constexpr double kPymolEvalsPerCore = 2.5e8;  // PyMOL map_new coulomb, one core of this machine
constexpr double kTargetSpeedup = 20.0;

/// Atoms in residue-sized clusters inside a sphere of protein density (~1 atom per 11 Å^3),
/// charges uniform in [-0.8, 0.8].
System protein_like_system(std::size_t atoms, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const double radius = std::cbrt(3.0 * 11.0 * static_cast<double>(atoms) / (4.0 * codata::kPi));
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_real_distribution<double> charge(-0.8, 0.8);
  System system;
  system.source_path = fmt::format("random protein-like system ({} atoms, seed {})", atoms, seed);
  system.atoms.reserve(atoms);
  Vec3 centre{};
  while (system.atoms.size() < atoms) {
    if (system.atoms.size() % 10 == 0) {
      do centre = {radius * unit(rng), radius * unit(rng), radius * unit(rng)};
      while (centre[0] * centre[0] + centre[1] * centre[1] + centre[2] * centre[2] > radius * radius);
    }
    Atom atom;
    atom.position = {centre[0] + 2.0 * unit(rng), centre[1] + 2.0 * unit(rng), centre[2] + 2.0 * unit(rng)};
    atom.charge = charge(rng);
    atom.serial = static_cast<long long>(system.atoms.size() + 1);
    system.atoms.push_back(atom);
  }
  return system;
}

struct Measurement {
  double median_seconds = 0.0;
  double evaluations = 0.0;
  std::string device;
  std::string kernel;
};

/// Median kernel time (the backend's own `kernels` timing, without the statistics pass) of
/// `repetitions` computations of the whole grid after one warm-up.
Measurement measure(const BackendOptions& options, bool reference, const System& system,
                    std::int64_t edge, int repetitions) {
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{edge, edge, edge};
  const GridSpec grid = make_grid(system, request);
  check_fits_in_memory(map_bytes(grid), "the benchmark map");
  std::vector<float> map(grid.points());
  auto backend = reference ? make_cpu_reference_backend(options) : make_cpu_fast_backend(options);
  backend->prepare(system, grid, Physics{});
  const Slab whole{0, grid.nz()};
  backend->compute(whole, map.data());  // warm-up
  std::vector<double> seconds;
  for (int rep = 0; rep < repetitions; ++rep) {
    const double before = backend->timings().kernels;
    backend->compute(whole, map.data());
    seconds.push_back(backend->timings().kernels - before);
  }
  std::sort(seconds.begin(), seconds.end());
  Measurement m;
  m.median_seconds = seconds.size() % 2 == 1
                         ? seconds[seconds.size() / 2]
                         : 0.5 * (seconds[seconds.size() / 2 - 1] + seconds[seconds.size() / 2]);
  m.evaluations = static_cast<double>(grid.points()) * static_cast<double>(system.size());
  m.device = backend->device_name();
  m.kernel = backend->kernel_name();
  return m;
}

bool selected(const BenchOptions& options, const std::string& kernel) {
  return options.kernels.empty() ||
         std::find(options.kernels.begin(), options.kernels.end(), kernel) != options.kernels.end();
}

}  // namespace

std::vector<BenchTable> benchmark_cpu_backends(const BenchOptions& options) {
  if (options.repetitions < 1) throw UsageError("benchmark repetitions must be at least 1");
  const std::vector<std::int64_t> edges =
      options.grid_sizes.empty() ? std::vector<std::int64_t>{96} : options.grid_sizes;
  // A lysozyme-sized and an acetylcholine-binding-protein-sized system (2LZT ~2000 atoms,
  // apbs-data misc/achbp.pqr 16090 atoms).
  const std::vector<std::size_t> atom_counts =
      options.atom_counts.empty() ? std::vector<std::size_t>{2000, 16090} : options.atom_counts;
  for (std::int64_t edge : edges)
    if (edge < 2) throw UsageError(fmt::format("benchmark grid size must be >= 2, got {}", edge));
  for (std::size_t atoms : atom_counts)
    if (atoms == 0) throw UsageError("benchmark atom counts must be positive");

  const unsigned all_threads = resolve_threads(options.threads);
  BenchTable table;
  table.name = "cpu_backends";
  table.title = fmt::format(
      "CPU backends: atom-evaluations/s, median of {} after a warm-up. Comparison: PyMOL "
      "map_new coulomb ~{:.1e} evals/s per core; target {:.0f}x = {:.1e} per core",
      options.repetitions, kPymolEvalsPerCore, kTargetSpeedup, kTargetSpeedup * kPymolEvalsPerCore);
  table.columns = {"backend", "kernel", "device", "threads", "grid", "atoms", "median s",
                   "evals/s", "evals/s/core", "x PyMOL/core"};

  auto add_row = [&](const std::string& backend, const Measurement& m, unsigned threads,
                     std::int64_t edge, std::size_t atoms) {
    const double rate = m.evaluations / m.median_seconds;
    const double per_core = rate / static_cast<double>(threads);
    table.rows.push_back({backend, m.kernel, m.device, std::to_string(threads),
                          fmt::format("{}^3", edge), std::to_string(atoms),
                          fmt::format("{:.4f}", m.median_seconds), fmt::format("{:.3e}", rate),
                          fmt::format("{:.3e}", per_core),
                          fmt::format("{:.1f}", per_core / kPymolEvalsPerCore)});
  };

  for (std::size_t atoms : atom_counts) {
    const System system = protein_like_system(atoms, 20261121u);
    for (std::int64_t edge : edges) {
      for (const cpu_fast::FastKernel& kernel : cpu_fast::fast_kernels()) {
        const std::string name(kernel.name);
        if (!selected(options, name)) continue;
        if (!kernel.automatic && !cpu_fast::isa_supported(kernel.isa)) continue;
        // The portable kernel is ~10x slower: a quarter of the edge keeps its run short.
        const bool slow = !kernel.automatic && kernel.isa == cpu_fast::Isa::Portable;
        const std::int64_t grid_edge = slow ? std::max<std::int64_t>(2, edge / 4) : edge;
        std::vector<unsigned> thread_counts{1};
        if (kernel.automatic && all_threads > 1) thread_counts.insert(thread_counts.begin(), all_threads);
        for (unsigned threads : thread_counts) {
          BackendOptions backend_options;
          backend_options.kernel = name;
          backend_options.threads = threads;
          add_row("cpu-fast", measure(backend_options, false, system, grid_edge, options.repetitions),
                  threads, grid_edge, atoms);
        }
      }
      if (selected(options, "reference")) {
        // The float64 oracle is ~50x slower than the fast path: an edge a quarter as long.
        const std::int64_t grid_edge = std::max<std::int64_t>(2, edge / 4);
        BackendOptions backend_options;
        backend_options.threads = 1;
        add_row("cpu-reference", measure(backend_options, true, system, grid_edge, options.repetitions),
                1, grid_edge, atoms);
      }
    }
  }
  table.notes.push_back(
      "Atoms: protein-like random systems (fixed seed) of real molecules' sizes; direct "
      "summation is branch-free and has no cutoff, so only the atom and point counts matter.");
  table.notes.push_back(
      "Time: the backend's kernel time for the whole grid (statistics pass excluded); "
      "evals = grid points x atoms. 'simd' picks the best ISA; per-ISA kernels run on 1 thread.");
  return {table};
}

}  // namespace dcs
