// Frames per second of the periodic method on one GPU (bench/periodic_gpu_bench.sh), run only
// with DCS_EWALD_BENCH=1: N random charges (±0.5 e, neutral) at 0.1 atoms/Å³ in a cubic cell,
// the map over the cell at 1 Å, several frames (each a fresh prepare: the images binned, PME
// solved, then every slab computed, reduced and downloaded into one host map). Printed: each
// step's time, frames/s, the real-space pairs within the cutoff and the pair evaluations the
// tiles made, against two ceilings measured in the same run: the exact CUDA kernel's pair rate
// (rsqrt, no erfc) on the same atoms and one D2Z + Z2D pair of cuFFT on the same mesh (inside
// `pme`). No assertion on times.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/backend.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/cuda/ewald_backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/periodic/ewald_backend.hpp"
#include "dcs/periodic/ewald_parameters.hpp"
#include "dcs/timer.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

System random_box(std::size_t atoms, double side, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, side);
  System system;
  system.atoms.reserve(atoms);
  for (std::size_t i = 0; i < atoms; ++i)
    system.atoms.push_back(make_atom(u(rng), u(rng), u(rng), i % 2 == 0 ? 0.5 : -0.5));
  system.cell = UnitCell::from_lengths_angles({side, side, side}, {90.0, 90.0, 90.0});
  system.source_path = "bench.pqr";
  return system;
}

/// Pair evaluations per second of the exact CUDA kernel on these atoms (a 64 x 64 x 32 map).
double exact_pair_rate(const System& system) {
  BackendOptions options;
  auto exact = cuda::make_cuda_backend(options);
  const GridSpec grid = make_spec({64, 64, 32}, 1.0, {0.0, 0.0, 0.0});
  exact->prepare(system, grid, Physics{});
  std::vector<float> map(grid.points());
  std::vector<StatsAccum> stats(static_cast<std::size_t>(grid.nz()));
  exact->compute_slab({0, grid.nz()}, map.data(), stats.data());  // warm-up
  const auto start = std::chrono::steady_clock::now();
  exact->compute_slab({0, grid.nz()}, map.data(), stats.data());
  return static_cast<double>(grid.points()) * static_cast<double>(system.size()) /
         seconds_since(start);
}

TEST(EwaldCudaBench, FramesPerSecond) {
  const char* env = std::getenv("DCS_EWALD_BENCH");
  if (env == nullptr || std::string(env) != "1")
    GTEST_SKIP() << "set DCS_EWALD_BENCH=1 (bench/periodic_gpu_bench.sh)";
  if (!cuda::cuda_available()) GTEST_SKIP() << "no GPU: " << cuda::cuda_unavailable_reason();
  const std::size_t atoms = std::getenv("DCS_EWALD_BENCH_ATOMS")
                                ? std::strtoull(std::getenv("DCS_EWALD_BENCH_ATOMS"), nullptr, 10)
                                : 100000;
  const int frames =
      std::getenv("DCS_EWALD_BENCH_FRAMES") ? std::atoi(std::getenv("DCS_EWALD_BENCH_FRAMES")) : 5;
  const double density = 0.1;
  const double side = std::cbrt(static_cast<double>(atoms) / density);
  GridRequest request;
  request.spacing = 1.0;
  request.cell_box = true;
  const System first = random_box(atoms, side, 1);
  const GridSpec grid = make_cell_grid(first.cell, request);
  BackendOptions options;
  const periodic::PeriodicSettings settings = periodic::ewald_settings(1e-5);
  auto gpu = cuda::make_ewald_cuda_backend(cuda::make_cuda_backend(options), settings, options);
  const periodic::EwaldParameters parameters =
      periodic::choose_ewald_parameters(first.cell, settings);
  std::printf("%zu atoms in a %.1f A cubic cell, map %s; %s\n", atoms, side,
              grid.describe().c_str(), parameters.describe().c_str());
  std::printf("device: %s\n", gpu->device_name().c_str());
  std::vector<float> map(grid.points());
  std::vector<StatsAccum> stats(static_cast<std::size_t>(grid.nz()));
  const std::int64_t slab_planes = 32;
  double best = 1e30;
  for (int f = 0; f < frames + 1; ++f) {  // frame 0 warms up (contexts, plans)
    const System system = random_box(atoms, side, 100 + static_cast<std::uint64_t>(f));
    const auto start = std::chrono::steady_clock::now();
    gpu->prepare(system, grid, Physics{});
    const double prepared = seconds_since(start);
    for (std::int64_t z = 0; z < grid.nz(); z += slab_planes) {
      const std::int64_t count = std::min(slab_planes, grid.nz() - z);
      gpu->compute_slab({z, count}, map.data() + static_cast<std::size_t>(z) * grid.plane_points(),
                        stats.data());
    }
    const double total = seconds_since(start);
    const cuda::EwaldCudaPrepareTimings p = cuda::ewald_cuda_prepare_timings(*gpu);
    const BackendTimings t = gpu->timings();
    std::printf(
        "frame %d: %.4f s = prepare %.4f (wall %.4f: atoms converted and uploaded %.4f, binning "
        "%.4f, PME %.4f; %zu images, mesh "
        "%zu points) + slabs %.4f (kernel %.4f, statistics %.4f, download %.4f)%s\n",
        f, total, prepared, p.total, p.host, p.binning, p.pme, p.images, p.mesh, total - prepared,
        t.kernels, t.statistics, t.download, f == 0 ? " [warm-up]" : "");
    if (f > 0) best = std::min(best, total);
    if (f == frames) {
      const double within = 4.0 / 3.0 * std::numbers::pi * std::pow(parameters.real_cutoff, 3) *
                            density * static_cast<double>(grid.points());
      const double rate = exact_pair_rate(system);
      std::printf(
          "best frame %.4f s = %.1f frames/s; real space: %.3g pairs within %.1f A, kernel "
          "%.4f s = %.3g pairs/s; the exact kernel's rate on these atoms %.3g pairs/s, so the "
          "real-space pairs alone at that rate take %.4f s\n",
          best, 1.0 / best, within, parameters.real_cutoff, t.kernels, within / t.kernels, rate,
          within / rate);
    }
  }
}

}  // namespace
}  // namespace dcs::test
