// The periodic (Ewald) method on CUDA devices (dcs/cuda/ewald_backend.hpp) against the CPU ewald
// backend and the float64 Ewald sum: a single charge in a cubic box, a net-charged set in a
// truncated octahedron (triclinic, the grid its bounding box), lysozyme (data/2lzt.pqr) in a box,
// at points and at atoms (½ Σ q φ against the CPU's); the same bits for any slab split, run after
// run, for any point batch and on a second GPU. Skips, saying why, without a GPU.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/backend.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/cuda/ewald_backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/periodic/ewald_backend.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

std::unique_ptr<PotentialBackend> gpu_ewald(int device = 0, double target = 1e-5) {
  BackendOptions options;
  options.device = device;
  return cuda::make_ewald_cuda_backend(cuda::make_cuda_backend(options),
                                       periodic::ewald_settings(target), options);
}

std::unique_ptr<PotentialBackend> cpu_ewald(double target = 1e-5) {
  BackendOptions options;
  return periodic::make_ewald_backend(make_cpu_fast_backend(options),
                                      periodic::ewald_settings(target), options);
}

std::vector<float> map_of(PotentialBackend& backend, const System& system, const GridSpec& grid,
                          const std::vector<Slab>& slabs) {
  const Physics physics;
  backend.prepare(system, grid, physics);
  std::vector<float> map(grid.points());
  std::vector<StatsAccum> stats(static_cast<std::size_t>(grid.nz()));
  for (const Slab& slab : slabs)
    backend.compute_slab(slab,
                         map.data() + static_cast<std::size_t>(slab.z_begin) * grid.plane_points(),
                         stats.data());
  return map;
}

/// One set of points through the GPU and CPU backends (both prepared for points here), and
/// ½ Σ q φ over the system's atoms, which are the first system.size() points.
struct GpuAndCpu {
  std::vector<float> gpu, cpu;
  double e_gpu = 0.0, e_cpu = 0.0;
};

GpuAndCpu at_points(PotentialBackend& gpu, PotentialBackend& cpu, const System& system,
                    const std::vector<Vec3>& points, const std::vector<std::uint32_t>& skip) {
  const Physics physics;
  gpu.prepare_points(system, physics);
  cpu.prepare_points(system, physics);
  GpuAndCpu v{std::vector<float>(points.size()), std::vector<float>(points.size())};
  gpu.compute_points(points.data(), skip.data(), points.size(), v.gpu.data());
  cpu.compute_points(points.data(), skip.data(), points.size(), v.cpu.data());
  for (std::size_t i = 0; i < system.size(); ++i) {
    v.e_gpu += 0.5 * system.atoms[i].charge * v.gpu[i];
    v.e_cpu += 0.5 * system.atoms[i].charge * v.cpu[i];
  }
  return v;
}

std::vector<float> whole_map(PotentialBackend& backend, const System& system,
                             const GridSpec& grid) {
  return map_of(backend, system, grid, {Slab{0, grid.nz()}});
}

/// sqrt(Σ (a - b)² / Σ b²).
template <class A, class B>
double relative_rms(const std::vector<A>& computed, const std::vector<B>& reference) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < computed.size(); ++i) {
    const double d = static_cast<double>(computed[i]) - static_cast<double>(reference[i]);
    num += d * d;
    den += static_cast<double>(reference[i]) * static_cast<double>(reference[i]);
  }
  return std::sqrt(num / den);
}

/// A GPU and a CPU ewald backend, the GPU's map of a system on a grid and its relative RMS
/// against the CPU's map.
struct MapPair {
  std::unique_ptr<PotentialBackend> gpu, cpu;
  std::vector<float> map;
  double rms = 0.0;
};

MapPair map_pair(const System& system, const GridSpec& grid) {
  MapPair m{gpu_ewald(), cpu_ewald(), {}, 0.0};
  m.map = whole_map(*m.gpu, system, grid);
  m.rms = relative_rms(m.map, whole_map(*m.cpu, system, grid));
  return m;
}

/// The float64 Ewald sum (the run's oracle) at every `stride`-th grid point, and those points'
/// map values.
void against_reference(PotentialBackend& backend, const System& system, const GridSpec& grid,
                       const std::vector<float>& map, std::size_t stride, double bound,
                       const char* what) {
  std::vector<Vec3> points;
  std::vector<float> values;
  for (std::size_t n = 0; n < grid.points(); n += stride) {
    const auto i = static_cast<std::int64_t>(n % static_cast<std::size_t>(grid.nx()));
    const auto j = static_cast<std::int64_t>((n / static_cast<std::size_t>(grid.nx())) %
                                             static_cast<std::size_t>(grid.ny()));
    const auto k = static_cast<std::int64_t>(n / grid.plane_points());
    points.push_back(grid.point(i, j, k));
    values.push_back(map[n]);
  }
  std::vector<double> reference(points.size());
  backend.reference_points(system, Physics{}, points.data(), points.size(), reference.data(), 0);
  const double rms = relative_rms(values, reference);
  std::printf("%s: GPU vs float64 Ewald sum, relative RMS %.3g over %zu points\n", what, rms,
              points.size());
  EXPECT_LT(rms, bound) << what;
}

class EwaldCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::cuda_available()) GTEST_SKIP() << "no GPU: " << cuda::cuda_unavailable_reason();
  }
};

/// `n` random charges with net charge `net` (e) in `cell`, some outside it (they are wrapped).
System charged_set(std::size_t n, double net, const UnitCell& cell, std::uint64_t seed) {
  const Vec3 centre{0.5 * (cell.vectors()[0][0] + cell.vectors()[1][0] + cell.vectors()[2][0]),
                    0.5 * (cell.vectors()[0][1] + cell.vectors()[1][1] + cell.vectors()[2][1]),
                    0.5 * (cell.vectors()[0][2] + cell.vectors()[1][2] + cell.vectors()[2][2])};
  return in_cell(random_atoms(n, centre, 1.2 * cell.lengths()[0], seed), net, cell, "charged.pqr");
}

GridSpec cell_grid(const UnitCell& cell, double spacing) {
  GridRequest request;
  request.spacing = spacing;
  request.cell_box = true;
  return make_cell_grid(cell, request);
}

TEST_F(EwaldCuda, SingleChargeInACubicBox) {
  System system = make_system({make_atom(3.0, 4.0, 5.0, 1.0)});
  system.cell = UnitCell::from_lengths_angles({20.0, 20.0, 20.0}, {90.0, 90.0, 90.0});
  const GridSpec grid = cell_grid(system.cell, 1.0);
  auto gpu = gpu_ewald();
  const std::vector<float> map = whole_map(*gpu, system, grid);
  auto cpu = cpu_ewald();
  const std::vector<float> expected = whole_map(*cpu, system, grid);
  const double rms = relative_rms(map, expected);
  std::printf("single charge: GPU vs CPU ewald, relative RMS %.3g\n", rms);
  EXPECT_LT(rms, 1e-6);
  against_reference(*gpu, system, grid, map, 7, 1e-5, "single charge");
}

TEST_F(EwaldCuda, NetChargeInATruncatedOctahedron) {
  const UnitCell cell =
      UnitCell::from_lengths_angles({30.0, 30.0, 30.0}, {109.4712206, 109.4712206, 109.4712206});
  const System system = charged_set(400, 2.0, cell, 11);
  const GridSpec grid = cell_grid(cell, 1.5);
  auto [gpu, cpu, map, rms] = map_pair(system, grid);
  std::printf("truncated octahedron (%s): GPU vs CPU ewald, relative RMS %.3g\n",
              grid.describe().c_str(), rms);
  EXPECT_LT(rms, 1e-6);
  against_reference(*gpu, system, grid, map, 5, 1e-5, "truncated octahedron");
}

System lysozyme_box() {
  System system = read_pqr_fixture(std::string(DCS_SOURCE_DIR) + "/data/2lzt.pqr");
  system.cell = UnitCell::from_lengths_angles({56.0, 60.0, 64.0}, {90.0, 90.0, 90.0});
  system.source_path = "2lzt.pqr";
  return system;
}

TEST_F(EwaldCuda, LysozymeMapAndAtoms) {
  const System system = lysozyme_box();
  const GridSpec grid = cell_grid(system.cell, 1.0);
  auto [gpu, cpu, map, rms] = map_pair(system, grid);
  std::printf("2lzt (%zu atoms, %s): GPU vs CPU ewald map, relative RMS %.3g\n", system.size(),
              grid.describe().c_str(), rms);
  EXPECT_LT(rms, 1e-6);
  against_reference(*gpu, system, grid, map, 797, 1e-5, "2lzt");

  // At the atoms: own term left out, self term added; ½ Σ q φ against the CPU's.
  auto [points, skip] = points_at_atoms(system);
  points.push_back({1.0, 2.0, 3.0});
  skip.push_back(kNoAtom);
  const GpuAndCpu v = at_points(*gpu, *cpu, system, points, skip);
  const double atoms_rms = relative_rms(v.gpu, v.cpu);
  std::printf("2lzt at atoms: relative RMS %.3g; 1/2 sum q phi GPU %.9g CPU %.9g (rel %.3g)\n",
              atoms_rms, v.e_gpu, v.e_cpu, std::fabs(v.e_gpu - v.e_cpu) / std::fabs(v.e_cpu));
  EXPECT_LT(atoms_rms, 1e-6);
  EXPECT_LT(std::fabs(v.e_gpu - v.e_cpu), 1e-6 * std::fabs(v.e_cpu));
  EXPECT_LT(std::fabs(v.gpu.back() - v.cpu.back()), 1e-5 * std::fabs(v.cpu.back()));

  // Any batch of points gives the same bits.
  std::vector<float> halves(points.size());
  const std::size_t half = points.size() / 2;
  gpu->compute_points(points.data() + half, skip.data() + half, points.size() - half,
                      halves.data() + half);
  gpu->compute_points(points.data(), skip.data(), half, halves.data());
  EXPECT_EQ(std::memcmp(halves.data(), v.gpu.data(), halves.size() * sizeof(float)), 0);
}

/// AMBER tz2 frame 0 (MDAnalysisTests' truncated octahedron, 5827 atoms, net +2 e), written as a
/// PQR with its CRYST1 into $DCS_MD_DATA/tz2_frame0.pqr (the GPU machine's carry); skipped
/// without it.
TEST_F(EwaldCuda, Tz2TruncatedOctahedron) {
  const char* dir = std::getenv("DCS_MD_DATA");
  const std::string path = std::string(dir != nullptr ? dir : "") + "/tz2_frame0.pqr";
  std::ifstream in(path);
  if (dir == nullptr || !in)
    GTEST_SKIP() << "no " << path << " (MDAnalysisTests' tz2 frame 0 as a PQR)";
  std::string cryst;
  std::getline(in, cryst);
  ASSERT_EQ(cryst.rfind("CRYST1", 0), 0u) << path;
  std::istringstream fields(cryst.substr(6));
  Vec3 lengths{}, angles{};
  fields >> lengths[0] >> lengths[1] >> lengths[2] >> angles[0] >> angles[1] >> angles[2];
  System system = read_pqr_fixture(path);
  system.cell = UnitCell::from_lengths_angles(lengths, angles);
  system.source_path = path;
  ASSERT_NEAR(system.total_charge(), 2.0, 1e-4);
  const GridSpec grid = cell_grid(system.cell, 1.0);
  auto [gpu, cpu, map, rms] = map_pair(system, grid);
  std::printf("tz2 (%zu atoms, %s, %s): GPU vs CPU ewald map, relative RMS %.3g\n", system.size(),
              system.cell.describe().c_str(), grid.describe().c_str(), rms);
  EXPECT_LT(rms, 1e-6);
  against_reference(*gpu, system, grid, map, grid.points() / 300, 1e-5, "tz2");
  const auto [points, skip] = points_at_atoms(system);
  const GpuAndCpu v = at_points(*gpu, *cpu, system, points, skip);
  std::printf("tz2 at atoms: 1/2 sum q phi GPU %.9g CPU %.9g (rel %.3g)\n", v.e_gpu, v.e_cpu,
              std::fabs(v.e_gpu - v.e_cpu) / std::fabs(v.e_cpu));
  EXPECT_LT(std::fabs(v.e_gpu - v.e_cpu), 1e-6 * std::fabs(v.e_cpu));
}

TEST_F(EwaldCuda, SameBitsForAnySlabSplitRunAndDevice) {
  const UnitCell cell =
      UnitCell::from_lengths_angles({30.0, 30.0, 30.0}, {109.4712206, 109.4712206, 109.4712206});
  const System system = charged_set(600, -3.0, cell, 5);
  GridSpec grid = cell_grid(cell, 1.3);
  auto gpu = gpu_ewald();
  const std::vector<float> whole = whole_map(*gpu, system, grid);
  const std::int64_t nz = grid.nz();
  const std::vector<float> split =
      map_of(*gpu, system, grid, {Slab{5, 11}, Slab{0, 5}, Slab{16, nz - 16}});
  EXPECT_EQ(std::memcmp(whole.data(), split.data(), whole.size() * sizeof(float)), 0);
  auto again = gpu_ewald();
  const std::vector<float> rerun = whole_map(*again, system, grid);
  EXPECT_EQ(std::memcmp(whole.data(), rerun.data(), whole.size() * sizeof(float)), 0);
  if (cuda::cuda_devices().size() < 2) {
    std::printf("one GPU: the second-device comparison is not run\n");
    return;
  }
  auto second = gpu_ewald(1);
  const std::vector<float> other = map_of(*second, system, grid, {Slab{0, 8}, Slab{8, nz - 8}});
  EXPECT_EQ(std::memcmp(whole.data(), other.data(), whole.size() * sizeof(float)), 0);
}

TEST_F(EwaldCuda, RefusesWhatItCannotCompute) {
  System system = make_system({make_atom(1.0, 1.0, 1.0, 1.0)});
  auto gpu = gpu_ewald();
  EXPECT_THROW(gpu->prepare(system, make_spec({8, 8, 8}, 1.0, {0, 0, 0}), Physics{}), UsageError);
  EXPECT_THROW(gpu->compute_slab(Slab{0, 1}, nullptr, nullptr), UsageError);
}

}  // namespace
}  // namespace dcs::test
