// MSM on CUDA devices (dcs/cuda/msm_backend.hpp): the device's finest lattice against the CPU
// solve's (LongRange, ~1e-13 apart) on 2lzt, an apbs-data molecule and a tiled multi-level
// case, and the same bits tiled or direct, run after run and on a second GPU; the device map
// against the CPU MSM backend (float short-range sums, ~1e-6 of the potential apart) and against
// the float64 exact reference at every error target; the same bits for any slab split and on
// two GPUs; plane statistics; timings printed (no timing asserts). MsmCudaBench.TiledMolecules
// times 1.5e6 atoms x 464^3 at 1e-3 (up to 1e8 x 2048^3) when DCS_MSM_BENCH=1
// (bench/msm_gpu_bench.sh), prepare split into its GPU steps.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/backend.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/cuda/msm_backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/msm.hpp"
#include "dcs/msm_plan.hpp"
#include "dcs/parallel.hpp"
#include "msm_cases.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::unique_ptr<PotentialBackend> gpu_msm(const MsmParameters& parameters, int device = 0) {
  BackendOptions options;
  options.device = device;
  return cuda::make_msm_cuda_backend(cuda::make_cuda_backend(options), parameters, options);
}

std::unique_ptr<PotentialBackend> cpu_msm(const MsmParameters& parameters) {
  BackendOptions options;
  return make_msm_backend(make_cpu_fast_backend(options), parameters, options);
}

/// max|a - b| / max|b|.
double relative_max(const std::vector<float>& computed, const std::vector<float>& reference) {
  double worst = 0.0, peak = 0.0;
  for (std::size_t p = 0; p < computed.size(); ++p) {
    worst = std::max(worst, std::fabs(static_cast<double>(computed[p]) - reference[p]));
    peak = std::max(peak, std::fabs(static_cast<double>(reference[p])));
  }
  return worst / peak;
}

class MsmCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::cuda_available()) GTEST_SKIP() << "no GPU: " << cuda::cuda_unavailable_reason();
  }
};

/// Copies of apbs-data molecules (hca, 1a63, the actin dimer in turn; 2lzt without apbs-data),
/// each centred in a cell of a cubic lattice sized for `density` atoms/A^3 overall (copies may
/// interpenetrate at a solvated system's 0.1: the map's cost depends on the density, not on the
/// chemistry), until at least `atoms` atoms.
System tiled_molecules(std::size_t atoms, double density) {
  std::vector<System> pieces;
  for (const char* path : {"examples/hca-bind/hca.pqr", "examples/geoflow/1a63.pqr",
                           "examples/actin-dimer/complex.pqr"}) {
    const std::string full = apbs_data_dir() + "/" + path;
    if (std::FILE* probe = std::fopen(full.c_str(), "r")) {
      std::fclose(probe);
      pieces.push_back(read_pqr_fixture(full));
    }
  }
  if (pieces.empty())
    pieces.push_back(read_pqr_fixture(std::string(DCS_SOURCE_DIR) + "/data/2lzt.pqr"));
  std::vector<Vec3> centre(pieces.size());
  std::size_t mean = 0;
  for (std::size_t m = 0; m < pieces.size(); ++m) {
    Vec3 lo = pieces[m].atoms[0].position, hi = lo;
    for (const Atom& atom : pieces[m].atoms)
      for (int d = 0; d < 3; ++d) {
        lo[d] = std::min(lo[d], atom.position[d]);
        hi[d] = std::max(hi[d], atom.position[d]);
      }
    for (int d = 0; d < 3; ++d) centre[m][d] = 0.5 * (lo[d] + hi[d]);
    mean += pieces[m].atoms.size();
  }
  mean /= pieces.size();
  const double cell = std::cbrt(static_cast<double>(mean) / density);
  const auto side = static_cast<int>(
      std::ceil(std::cbrt(static_cast<double>(atoms) / static_cast<double>(mean))));
  std::vector<Atom> all;
  all.reserve(atoms + 2 * mean);
  for (int k = 0, copy = 0; k < side && all.size() < atoms; ++k)
    for (int j = 0; j < side && all.size() < atoms; ++j)
      for (int i = 0; i < side && all.size() < atoms; ++i, ++copy) {
        const std::size_t m = static_cast<std::size_t>(copy) % pieces.size();
        const Vec3 shift{i * cell - centre[m][0], j * cell - centre[m][1], k * cell - centre[m][2]};
        for (const Atom& atom : pieces[m].atoms) {
          Atom moved = atom;
          for (int d = 0; d < 3; ++d) moved.position[d] += shift[d];
          all.push_back(moved);
        }
      }
  return make_system(std::move(all));
}

// --- Accuracy: GPU vs CPU MSM vs the float64 reference ----------------------------------------

const MsmMoleculeCase kMolecules[] = {
    {"2lzt", std::string(DCS_SOURCE_DIR) + "/data/2lzt.pqr", false, 65},
    {"hca", "examples/hca-bind/hca.pqr", true, 65},
};

void check_molecule(const MsmMoleculeCase& molecule) {
  const MsmLoadedCase* c = load_msm_case(molecule);
  if (c == nullptr) GTEST_SKIP() << molecule.path << " is not installed under " << apbs_data_dir();
  for (const double target : kMsmTargets) {
    const MsmParameters parameters = msm_parameters(target);
    auto gpu = gpu_msm(parameters);
    auto cpu = cpu_msm(parameters);
    const std::vector<float> gpu_map = compute_grid(*gpu, c->system, c->grid, Physics{});
    const std::vector<float> cpu_map = compute_grid(*cpu, c->system, c->grid, Physics{});
    const std::size_t nonfinite = static_cast<std::size_t>(
        std::count_if(gpu_map.begin(), gpu_map.end(), [](float v) { return !std::isfinite(v); }));
    ASSERT_EQ(nonfinite, 0u) << molecule.name << " " << target;
    const double vs_exact = relative_rms(gpu_map, c->reference);
    const double cpu_vs_exact = relative_rms(cpu_map, c->reference);
    const double vs_cpu_rms = relative_rms(gpu_map, cpu_map);
    const double vs_cpu_max = relative_max(gpu_map, cpu_map);
    std::printf(
        "%s %zu atoms, %s: GPU vs exact rel RMS %.3e (CPU msm %.3e); GPU vs CPU msm "
        "rel RMS %.2e, max %.2e of max|V|\n",
        molecule.name.c_str(), c->system.atoms.size(), describe(parameters).c_str(), vs_exact,
        cpu_vs_exact, vs_cpu_rms, vs_cpu_max);
    EXPECT_LE(vs_exact, target) << molecule.name;
    // The same bins and plan, lattices ~1e-13 apart (LatticeMatchesTheCpu*), interpolated in
    // double on both; the short-range sums differ
    // by float rounding: MUFU rsqrt (~2 ulp) and the atom offsets from the tile's first point
    // (half an ulp of up to ~20 A, 5e-7 A, 1.6e-6 of 1/r at 0.3 A) on the largest terms, and
    // ~sqrt(400) float additions. Expected ~1e-6 of max|V|; bounds with margin:
    EXPECT_LE(vs_cpu_max, 5e-6) << molecule.name << " " << target;
    EXPECT_LE(vs_cpu_rms, kRelativeTolerance) << molecule.name << " " << target;
  }
}

TEST_F(MsmCuda, Lysozyme2lztMeetsEveryTargetAndMatchesTheCpu) { check_molecule(kMolecules[0]); }
TEST_F(MsmCuda, ApbsHcaMeetsEveryTargetAndMatchesTheCpu) { check_molecule(kMolecules[1]); }

// --- The lattice hierarchy: the device's finest lattice vs the CPU's LongRange ------------------

/// max|gpu - cpu| / max|cpu| over the finest lattice; checks the extents agree.
double lattice_difference(const MsmLatticeValues& gpu, const MsmHostData& cpu) {
  EXPECT_EQ(gpu.extent.lo, cpu.lattice_lo);
  EXPECT_EQ(gpu.extent.n, cpu.lattice_n);
  EXPECT_EQ(gpu.v.size(), cpu.lattice.size());
  if (gpu.v.size() != cpu.lattice.size()) return 1.0;
  double worst = 0.0, peak = 0.0;
  for (std::size_t i = 0; i < gpu.v.size(); ++i) {
    worst = std::max(worst, std::fabs(gpu.v[i] - cpu.lattice[i]));
    peak = std::max(peak, std::fabs(cpu.lattice[i]));
  }
  return worst / peak;
}

/// Both solves are in double on the same plan (extents, kernel tables, two-scale weights). They
/// differ in rounding only: the order of the anterpolation's terms (the device's by lattice
/// cell, the CPU's by z-bucket), fma on the device, Phi's /12 and /24 as multiplications, and
/// the CPU's FFT on the levels where it is cheaper (error ~ eps log2(M) sum |K||q|, relative to
/// the largest value; the charges cancel, so sum |K||q| can be ~100 max|e|). Expected ~1e-14 ..
/// 1e-13 of max|e|; the bound leaves two orders of magnitude.
constexpr double kLatticeTolerance = 1e-11;

void check_lattice(const System& system, const GridSpec& grid, const std::string& label,
                   int min_levels = 1) {
  ThreadPool pool(0);
  for (const double target : kMsmTargets) {
    const MsmParameters parameters = msm_parameters(target);
    auto gpu = gpu_msm(parameters);
    gpu->prepare(system, grid, Physics{});
    const MsmLatticeValues on_gpu = cuda::msm_cuda_finest_lattice(*gpu);
    const cuda::MsmCudaPrepareTimings t = cuda::msm_cuda_prepare_timings(*gpu);
    const MsmHostData on_cpu = msm_prepare_host(system, grid, Physics{}, parameters, pool);
    const double difference = lattice_difference(on_gpu, on_cpu);
    std::printf("%s, %s: %d levels, finest %ldx%ldx%ld; GPU vs CPU lattice max %.2e of max|e|\n",
                label.c_str(), describe(parameters).c_str(), t.levels, on_gpu.extent.n[0],
                on_gpu.extent.n[1], on_gpu.extent.n[2], difference);
    EXPECT_LE(difference, kLatticeTolerance) << label << " " << target;
    EXPECT_GE(t.levels, min_levels) << label << " " << target;
  }
}

TEST_F(MsmCuda, LatticeMatchesTheCpuOn2lzt) {
  const MsmLoadedCase* c = load_msm_case(kMolecules[0]);
  ASSERT_NE(c, nullptr);
  check_lattice(c->system, c->grid, "2lzt");
}

TEST_F(MsmCuda, LatticeMatchesTheCpuOnApbsHca) {
  const MsmLoadedCase* c = load_msm_case(kMolecules[1]);
  if (c == nullptr) GTEST_SKIP() << kMolecules[1].path << " is not installed";
  check_lattice(c->system, c->grid, "hca");
}

// ~60000 atoms in a ~90 A box: 4 or more levels at every target.
TEST_F(MsmCuda, LatticeMatchesTheCpuOnTiledMolecules) {
  const System system = tiled_molecules(60000, 0.1);
  check_lattice(system, default_grid(system, 97), "tiled " + std::to_string(system.atoms.size()),
                3);
}

/// The finest lattice of a fresh backend on `device`, its level sums tiled or (the testing
/// aid DCS_MSM_TESTING_DIRECT_SUMS=1) one thread per point over every tap.
MsmLatticeValues device_lattice(const System& system, const GridSpec& grid, double target,
                                int device, bool direct) {
  if (direct) ::setenv("DCS_MSM_TESTING_DIRECT_SUMS", "1", 1);
  auto gpu = gpu_msm(msm_parameters(target), device);
  gpu->prepare(system, grid, Physics{});
  ::unsetenv("DCS_MSM_TESTING_DIRECT_SUMS");
  return cuda::msm_cuda_finest_lattice(*gpu);
}

bool same_bits(const MsmLatticeValues& a, const MsmLatticeValues& b) {
  return a.extent.lo == b.extent.lo && a.extent.n == b.extent.n && a.v.size() == b.v.size() &&
         std::memcmp(a.v.data(), b.v.data(), a.v.size() * sizeof(double)) == 0;
}

// The tiled level sum skips only taps that add exactly +0, in the direct kernel's order: the
// same bits. And a second run, and a second device, give the same bits too.
TEST_F(MsmCuda, LatticeIsTheSameBitsTiledOrDirectAndOnEveryRun) {
  const System system = tiled_molecules(30000, 0.1);
  const GridSpec grid = default_grid(system, 64);
  const bool two = cuda::cuda_devices().size() >= 2;
  for (const double target : kMsmTargets) {
    const MsmLatticeValues tiled = device_lattice(system, grid, target, 0, false);
    const MsmLatticeValues direct = device_lattice(system, grid, target, 0, true);
    const MsmLatticeValues again = device_lattice(system, grid, target, 0, false);
    EXPECT_TRUE(same_bits(tiled, direct)) << "tiled vs direct, target " << target;
    EXPECT_TRUE(same_bits(tiled, again)) << "second run, target " << target;
    if (two) {
      EXPECT_TRUE(same_bits(tiled, device_lattice(system, grid, target, 1, false)))
          << "second device, target " << target;
    }
  }
  if (!two) std::printf("one GPU visible: the second-device comparison was not run\n");
}

// One charge off the lattice: the map is C q / max(r, r_min) to the target.
TEST_F(MsmCuda, OneChargeGivesQOverR) {
  const System system = make_system({make_atom(0.37, -0.21, 0.55, 1.0)});
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{41, 41, 41};
  const GridSpec grid = make_grid(system, request);
  const std::vector<double> reference = reference_grid(system, grid, Physics{});
  for (const double target : kMsmTargets) {
    auto gpu = gpu_msm(msm_parameters(target));
    const std::vector<float> map = compute_grid(*gpu, system, grid, Physics{});
    const double error = relative_rms(map, reference);
    std::printf("one charge, target %.0e: rel RMS %.3e\n", target, error);
    EXPECT_LE(error, target);
  }
}

// --- Determinism -------------------------------------------------------------------------------

// Slabs that cut the kernel's 8-plane tiles anywhere, and a grid that is no multiple of 8.
TEST_F(MsmCuda, SameBitsForAnySlabSplit) {
  const System system = protein_like_system(1500, 7);
  const GridSpec grid = make_spec({35, 29, 33}, 1.1, {-20.0, -17.0, -19.0});
  for (const double target : {1e-2, 1e-4}) {
    const MsmParameters parameters = msm_parameters(target);
    auto whole_backend = gpu_msm(parameters);
    const std::vector<float> whole = compute_grid(*whole_backend, system, grid, Physics{});
    for (const std::int64_t planes : {1, 3, 5, 8, 16}) {
      auto sliced_backend = gpu_msm(parameters);
      const std::vector<float> sliced =
          compute_grid(*sliced_backend, system, grid, Physics{}, planes);
      ASSERT_EQ(0, std::memcmp(whole.data(), sliced.data(), whole.size() * sizeof(float)))
          << "target " << target << ", slabs of " << planes << " planes";
    }
    // Slabs in any order on one backend (prepared once).
    std::vector<float> backwards(grid.points());
    std::vector<StatsAccum> stats(static_cast<std::size_t>(grid.nz()));
    for (std::int64_t z = grid.nz() - 3; z > -3; z -= 3) {
      const std::int64_t begin = std::max<std::int64_t>(0, z);
      const Slab slab{begin, std::min<std::int64_t>(z + 3, grid.nz()) - begin};
      whole_backend->compute_slab(
          slab, backwards.data() + static_cast<std::size_t>(begin) * grid.plane_points(),
          stats.data() + begin);
    }
    ASSERT_EQ(0, std::memcmp(whole.data(), backwards.data(), whole.size() * sizeof(float)));
  }
}

TEST_F(MsmCuda, PlaneStatisticsAreThoseOfThePlanes) {
  const System system = protein_like_system(300, 3);
  const GridSpec grid = default_grid(system, 21);
  auto backend = gpu_msm(msm_parameters(1e-3));
  backend->prepare(system, grid, Physics{});
  std::vector<float> out(grid.points());
  std::vector<StatsAccum> planes(static_cast<std::size_t>(grid.nz()));
  backend->compute_slab({0, grid.nz()}, out.data(), planes.data());
  for (std::int64_t z = 0; z < grid.nz(); ++z) {
    const std::size_t n = grid.plane_points();
    const StatsAccum expected = cpu_statistics(out.data() + static_cast<std::size_t>(z) * n, n);
    const StatsAccum& got = planes[static_cast<std::size_t>(z)];
    EXPECT_EQ(got.min, expected.min) << z;
    EXPECT_EQ(got.max, expected.max) << z;
    EXPECT_EQ(got.count, expected.count) << z;
    EXPECT_NEAR(
        got.sum, expected.sum,
        1e-12 * static_cast<double>(n) * std::fabs(expected.max) + 1e-9 * std::fabs(expected.sum))
        << z;
  }
}

TEST_F(MsmCuda, TwoGpusGiveTheSameBitsAsOne) {
  if (cuda::cuda_devices().size() < 2) GTEST_SKIP() << "fewer than 2 GPUs visible";
  const System system = protein_like_system(3000, 11);
  const GridSpec grid = default_grid(system, 48);
  const MsmParameters parameters = msm_parameters(1e-3);
  auto one = gpu_msm(parameters, 0);
  const std::vector<float> whole = compute_grid(*one, system, grid, Physics{});
  // Planes alternating between the two devices, slabs of 16 (the pipeline's plane multiple).
  auto first = gpu_msm(parameters, 0), second = gpu_msm(parameters, 1);
  first->prepare(system, grid, Physics{});
  second->prepare(system, grid, Physics{});
  std::vector<float> shared(grid.points());
  std::vector<StatsAccum> stats(static_cast<std::size_t>(grid.nz()));
  int turn = 0;
  for (std::int64_t z = 0; z < grid.nz(); z += 16, ++turn) {
    const Slab slab{z, std::min<std::int64_t>(16, grid.nz() - z)};
    (turn % 2 ? *second : *first)
        .compute_slab(slab, shared.data() + static_cast<std::size_t>(z) * grid.plane_points(),
                      stats.data() + z);
  }
  ASSERT_EQ(0, std::memcmp(whole.data(), shared.data(), whole.size() * sizeof(float)));
  // The whole map on the second device alone, too.
  auto other = gpu_msm(parameters, 1);
  const std::vector<float> on_second = compute_grid(*other, system, grid, Physics{});
  ASSERT_EQ(0, std::memcmp(whole.data(), on_second.data(), whole.size() * sizeof(float)));
}

TEST_F(MsmCuda, OtherModelsAndEmptySystemsAreRefused) {
  auto backend = gpu_msm(msm_parameters(1e-3));
  const System system = protein_like_system(100, 1);
  const GridSpec grid = default_grid(system, 17);
  Physics screened;
  screened.ionic_strength = 0.15;
  EXPECT_THROW(backend->prepare(system, grid, screened), UsageError);
  EXPECT_THROW(backend->prepare(System{}, grid, Physics{}), UsageError);
  std::vector<float> out(grid.plane_points());
  StatsAccum stats;
  auto fresh = gpu_msm(msm_parameters(1e-3));
  EXPECT_THROW(fresh->compute_slab({0, 1}, out.data(), &stats), UsageError);
}

// --- Timing (printed, not asserted) -------------------------------------------------------------

/// A fixed-seed sample of a grid's points, ascending, and the values a run leaves there.
struct Sample {
  std::vector<std::size_t> index;
  std::vector<Vec3> points;
  std::vector<float> values;
};

Sample sample_points(const GridSpec& grid, std::size_t count, std::uint32_t seed) {
  Sample s;
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;  // LCG, fixed seed
    s.index.push_back(static_cast<std::size_t>((state >> 17) % grid.points()));
  }
  std::sort(s.index.begin(), s.index.end());
  s.index.erase(std::unique(s.index.begin(), s.index.end()), s.index.end());
  const std::size_t plane = grid.plane_points();
  const auto nx = static_cast<std::size_t>(grid.nx());
  for (const std::size_t p : s.index)
    s.points.push_back(grid.point(static_cast<std::int64_t>(p % nx),
                                  static_cast<std::int64_t>((p % plane) / nx),
                                  static_cast<std::int64_t>(p / plane)));
  s.values.assign(s.index.size(), 0.0f);
  return s;
}

/// The peak resident memory of this process (VmHWM), in GiB (0 where /proc is absent).
double peak_rss_gib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0.0;
  char line[256];
  double kib = 0.0;
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::strtod(line + 6, nullptr);
  std::fclose(f);
  return kib / (1024.0 * 1024.0);
}

/// Prepare and the slabs (kernel, plane statistics, download) of `grid` in slabs of `planes`
/// into one reusable pinned slab buffer (never the whole map: 2048^3 floats are 32 GiB); keeps
/// the values of `sample`'s points. Prints the split, prepare's GPU steps for an MSM backend.
void timed_run(PotentialBackend& backend, const System& system, const GridSpec& grid,
               std::int64_t planes, const char* label, Sample* sample = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  backend.prepare(system, grid, Physics{});
  const double prepare = seconds_since(t0);
  const std::size_t plane = grid.plane_points();
  std::unique_ptr<HostBuffer> buffer =
      backend.allocate_host(plane * static_cast<std::size_t>(planes));
  std::vector<StatsAccum> stats(static_cast<std::size_t>(planes));
  std::size_t next = 0;  // the first sample point not yet seen
  double copy = 0.0;
  const auto t1 = std::chrono::steady_clock::now();
  for (std::int64_t z = 0; z < grid.nz(); z += planes) {
    const Slab slab{z, std::min(planes, grid.nz() - z)};
    backend.compute_slab(slab, buffer->data(), stats.data());
    const auto c0 = std::chrono::steady_clock::now();
    const std::size_t first = static_cast<std::size_t>(z) * plane;
    const std::size_t end = first + static_cast<std::size_t>(slab.z_count) * plane;
    for (; sample != nullptr && next < sample->index.size() && sample->index[next] < end; ++next)
      sample->values[next] = buffer->data()[sample->index[next] - first];
    copy += seconds_since(c0);
  }
  const double compute = seconds_since(t1) - copy;
  const BackendTimings t = backend.timings();
  std::printf(
      "%s: %zu atoms x %lldx%lldx%lld (%.2e points) on %s\n  prepare %.3f s, slabs %.3f s = "
      "kernel %.3f + plane stats %.3f + download %.3f; %.3e points/s (kernel); total %.3f s\n",
      label, system.atoms.size(), static_cast<long long>(grid.nx()),
      static_cast<long long>(grid.ny()), static_cast<long long>(grid.nz()),
      static_cast<double>(grid.points()), backend.device_name().c_str(), prepare, compute,
      t.kernels, t.statistics, t.download, static_cast<double>(grid.points()) / t.kernels,
      prepare + compute);
  try {
    const cuda::MsmCudaPrepareTimings p = cuda::msm_cuda_prepare_timings(backend);
    std::printf(
        "  prepare steps: host (convert + upload) %.3f s; GPU: binning %.4f, anterpolation "
        "%.4f, restriction %.4f, level sums %.4f, prolongation %.4f s; %d levels, %.3e "
        "lattice points; device peak estimate %.2f GiB\n",
        p.host, p.binning, p.anterpolation, p.restriction, p.level_sums, p.prolongation, p.levels,
        static_cast<double>(p.lattice_points),
        static_cast<double>(p.device_peak_bytes) / (1024.0 * 1024.0 * 1024.0));
  } catch (const UsageError&) {  // not an MSM backend
  }
}

TEST_F(MsmCuda, TimingPrintout) {
  const System system = protein_like_system(100000, 5);
  const GridSpec grid = default_grid(system, 193);
  for (const double target : {1e-2, 1e-3, 1e-4}) {
    auto backend = gpu_msm(msm_parameters(target));
    const std::string label = "msm " + describe(msm_parameters(target));
    timed_run(*backend, system, grid, 32, label.c_str());
  }
  BackendOptions options;
  auto exact = cuda::make_cuda_backend(options);
  timed_run(*exact, system, grid, 32, "exact cuda");
}

// The goals: 1.5e6 atoms x 464^3 at 1e-3 in <= 1 s on one H100, and 1e8 atoms x 2048^3
// (DCS_MSM_BENCH_ATOMS=100000000 DCS_MSM_BENCH_GRID=2048) in <= 60 s. Prints the times and the
// error against the exact CUDA backend at 4096 sampled points (relative RMS); the host holds
// the atoms, one slab and the sample, never the map.
TEST_F(MsmCuda, BenchTiledMolecules) {
  const char* env = std::getenv("DCS_MSM_BENCH");
  if (env == nullptr || std::strcmp(env, "1") != 0)
    GTEST_SKIP() << "set DCS_MSM_BENCH=1 (bench/msm_gpu_bench.sh)";
  const std::size_t atoms = std::getenv("DCS_MSM_BENCH_ATOMS")
                                ? std::strtoull(std::getenv("DCS_MSM_BENCH_ATOMS"), nullptr, 10)
                                : 1500000;
  const std::int64_t n = std::getenv("DCS_MSM_BENCH_GRID")
                             ? std::strtoll(std::getenv("DCS_MSM_BENCH_GRID"), nullptr, 10)
                             : 464;
  const double target = std::getenv("DCS_MSM_BENCH_ERROR")
                            ? std::strtod(std::getenv("DCS_MSM_BENCH_ERROR"), nullptr)
                            : 1e-3;
  const double density = std::getenv("DCS_MSM_BENCH_DENSITY")
                             ? std::strtod(std::getenv("DCS_MSM_BENCH_DENSITY"), nullptr)
                             : 0.1;
  const auto b0 = std::chrono::steady_clock::now();
  const System system = tiled_molecules(atoms, density);
  const GridSpec grid = default_grid(system, n);
  Vec3 lo = system.atoms[0].position, hi = lo;
  for (const Atom& atom : system.atoms)
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], atom.position[d]);
      hi[d] = std::max(hi[d], atom.position[d]);
    }
  std::printf(
      "tiled: %zu atoms in %.0f x %.0f x %.0f A (%.3f atoms/A^3), grid spacing %.3f A; built in "
      "%.1f s, %.2f GiB of Atom records\n",
      system.atoms.size(), hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2],
      static_cast<double>(system.atoms.size()) /
          ((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2])),
      grid.spacing[0], seconds_since(b0),
      static_cast<double>(system.atoms.size() * sizeof(Atom)) / (1024.0 * 1024.0 * 1024.0));
  Sample sample = sample_points(grid, 4096, 12345);
  {
    auto backend = gpu_msm(msm_parameters(target));
    const std::string label = "msm " + describe(msm_parameters(target));
    timed_run(*backend, system, grid, 32, label.c_str(), &sample);
  }
  // Accuracy at the sampled points against the exact CUDA backend.
  BackendOptions options;
  auto exact = cuda::make_cuda_backend(options);
  const auto e0 = std::chrono::steady_clock::now();
  exact->prepare_points(system, Physics{});
  std::vector<float> reference(sample.points.size());
  exact->compute_points(sample.points.data(), nullptr, sample.points.size(), reference.data());
  std::printf(
      "  rel RMS vs exact CUDA at %zu sampled points: %.3e (target %.0e; exact took %.1f s); "
      "host peak RSS %.2f GiB\n",
      sample.points.size(), relative_rms(sample.values, reference), target, seconds_since(e0),
      peak_rss_gib());
}

}  // namespace
}  // namespace dcs::test
