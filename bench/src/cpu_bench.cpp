// Benchmark of the CPU backends: atom-evaluations/s of every fast kernel this CPU supports
// (all threads and one thread) and of the float64 reference (one thread, smaller grid), against
// two yardsticks measured in the same run on the same machine:
//  - the SIMD port limit: the pairs/s one core can do by the kernel's arithmetic alone
//    (port_limit.hpp: instruction issue rates and the per-pair instruction mix, on registers);
//  - PyMOL's `map_new coulomb` (pymol_peer.hpp) on the same atoms.
// Per-core rates are evaluations per second of process CPU time (also PyMOL's), so a shared
// machine's other work does not count against either side; wall-clock rates are shown too.
//
// The atoms are a protein-like random system with a fixed seed. Direct summation has no
// cutoff and the kernels are branch-free, so the cost depends only on the numbers of atoms and
// grid points, not on where the atoms are: a random system of a real molecule's size measures
// what that molecule would.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dcs/backend.hpp"
#include "dcs/bench.hpp"
#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/parallel.hpp"
#include "dcs/variants.hpp"
#include "fast_kernels.hpp"
#include "port_limit.hpp"
#include "pymol_peer.hpp"

namespace dcs {
namespace {

constexpr double kTargetSpeedup = 20.0;  // the project's goal against PyMOL, per core

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
      while (centre[0] * centre[0] + centre[1] * centre[1] + centre[2] * centre[2] >
             radius * radius);
    }
    Atom atom;
    atom.position = {centre[0] + 2.0 * unit(rng), centre[1] + 2.0 * unit(rng),
                     centre[2] + 2.0 * unit(rng)};
    atom.charge = charge(rng);
    atom.serial = static_cast<long long>(system.atoms.size() + 1);
    system.atoms.push_back(atom);
  }
  return system;
}

double process_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

struct Measurement {
  double median_seconds = 0.0;      ///< wall: the backend's own kernel timing
  double median_cpu_seconds = 0.0;  ///< process CPU time of a whole compute(), all threads
  double best_cpu_seconds = 0.0;    ///< the fastest repetition's process CPU time
  double evaluations = 0.0;
  /// Median over the repetitions of (evals / that repetition's CPU time) / (the per-pair mix
  /// measured on the same thread right before and right after it, averaged); 0 if not measured.
  double interleaved_share = 0.0;
  std::string device;
  std::string kernel;
};

/// Measures the per-pair mix of one instruction set now, in pairs/s (port_limit.hpp).
using MixProbe = double (*)(double seconds);

/// Seconds of each interleaved mix measurement (best of 5 runs of this): short beside a
/// repetition (0.3 s and more at the default sizes), long enough for a stable rate.
constexpr double kInterleavedMixSeconds = 0.02;

/// Median kernel time (the backend's own `kernels` timing, without the statistics pass) and
/// median process CPU time of `repetitions` computations of the whole grid after one warm-up.
/// With `mix`, for a one-thread backend (whose pool runs the work on this thread), the mix is
/// measured before and after every repetition (Measurement::interleaved_share).
Measurement measure(const BackendOptions& options, bool reference, const System& system,
                    std::int64_t edge, int repetitions, MixProbe mix = nullptr) {
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{edge, edge, edge};
  const GridSpec grid = make_grid(system, request);
  check_fits_in_memory(map_bytes(grid), "the benchmark map");
  std::vector<float> map(grid.points());
  auto backend = reference ? make_cpu_reference_backend(options) : make_cpu_fast_backend(options);
  backend->prepare(system, grid, Physics{});
  const Slab whole{0, grid.nz()};
  backend->compute(whole, map.data());  // warm-up
  const double evaluations =
      static_cast<double>(grid.points()) * static_cast<double>(system.size());
  std::vector<double> seconds, cpu_seconds, shares;
  for (int rep = 0; rep < repetitions; ++rep) {
    const double mix_before = mix ? mix(kInterleavedMixSeconds) : 0.0;
    const double before = backend->timings().kernels;
    const double cpu_before = process_seconds();
    backend->compute(whole, map.data());
    cpu_seconds.push_back(process_seconds() - cpu_before);
    seconds.push_back(backend->timings().kernels - before);
    if (mix) {
      const double mix_now = 0.5 * (mix_before + mix(kInterleavedMixSeconds));
      if (mix_now > 0.0) shares.push_back(evaluations / cpu_seconds.back() / mix_now);
    }
  }
  Measurement m;
  m.median_seconds = median(seconds);
  m.median_cpu_seconds = median(cpu_seconds);
  m.best_cpu_seconds = *std::min_element(cpu_seconds.begin(), cpu_seconds.end());
  m.evaluations = evaluations;
  if (!shares.empty()) m.interleaved_share = median(shares);
  m.device = backend->device_name();
  m.kernel = backend->kernel_name();
  return m;
}

/// The port limit of one instruction set on this CPU, with how it was reached.
struct PortLimit {
  bench::PortRates rates;
  double issue_pairs = 0.0;  ///< from the issue rates of FMA, add and rsqrt (port_limit.hpp)
  /// The limit stated: the lower of the issue-rate bound and the measured per-pair mix (the
  /// kernel's instructions on registers, where port sharing the classes' rates miss shows).
  double pairs() const { return std::min(issue_pairs, rates.mix_pairs); }
};

/// Measures the port limit of `isa` (nothing where the CPU lacks it) and keeps, rate by rate,
/// the best of this and any earlier measurement in `limit`: a limit is a maximum, and another
/// process's brief load (or a clock dip) only ever lowers a reading.
void measure_port_limit(cpu_fast::Isa isa, std::optional<PortLimit>& limit) {
  if (!cpu_fast::isa_supported(isa)) return;
  constexpr double kSeconds = 0.05;
  bench::PortRates rates;
  if (isa == cpu_fast::Isa::Avx512) rates = bench::measure_port_rates_avx512(kSeconds);
  else if (isa == cpu_fast::Isa::Avx2) rates = bench::measure_port_rates_avx2(kSeconds);
  else return;
  if (!limit) {
    limit = PortLimit{rates, 0.0};
  } else {
    bench::PortRates& best = limit->rates;
    best.fma = std::max(best.fma, rates.fma);
    best.mul = std::max(best.mul, rates.mul);
    best.add = std::max(best.add, rates.add);
    best.max = std::max(best.max, rates.max);
    best.rsqrt = std::max(best.rsqrt, rates.rsqrt);
    best.mix_pairs = std::max(best.mix_pairs, rates.mix_pairs);
  }
  limit->issue_pairs = bench::issue_limit_pairs(limit->rates);
}

bool selected(const BenchOptions& options, const std::string& kernel) {
  return options.kernels.empty() ||
         std::find(options.kernels.begin(), options.kernels.end(), kernel) != options.kernels.end();
}

/// The grid edges, atom counts and threads to run, the defaults filled in and checked.
struct BenchSizes {
  std::vector<std::int64_t> edges;
  std::vector<std::size_t> atom_counts;
  unsigned all_threads = 1;
};

BenchSizes bench_sizes(const BenchOptions& options) {
  if (options.repetitions < 1) throw UsageError("benchmark repetitions must be at least 1");
  BenchSizes sizes;
  sizes.edges = options.grid_sizes.empty() ? std::vector<std::int64_t>{96} : options.grid_sizes;
  // A lysozyme-sized and an acetylcholine-binding-protein-sized system (2LZT ~2000 atoms,
  // apbs-data misc/achbp.pqr 16090 atoms).
  sizes.atom_counts =
      options.atom_counts.empty() ? std::vector<std::size_t>{2000, 16090} : options.atom_counts;
  for (std::int64_t edge : sizes.edges)
    if (edge < 2) throw UsageError(fmt::format("benchmark grid size must be >= 2, got {}", edge));
  for (std::size_t atoms : sizes.atom_counts)
    if (atoms == 0) throw UsageError("benchmark atom counts must be positive");
  sizes.all_threads = resolve_threads(options.threads);
  return sizes;
}

/// PyMOL on the first system: a grid of ~1e5 points around it (its default placement with a
/// 5 A buffer), which takes it about a second per repetition.
bench::PymolMeasurement measure_pymol_peer(std::size_t atoms) {
  const System peer_system = protein_like_system(atoms, 20261121u);
  double extent = 0.0;
  for (int axis = 0; axis < 3; ++axis) {
    double lo = INFINITY, hi = -INFINITY;
    for (const Atom& atom : peer_system.atoms) {
      lo = std::min(lo, atom.position[axis]);
      hi = std::max(hi, atom.position[axis]);
    }
    extent = std::max(extent, hi - lo + 10.0);
  }
  return bench::measure_pymol(peer_system, std::max(0.2, extent / 46.0), 5.0, 3);
}

/// The port limits of AVX-512 and AVX2 (each empty where the CPU lacks the set).
struct PortLimits {
  std::optional<PortLimit> avx512, avx2;
  void measure() {
    measure_port_limit(cpu_fast::Isa::Avx512, avx512);
    measure_port_limit(cpu_fast::Isa::Avx2, avx2);
  }
  const std::optional<PortLimit>* of(cpu_fast::Isa isa) const {
    return isa == cpu_fast::Isa::Avx512 ? &avx512 : isa == cpu_fast::Isa::Avx2 ? &avx2 : nullptr;
  }
};

BenchTable port_limit_table(const PortLimits& limits) {
  BenchTable ports;
  ports.name = "cpu_port_limit";
  ports.title = fmt::format(
      "SIMD port limit of one core of {}: instruction rates on registers, "
      "thread CPU time, best of 5 runs before and 5 after the kernels",
      cpu_model_name());
  ports.columns = {"instruction set",
                   "lanes",
                   "FMA /s",
                   "MUL /s",
                   "ADD /s",
                   "MAX /s",
                   "RSQRT /s",
                   "issue bound pairs/s",
                   "per-pair mix pairs/s",
                   "port limit pairs/s"};
  for (const auto& [name, limit] :
       {std::pair{"AVX-512", &limits.avx512}, std::pair{"AVX2+FMA", &limits.avx2}}) {
    if (!*limit) {
      ports.rows.push_back(
          {name, "-", "-", "-", "-", "-", "-", "-", "-", "not supported by this CPU"});
      continue;
    }
    const bench::PortRates& r = (*limit)->rates;
    ports.rows.push_back(
        {name, std::to_string(r.lanes), fmt::format("{:.3e}", r.fma), fmt::format("{:.3e}", r.mul),
         fmt::format("{:.3e}", r.add), fmt::format("{:.3e}", r.max), fmt::format("{:.3e}", r.rsqrt),
         fmt::format("{:.3e}", (*limit)->issue_pairs), fmt::format("{:.3e}", r.mix_pairs),
         fmt::format("**{:.3e}**", (*limit)->pairs())});
  }
  ports.notes.push_back(
      "Per vector of pairs the fast kernel issues 3 FMA + 2 MUL (multiply pipes), 2 ADD (add "
      "pipes) and 1 RSQRT estimate, besides the atom's broadcasts (loads, shared by 4 vectors); "
      "the clamp's MAX only for the rare atoms within r_min of a row. Issue bound = lanes / "
      "max(5 / multiply-pipe rate, 2 / add rate, 1 / rsqrt rate), each class's rate measured "
      "alone with 12 independent chains; the per-pair mix runs exactly the kernel's arithmetic "
      "(dcs::add_unclamped_coulomb_term with dcs::NewtonRsqrt) on registers in independent "
      "chains (4 on AVX2's 16 registers, 8 on AVX-512's 32), where sharing of ports between "
      "the classes shows. The port limit is the lower of the two.");
  return ports;
}

/// The backends table, row by row; the % port limit columns are filled in at the end, against
/// the limits measured before and after all the rows.
class BackendsTable {
 public:
  BackendsTable(const BenchOptions& options, const bench::PymolMeasurement& pymol)
      : pymol_rate_(pymol.available ? pymol.evals_per_second() : 0.0) {
    table_.name = "cpu_backends";
    table_.title = fmt::format(
        "CPU backends: atom-evaluations/s, median of {} after a warm-up; per core by process CPU "
        "time; % of the port limit above; PyMOL map_new coulomb measured in this run: {}",
        options.repetitions,
        pymol.available ? fmt::format("{:.3e} evals/s per core", pymol_rate_)
                        : std::string(options.peers ? "not available" : "not measured"));
    table_.columns = {"backend",
                      "kernel",
                      "device",
                      "threads",
                      "grid",
                      "atoms",
                      "median s",
                      "evals/s",
                      "evals/s/core (CPU)",
                      "% port limit",
                      "% port limit, best rep",
                      "% mix, interleaved",
                      "x PyMOL/core"};
  }

  void add_row(const std::string& backend, const Measurement& m, unsigned threads,
               std::int64_t edge, std::size_t atoms, const std::optional<PortLimit>* limit) {
    const double rate = m.evaluations / m.median_seconds;
    const double per_core = m.evaluations / m.median_cpu_seconds;
    table_.rows.push_back(
        {backend, m.kernel, m.device, std::to_string(threads), fmt::format("{}^3", edge),
         std::to_string(atoms), fmt::format("{:.4f}", m.median_seconds),
         fmt::format("{:.3e}", rate), fmt::format("{:.3e}", per_core), "-", "-",
         m.interleaved_share > 0 ? fmt::format("{:.1f}%", 100.0 * m.interleaved_share)
                                 : std::string("-"),
         pymol_rate_ > 0 ? fmt::format("{:.1f}", per_core / pymol_rate_) : std::string("-")});
    limits_.push_back({per_core, m.evaluations / m.best_cpu_seconds, limit});
  }

  /// The % port limit columns, once the limits are final.
  BenchTable finish() {
    for (std::size_t row = 0; row < table_.rows.size(); ++row) {
      const RowLimit& r = limits_[row];
      if (r.limit == nullptr || !*r.limit) continue;
      table_.rows[row][9] = fmt::format("{:.1f}%", 100.0 * r.per_core / (*r.limit)->pairs());
      table_.rows[row][10] = fmt::format("{:.1f}%", 100.0 * r.best_per_core / (*r.limit)->pairs());
    }
    return std::move(table_);
  }

 private:
  struct RowLimit {
    double per_core = 0.0;       ///< evals / median process CPU seconds
    double best_per_core = 0.0;  ///< evals / the fastest repetition's process CPU seconds
    const std::optional<PortLimit>* limit = nullptr;
  };
  BenchTable table_;
  std::vector<RowLimit> limits_;
  double pymol_rate_;
};

/// Every selected fast kernel this CPU supports (all threads and one thread for the automatic
/// one, one thread for each instruction set's) on one system and grid edge.
void measure_fast_kernels(const BenchOptions& options, unsigned all_threads, const System& system,
                          std::int64_t edge, const PortLimits& limits, BackendsTable& table) {
  for (const cpu_fast::FastKernel& kernel : cpu_fast::kFastKernels) {
    const std::string name(kernel.name);
    if (!selected(options, name)) continue;
    if (!kernel.automatic && !cpu_fast::isa_supported(kernel.isa)) continue;
    const cpu_fast::Isa isa = kernel.automatic ? cpu_fast::best_isa() : kernel.isa;
    // The portable kernel is ~10x slower: a quarter of the edge keeps its run short.
    const bool slow = isa == cpu_fast::Isa::Portable;
    const std::int64_t grid_edge = slow ? std::max<std::int64_t>(2, edge / 4) : edge;
    std::vector<unsigned> thread_counts{1};
    if (kernel.automatic && all_threads > 1)
      thread_counts.insert(thread_counts.begin(), all_threads);
    for (unsigned threads : thread_counts) {
      BackendOptions backend_options;
      backend_options.kernel = name;
      backend_options.threads = threads;
      // One thread of an AVX kernel: its share of the mix, measured around each repetition.
      MixProbe mix = nullptr;
      if (threads == 1 && isa == cpu_fast::Isa::Avx512) mix = &bench::measure_mix_pairs_avx512;
      if (threads == 1 && isa == cpu_fast::Isa::Avx2) mix = &bench::measure_mix_pairs_avx2;
      table.add_row("cpu-fast",
                    measure(backend_options, false, system, grid_edge, options.repetitions, mix),
                    threads, grid_edge, system.size(), limits.of(isa));
    }
  }
}

void add_backend_notes(BenchTable& table, const BenchOptions& options,
                       const bench::PymolMeasurement& pymol) {
  table.notes.push_back(
      "Atoms: protein-like random systems (fixed seed) of real molecules' sizes; direct "
      "summation is branch-free and has no cutoff, so only the atom and point counts matter.");
  table.notes.push_back(
      "median s: the backend's kernel time for the whole grid (statistics pass excluded), "
      "evals = grid points x atoms, evals/s = evals / median s. evals/s/core: evals / median "
      "process CPU time of compute() (statistics included, all threads' CPU). 'simd' picks the "
      "best ISA; per-ISA kernels run on 1 thread.");
  table.notes.push_back(
      "% port limit: evals/s/core against the port limit above (the best of runs before and "
      "after all the kernels); best rep: the fastest repetition's, a best against a best. % mix, "
      "interleaved (one-thread AVX rows): the median over the "
      "repetitions of each one's evals/s/core against the per-pair mix measured on the same "
      "thread just before and just after it; on a quiet machine the two agree, where other "
      "work shares the core (a virtual machine's sibling hardware thread) or the clock moves, "
      "the interleaved one compares the kernel with the limit under the same conditions.");
  if (pymol.available)
    table.notes.push_back(fmt::format(
        "PyMOL {} ({}): map_new coulomb (no cutoff) of the {}-atom system at {:.0f} points, "
        "best of 3 in process CPU time: {:.3f} s = {:.3e} evals/s (one thread). Goal: {:.0f}x "
        "per core.",
        pymol.version, pymol.python, static_cast<std::size_t>(pymol.atoms), pymol.points,
        pymol.cpu_seconds, pymol.evals_per_second(), kTargetSpeedup));
  else if (options.peers) table.notes.push_back("PyMOL: " + pymol.why);
}

}  // namespace

namespace bench {

double issue_limit_pairs(const PortRates& rates) {
  using P = PairInstructions;
  const double multiply_pipes = (P::kFma + P::kMul) / std::min(rates.fma, rates.mul);
  const double add_pipes = P::kAdd / rates.add;
  const double estimates = P::kRsqrt / rates.rsqrt;
  return rates.lanes / std::max({multiply_pipes, add_pipes, estimates});
}

}  // namespace bench

std::vector<BenchTable> benchmark_cpu_backends(const BenchOptions& options) {
  const BenchSizes sizes = bench_sizes(options);
  // The port limit: measured before and after the kernels, best of both.
  PortLimits limits;
  limits.measure();
  const bench::PymolMeasurement pymol =
      options.peers ? measure_pymol_peer(sizes.atom_counts.front()) : bench::PymolMeasurement{};

  BackendsTable table(options, pymol);
  for (std::size_t atoms : sizes.atom_counts) {
    const System system = protein_like_system(atoms, 20261121u);
    for (std::int64_t edge : sizes.edges) {
      measure_fast_kernels(options, sizes.all_threads, system, edge, limits, table);
      if (selected(options, "reference")) {
        // The float64 oracle is ~50x slower than the fast path: an edge a quarter as long.
        const std::int64_t grid_edge = std::max<std::int64_t>(2, edge / 4);
        BackendOptions backend_options;
        backend_options.threads = 1;
        table.add_row("cpu-reference",
                      measure(backend_options, true, system, grid_edge, options.repetitions), 1,
                      grid_edge, atoms, nullptr);
      }
    }
  }
  limits.measure();
  std::vector<BenchTable> tables;
  tables.push_back(port_limit_table(limits));
  tables.push_back(table.finish());
  add_backend_notes(tables.back(), options, pymol);
  return tables;
}

}  // namespace dcs
