// Benchmark of the CPU backends: atom-evaluations/s of every fast kernel this CPU supports
// (all threads and one thread) and of the float64 reference (one thread, smaller grid), against
// two yardsticks measured in the same run on the same machine:
//  - the SIMD port limit: the pairs/s one core can do by the kernel's arithmetic alone
//    (port_limit.hpp: instruction issue rates and the per-pair instruction mix, on registers);
//  - PyMOL's `map_new coulomb` (pymol_peer.hpp) on the same atoms.
// Per-core rates are evaluations per second of process CPU time (also PyMOL's), so a shared
// machine's other work does not count against either side; wall-clock rates are shown too.
//
// With --models (coulomb, screened, distance) a second pair of tables: each physics model's
// fast kernel per instruction set through the real backend, on the grid and at ~10^5 points in
// Z order (compute_points), against that model's own per-pair mix (port_limit_kernel.hpp).
//
// The atoms are a protein-like random system with a fixed seed. Direct summation has no
// cutoff and the kernels are branch-free, so the cost depends only on the numbers of atoms and
// grid points, not on where the atoms are: a random system of a real molecule's size measures
// what that molecule would.
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dcs/backend.hpp"
#include "dcs/bench.hpp"
#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/parallel.hpp"
#include "dcs/physics.hpp"
#include "dcs/spatial_order.hpp"
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
using MixProbe = std::function<double(double seconds)>;

/// Seconds of each interleaved mix measurement (best of 5 runs of this): short beside a
/// repetition (0.3 s and more at the default sizes), long enough for a stable rate.
constexpr double kInterleavedMixSeconds = 0.02;

/// The timing loop of measure() and measure_points(): `run` (one computation on `backend`) once
/// to warm up, then `repetitions` times, each timed by the backend's `kernels` clock and by the
/// process CPU time, with `mix` measured before and after each one where given.
Measurement timed_repetitions(PotentialBackend& backend, double evaluations, int repetitions,
                              const MixProbe& mix, const std::function<void()>& run) {
  run();  // warm-up
  std::vector<double> seconds, cpu_seconds, shares;
  for (int rep = 0; rep < repetitions; ++rep) {
    const double mix_before = mix ? mix(kInterleavedMixSeconds) : 0.0;
    const double before = backend.timings().kernels;
    const double cpu_before = process_seconds();
    run();
    cpu_seconds.push_back(process_seconds() - cpu_before);
    seconds.push_back(backend.timings().kernels - before);
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
  m.device = backend.device_name();
  m.kernel = backend.kernel_name();
  return m;
}

/// Median kernel time (the backend's own `kernels` timing, without the statistics pass) and
/// median process CPU time of `repetitions` computations of the whole grid after one warm-up.
/// With `mix`, for a one-thread backend (whose pool runs the work on this thread), the mix is
/// measured before and after every repetition (Measurement::interleaved_share).
Measurement measure(const BackendOptions& options, bool reference, const System& system,
                    std::int64_t edge, int repetitions, const MixProbe& mix = nullptr,
                    const Physics& physics = Physics{}) {
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{edge, edge, edge};
  const GridSpec grid = make_grid(system, request);
  check_fits_in_memory(map_bytes(grid), "the benchmark map");
  std::vector<float> map(grid.points());
  auto backend = reference ? make_cpu_reference_backend(options) : make_cpu_fast_backend(options);
  backend->prepare(system, grid, physics);
  const Slab whole{0, grid.nz()};
  const double evaluations =
      static_cast<double>(grid.points()) * static_cast<double>(system.size());
  return timed_repetitions(*backend, evaluations, repetitions, mix,
                           [&] { backend->compute(whole, map.data()); });
}

/// About `count` points on a jittered lattice over the system's bounding box (5 Å around it), in
/// Z order (dcs::spatial_order, as the points job sorts its lists), so that each block of
/// compute_points() is compact.
std::vector<Vec3> bench_points(const System& system, std::size_t count, std::uint32_t seed) {
  Vec3 lo{HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi{-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  for (const Atom& atom : system.atoms)
    for (int axis = 0; axis < 3; ++axis) {
      lo[axis] = std::min(lo[axis], atom.position[axis] - 5.0);
      hi[axis] = std::max(hi[axis], atom.position[axis] + 5.0);
    }
  const auto n = static_cast<std::uint32_t>(
      std::clamp(std::ceil(std::cbrt(static_cast<double>(count))), 1.0, 1024.0));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  std::vector<Vec3> lattice;
  lattice.reserve(std::size_t{n} * n * n);
  for (std::uint32_t k = 0; k < n; ++k)
    for (std::uint32_t j = 0; j < n; ++j)
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::array<std::uint32_t, 3> cell{i, j, k};
        Vec3 p{};
        for (int axis = 0; axis < 3; ++axis)
          p[axis] = lo[axis] + (hi[axis] - lo[axis]) * (cell[axis] + jitter(rng)) / n;
        lattice.push_back(p);
      }
  std::vector<Vec3> points;
  points.reserve(lattice.size());
  for (std::size_t index : spatial_order(lattice)) points.push_back(lattice[index]);
  return points;
}

/// measure() for the points path: compute_points() of the fast backend on `points` (no skipped
/// atoms), the mix (if any) measured around every one-thread repetition.
Measurement measure_points(const BackendOptions& options, const System& system,
                           const std::vector<Vec3>& points, const Physics& physics, int repetitions,
                           const MixProbe& mix) {
  std::vector<float> out(points.size());
  auto backend = make_cpu_fast_backend(options);
  backend->prepare_points(system, physics);
  const double evaluations =
      static_cast<double>(points.size()) * static_cast<double>(system.size());
  return timed_repetitions(*backend, evaluations, repetitions, mix, [&] {
    backend->compute_points(points.data(), nullptr, points.size(), out.data());
  });
}

/// A physics model of the --models table: its name, the physics and its pair term.
struct BenchModel {
  std::string name;  ///< "coulomb", "screened", "distance"
  Physics physics;
  PairKind kind = PairKind::kCoulomb;
};

/// The models named in BenchOptions::models, as the GPU benchmark's: Coulomb in vacuum,
/// Debye-Hückel at 0.15 M in water (eps 78.54, 298.15 K), eps = 4r.
std::vector<BenchModel> bench_models(const BenchOptions& options) {
  std::vector<BenchModel> models;
  for (const std::string& name : options.models) {
    BenchModel model{name, Physics{}, PairKind::kCoulomb};
    if (name == "screened") {
      model.physics.ionic_strength = 0.15;
      model.physics.dielectric = kWaterDielectric;
    } else if (name == "distance") {
      model.physics.dielectric_model = DielectricModel::kDistance;
      model.physics.dielectric = 4.0;
    } else if (name != "coulomb") {
      throw UsageError("--models " + name + ": coulomb, screened or distance");
    }
    validate(model.physics);
    model.kind = pair_term(model.physics).kind;
    models.push_back(model);
  }
  return models;
}

/// The port limit of one instruction set on this CPU, with how it was reached.
struct PortLimit {
  bench::PortRates rates;
  double issue_pairs = 0.0;  ///< from the issue rates of FMA, add and rsqrt (port_limit.hpp)
  /// The limit stated: the lower of the issue-rate bound and the measured per-pair mix (the
  /// kernel's instructions on registers, where port sharing the classes' rates miss shows).
  double pairs() const { return std::min(issue_pairs, rates.mix_pairs); }
  /// With --models, per dcs::PairKind (0: not measured): the row sweep's per-pair mix (Coulomb's
  /// is rates.mix_pairs) and the points sweep's.
  std::array<double, 3> model_row{}, model_points{};
  /// A model's row mix: Coulomb's is rates.mix_pairs.
  double row_mix(PairKind kind) const {
    return kind == PairKind::kCoulomb ? rates.mix_pairs : model_row[static_cast<int>(kind)];
  }
  /// A model's port limit: Coulomb's is pairs() (the lower of the issue bound and the mix, as
  /// in the port limit table); the other models' is their row mix (no issue bound is derived
  /// for them: the exponential's rounding, scaling and conversions share ports in ways the
  /// classes' rates do not describe).
  double model_limit(PairKind kind) const {
    return kind == PairKind::kCoulomb ? pairs() : model_row[static_cast<int>(kind)];
  }
};

/// Measures the port limit of `isa` (nothing where the CPU lacks it) and keeps, rate by rate,
/// the best of this and any earlier measurement in `limit`: a limit is a maximum, and another
/// process's brief load (or a clock dip) only ever lowers a reading.
void measure_port_limit(cpu_fast::Isa isa, std::optional<PortLimit>& limit,
                        const std::vector<PairKind>& kinds) {
  if (!cpu_fast::isa_supported(isa)) return;
  constexpr double kSeconds = 0.05;
  const bench::PortLimitProbe probe = bench::port_limit_probe(isa);
  if (probe.port_rates == nullptr) return;
  const bench::PortRates rates = probe.port_rates(kSeconds);
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
  for (PairKind kind : kinds) {
    const auto k = static_cast<std::size_t>(kind);
    if (kind != PairKind::kCoulomb)
      limit->model_row[k] = std::max(limit->model_row[k], probe.model_mix(kind, false, kSeconds));
    limit->model_points[k] =
        std::max(limit->model_points[k], probe.model_mix(kind, true, kSeconds));
  }
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
  std::vector<PairKind> kinds;  ///< the models whose mixes are measured too (--models)
  void measure() {
    measure_port_limit(cpu_fast::Isa::Avx512, avx512, kinds);
    measure_port_limit(cpu_fast::Isa::Avx2, avx2, kinds);
  }
  const std::optional<PortLimit>* of(cpu_fast::Isa isa) const {
    return isa == cpu_fast::Isa::Avx512 ? &avx512 : isa == cpu_fast::Isa::Avx2 ? &avx2 : nullptr;
  }
  /// (the set's name, its limit) in the port-limit tables' row order.
  std::array<std::pair<const char*, const std::optional<PortLimit>*>, 2> named() const {
    return {{{"AVX-512", &avx512}, {"AVX2+FMA", &avx2}}};
  }
};

/// A port-limit table's title: `what` one core of this CPU, `measured` how, and the runs.
std::string one_core_title(std::string_view what, std::string_view measured) {
  return fmt::format(
      "{} one core of {}: {}, thread CPU time, best of 5 runs before and 5 after the kernels", what,
      cpu_model_name(), measured);
}

BenchTable port_limit_table(const PortLimits& limits) {
  BenchTable ports{
      .name = "cpu_port_limit",
      .title = one_core_title("SIMD port limit of", "instruction rates on registers"),
      .columns = {"instruction set", "lanes", "FMA /s", "MUL /s", "ADD /s", "MAX /s", "RSQRT /s",
                  "issue bound pairs/s", "per-pair mix pairs/s", "port limit pairs/s"}};
  for (const auto& [name, limit] : limits.named()) {
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
      if (threads == 1) mix = bench::port_limit_probe(isa).mix_pairs;
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

/// Points of the --models points rows: ~10^5, a surface mesh's or a long atom list's size.
constexpr std::size_t kBenchPoints = 100000;

/// The --models port limits: each model's row and points mix per instruction set.
BenchTable model_port_limit_table(const PortLimits& limits, const std::vector<BenchModel>& models) {
  BenchTable table{
      .name = "cpu_model_port_limit",
      .title = one_core_title("Per-pair mix of every physics model on",
                              "the sweeps' arithmetic on registers"),
      .columns = {"instruction set", "model", "pair term", "row mix pairs/s", "port limit pairs/s",
                  "points mix pairs/s", "points mix / port limit"}};
  for (const auto& [name, limit] : limits.named()) {
    for (const BenchModel& model : models) {
      if (!*limit) {
        table.rows.push_back({name, model.name, std::string(pair_formula(model.physics)), "-", "-",
                              "-", "not supported by this CPU"});
        continue;
      }
      const PortLimit& l = **limit;
      const double points = l.model_points[static_cast<std::size_t>(model.kind)];
      table.rows.push_back({name, model.name, std::string(pair_formula(model.physics)),
                            fmt::format("{:.3e}", l.row_mix(model.kind)),
                            fmt::format("**{:.3e}**", l.model_limit(model.kind)),
                            fmt::format("{:.3e}", points),
                            fmt::format("{:.1f}%", 100.0 * points / l.model_limit(model.kind))});
    }
  }
  table.notes.push_back(
      "Row mix: the row sweep's arithmetic per vector of pairs (row_kernel.hpp: dx from the "
      "split atom, r^2 = dx^2 + yz2, dcs::add_unclamped_coulomb_term with dcs::NewtonRsqrt and "
      "the model) on registers, as the port limit table's per-pair mix (Coulomb's row is that "
      "table's mix and port limit). Points mix: the points sweep's (points_kernel.hpp: dx, dy, "
      "dz, r^2 = dx^2 + dy^2 + dz^2, the clamp, the term), 4 chains on AVX-512, 2 on AVX2. "
      "Models: coulomb 1/r; screened Debye-Hückel at 0.15 M, eps 78.54, 298.15 K (2^x from "
      "the polynomial of dcs::exp2_fraction); distance eps = 4r (1/r^2 from the reciprocal "
      "estimate and a Newton step).");
  return table;
}

/// The --models table, row by row; the % columns are filled in at the end, against the limits
/// measured before and after all the rows.
class ModelsTable {
 public:
  explicit ModelsTable(const BenchOptions& options) {
    table_.name = "cpu_models";
    table_.title = fmt::format(
        "CPU fast kernels per physics model: pairs/s, median of {} after a warm-up; per core "
        "by process CPU time; % of the model's port limit and of its own mix (model port "
        "limit table above)",
        options.repetitions);
    table_.columns = {"model",
                      "path",
                      "kernel",
                      "threads",
                      "size",
                      "atoms",
                      "median s",
                      "pairs/s",
                      "pairs/s/core (CPU)",
                      "% port limit",
                      "% port limit, best rep",
                      "% own mix",
                      "% own mix, interleaved"};
  }

  void add_row(const BenchModel& model, bool points, const Measurement& m, unsigned threads,
               const std::string& size, std::size_t atoms, const std::optional<PortLimit>* limit) {
    const double per_core = m.evaluations / m.median_cpu_seconds;
    table_.rows.push_back(
        {model.name, points ? "points" : "grid", m.kernel, std::to_string(threads), size,
         std::to_string(atoms), fmt::format("{:.4f}", m.median_seconds),
         fmt::format("{:.3e}", m.evaluations / m.median_seconds), fmt::format("{:.3e}", per_core),
         "-", "-", "-",
         m.interleaved_share > 0 ? fmt::format("{:.1f}%", 100.0 * m.interleaved_share)
                                 : std::string("-")});
    rows_.push_back({model.kind, points, per_core, m.evaluations / m.best_cpu_seconds, limit});
  }

  BenchTable finish() {
    for (std::size_t row = 0; row < table_.rows.size(); ++row) {
      const Row& r = rows_[row];
      if (r.limit == nullptr || !*r.limit) continue;
      const PortLimit& l = **r.limit;
      const double limit = l.model_limit(r.kind);
      const double own =
          r.points ? l.model_points[static_cast<std::size_t>(r.kind)] : l.row_mix(r.kind);
      if (limit > 0) {
        table_.rows[row][9] = fmt::format("{:.1f}%", 100.0 * r.per_core / limit);
        table_.rows[row][10] = fmt::format("{:.1f}%", 100.0 * r.best_per_core / limit);
      }
      if (own > 0) table_.rows[row][11] = fmt::format("{:.1f}%", 100.0 * r.per_core / own);
    }
    table_.notes.push_back(
        "grid: the fast backend's compute() of the whole grid (as the backends table, with the "
        "model's Physics); points: compute_points() of ~10^5 points on a jittered lattice over "
        "the atoms' box (5 Å margin) in Z order, no atom skipped. pairs = points x atoms.");
    table_.notes.push_back(
        "% port limit: pairs/s/core against the model's port limit (its row mix; Coulomb's the "
        "port limit table's), for the grid and the points alike, best rep: the fastest "
        "repetition's. % own mix: against the path's own mix (grid: the row mix; points: the "
        "points mix, which has 4 more instructions per vector of pairs than the row mix). "
        "Interleaved (one-thread rows): the median over the repetitions of each one's rate "
        "against the path's own mix measured on the same thread just before and after it.");
    return std::move(table_);
  }

 private:
  struct Row {
    PairKind kind = PairKind::kCoulomb;
    bool points = false;
    double per_core = 0.0;
    double best_per_core = 0.0;
    const std::optional<PortLimit>* limit = nullptr;
  };
  BenchTable table_;
  std::vector<Row> rows_;
};

/// The per-ISA fast kernels of the --models table: AVX-512 and AVX2 where the CPU has them and
/// --kernel names them (or names "simd", for the best one).
std::vector<const cpu_fast::FastKernel*> model_kernels(const BenchOptions& options) {
  std::vector<const cpu_fast::FastKernel*> kernels;
  for (const cpu_fast::FastKernel& kernel : cpu_fast::kFastKernels) {
    if (kernel.automatic || kernel.isa == cpu_fast::Isa::Portable) continue;
    if (!cpu_fast::isa_supported(kernel.isa)) continue;
    if (selected(options, std::string(kernel.name)) ||
        (selected(options, "simd") && kernel.isa == cpu_fast::best_isa()))
      kernels.push_back(&kernel);
  }
  return kernels;
}

/// Every model on every --models kernel at one thread (its mix interleaved) and all threads:
/// the grid of edge `edge`, or (edge 0) the points.
void measure_models(const BenchOptions& options, unsigned all_threads,
                    const std::vector<BenchModel>& models, const System& system, std::int64_t edge,
                    const std::vector<Vec3>* points, const PortLimits& limits, ModelsTable& table) {
  for (const cpu_fast::FastKernel* kernel : model_kernels(options)) {
    const auto probe = bench::port_limit_probe(kernel->isa).model_mix;  // AVX kernels only
    for (const BenchModel& model : models) {
      std::vector<unsigned> thread_counts{1};
      if (all_threads > 1) thread_counts.push_back(all_threads);
      for (unsigned threads : thread_counts) {
        BackendOptions backend_options;
        backend_options.kernel = std::string(kernel->name);
        backend_options.threads = threads;
        const bool on_points = points != nullptr;
        MixProbe mix = nullptr;
        if (threads == 1)
          mix = [probe, kind = model.kind, on_points](double seconds) {
            return probe(kind, on_points, seconds);
          };
        if (on_points)
          table.add_row(model, true,
                        measure_points(backend_options, system, *points, model.physics,
                                       options.repetitions, mix),
                        threads, std::to_string(points->size()), system.size(),
                        limits.of(kernel->isa));
        else
          table.add_row(model, false,
                        measure(backend_options, false, system, edge, options.repetitions, mix,
                                model.physics),
                        threads, fmt::format("{}^3", edge), system.size(), limits.of(kernel->isa));
      }
    }
  }
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
  const std::vector<BenchModel> models = bench_models(options);
  // The port limit: measured before and after the kernels, best of both.
  PortLimits limits;
  for (const BenchModel& model : models) limits.kinds.push_back(model.kind);
  limits.measure();
  const bench::PymolMeasurement pymol =
      options.peers ? measure_pymol_peer(sizes.atom_counts.front()) : bench::PymolMeasurement{};

  BackendsTable table(options, pymol);
  ModelsTable model_table(options);
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
      if (!models.empty())
        measure_models(options, sizes.all_threads, models, system, edge, nullptr, limits,
                       model_table);
    }
    if (!models.empty()) {
      const std::vector<Vec3> points = bench_points(system, kBenchPoints, 20261126u);
      measure_models(options, sizes.all_threads, models, system, 0, &points, limits, model_table);
    }
  }
  limits.measure();
  std::vector<BenchTable> tables;
  tables.push_back(port_limit_table(limits));
  tables.push_back(table.finish());
  add_backend_notes(tables.back(), options, pymol);
  if (!models.empty()) {
    tables.push_back(model_port_limit_table(limits, models));
    tables.push_back(model_table.finish());
  }
  return tables;
}

}  // namespace dcs
