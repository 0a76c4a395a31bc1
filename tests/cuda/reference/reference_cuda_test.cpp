// The CUDA backend's reference_points() (kernels/src/reference/) against the CPU's float64
// reference_potential(), for every physics model the CPU supports (Coulomb in each unit,
// Debye-Hueckel, eps = k r, the ChimeraX and PyMOL presets), on data/2lzt.pqr at random points
// and at points on, near and between atoms (the r_min clamp); the same bits on two calls, for
// any split of the points, through the msm CUDA backend's forwarding, and on two GPUs.
//
// Tolerance. Each term is the CPU's to the bit (reference_kernel.cu: same expression, IEEE
// sqrt and division, no FMA contraction), Debye-Hueckel's to exp2's last ulp; the sums differ
// only in the order of the additions (input order on the CPU; 256 strided partial sums and a
// tree on the GPU). Either order's rounding error is at most ~n u sum|t_i| (u = 2^-53 = 1.1e-16)
// and in practice ~sqrt(n) u sum|t_i| (5e-15 for 2lzt's 1960 atoms), so a point's difference is
// held to 1e-13 * sum_i |t_i| (t_i each atom's term times the factor): ~20x the expected size,
// and 10^5 below any real mistake (a float32 term, a lost atom, a different clamp).
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/backend.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/cuda/msm_backend.hpp"
#include "dcs/msm.hpp"
#include "dcs/presets.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

constexpr double kSumTolerance = 1e-13;

struct Model {
  std::string name;
  Physics physics;
};

std::vector<Model> models() {
  std::vector<Model> list;
  list.push_back({"coulomb kT/e", Physics{}});
  Physics kcal;
  kcal.unit = Unit::KcalPerMolPerE;
  kcal.dielectric = 2.0;
  kcal.min_distance = 1.5;  // a wide clamp: many random points fall inside it
  list.push_back({"coulomb kcal/mol/e eps 2, r_min 1.5", kcal});
  Physics screened;
  screened.ionic_strength = 0.15;
  screened.dielectric = kWaterDielectric;
  list.push_back({"debye-hueckel 0.15 M", screened});
  Physics distance;
  distance.dielectric_model = DielectricModel::kDistance;
  distance.dielectric = 4.0;
  list.push_back({"eps = 4r", distance});
  list.push_back({"preset chimerax", find_preset("chimerax").physics});
  list.push_back({"preset pymol", find_preset("pymol").physics});
  return list;
}

std::unique_ptr<PotentialBackend> gpu(int device = 0) {
  BackendOptions options;
  options.device = device;
  return cuda::make_cuda_backend(options);
}

/// factor * sum_i |q_i g(r_i)| at `point`: the size the sums' rounding scales with.
double absolute_sum(const System& system, const Physics& physics, const Vec3& point) {
  const PairTerm term = pair_term(physics);
  const double min_r2 = physics.min_distance * physics.min_distance;
  double sum = 0.0;
  for (const Atom& atom : system.atoms) {
    const double dx = point[0] - atom.position[0], dy = point[1] - atom.position[1],
                 dz = point[2] - atom.position[2];
    const double r2 = dx * dx + dy * dy + dz * dz, q = std::fabs(atom.charge);
    switch (term.kind) {
      case PairKind::kCoulomb: sum += coulomb_term(q, r2, min_r2, CoulombPair{}); break;
      case PairKind::kInverseSquare: sum += coulomb_term(q, r2, min_r2, InverseSquarePair{}); break;
      case PairKind::kScreened:
        sum +=
            coulomb_term(q, r2, min_r2, ScreenedPair<double>{screened_exponent_scale(term.kappa)});
        break;
    }
  }
  return std::fabs(coulomb_factor(physics)) * sum;
}

System lysozyme() { return read_pqr_fixture(std::string(DCS_SOURCE_DIR) + "/data/2lzt.pqr"); }

/// Random points over the atoms' box plus 10 Å, then for every 7th atom the points at it, at
/// 0.5, 0.999999, 1, 1.000001 and 2 r_min from it along each axis, 1e-9 Å from it, and halfway
/// to the next atom (a neighbour in the file, usually bonded). 3001 random points: not a
/// multiple of the kernel's 8 points per block.
std::vector<Vec3> probe_points(const System& system, double min_distance) {
  Vec3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
  for (const Atom& atom : system.atoms)
    for (std::size_t d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], atom.position[d]);
      hi[d] = std::max(hi[d], atom.position[d]);
    }
  std::mt19937_64 rng(20261126);
  std::vector<Vec3> points;
  for (int i = 0; i < 3001; ++i) {
    Vec3 p;
    for (std::size_t d = 0; d < 3; ++d)
      p[d] = std::uniform_real_distribution<double>(lo[d] - 10.0, hi[d] + 10.0)(rng);
    points.push_back(p);
  }
  for (std::size_t a = 0; a + 1 < system.atoms.size(); a += 7) {
    const Vec3 c = system.atoms[a].position, next = system.atoms[a + 1].position;
    points.push_back(c);
    for (double f : {0.5, 0.999999, 1.0, 1.000001, 2.0})
      for (std::size_t d = 0; d < 3; ++d) {
        Vec3 p = c;
        p[d] += f * min_distance;
        points.push_back(p);
      }
    points.push_back({c[0] + 1e-9, c[1], c[2]});
    points.push_back({0.5 * (c[0] + next[0]), 0.5 * (c[1] + next[1]), 0.5 * (c[2] + next[2])});
  }
  return points;
}

std::vector<double> cpu_reference(const System& system, const Physics& physics,
                                  const std::vector<Vec3>& points) {
  std::vector<double> out(points.size());
  reference_potential(system, physics, points.data(), points.size(), out.data());
  return out;
}

std::vector<double> gpu_reference(PotentialBackend& backend, const System& system,
                                  const Physics& physics, const std::vector<Vec3>& points) {
  std::vector<double> out(points.size(), std::nan(""));
  backend.reference_points(system, physics, points.data(), points.size(), out.data(), 0);
  return out;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

class ReferenceCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::cuda_available()) GTEST_SKIP() << "no GPU: " << cuda::cuda_unavailable_reason();
  }
};

TEST_F(ReferenceCuda, MatchesTheCpuForEveryModelOnLysozyme) {
  const System system = lysozyme();
  auto backend = gpu();
  for (const Model& model : models()) {
    SCOPED_TRACE(model.name);
    const std::vector<Vec3> points = probe_points(system, model.physics.min_distance);
    const std::vector<double> cpu = cpu_reference(system, model.physics, points);
    const std::vector<double> dev = gpu_reference(*backend, system, model.physics, points);
    double worst = 0.0;  // |difference| / (factor * sum |t_i|), the largest
    std::size_t identical = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      ASSERT_TRUE(std::isfinite(dev[i])) << "point " << i;
      const double scale = absolute_sum(system, model.physics, points[i]);
      const double ratio = std::fabs(dev[i] - cpu[i]) / scale;
      worst = std::max(worst, ratio);
      identical += dev[i] == cpu[i];
      EXPECT_LE(ratio, kSumTolerance)
          << "point " << i << " (" << points[i][0] << ", " << points[i][1] << ", " << points[i][2]
          << "): GPU " << dev[i] << ", CPU " << cpu[i];
    }
    std::printf("%-40s %zu points: max |GPU - CPU| / sum|t| = %.2e, %zu identical\n",
                model.name.c_str(), points.size(), worst, identical);
  }
}

/// One atom: the sum is one term on both sides, so every value is the CPU's to the bit on an
/// x86-64 host (no FMA in the CPU reference there), to exp2's last ulp for Debye-Hueckel: points
/// at the atom, inside, on and outside r_min are clamped exactly as on the CPU.
TEST_F(ReferenceCuda, OneAtomIsTheCpuTermOnAndNearTheClamp) {
  const System system = make_system({make_atom(1.25, -3.5, 7.0, -0.834)});
  auto backend = gpu();
  for (const Model& model : models()) {
    SCOPED_TRACE(model.name);
    const double r_min = model.physics.min_distance;
    std::vector<Vec3> points{{1.25, -3.5, 7.0}, {1.25 + 1e-12, -3.5, 7.0}};
    for (double f : {0.25, 0.5, 0.9999999, 1.0, 1.0000001, 1.5, 3.0, 100.0})
      for (std::size_t d = 0; d < 3; ++d) {
        Vec3 p = system.atoms[0].position;
        p[d] += (d == 1 ? -f : f) * r_min;
        points.push_back(p);
      }
    points.push_back({std::nan(""), 0.0, 0.0});  // NaN in, NaN out on both
    const std::vector<double> cpu = cpu_reference(system, model.physics, points);
    const std::vector<double> dev = gpu_reference(*backend, system, model.physics, points);
    const bool screened = pair_term(model.physics).kind == PairKind::kScreened;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (std::isnan(cpu[i])) {
        EXPECT_TRUE(std::isnan(dev[i])) << "point " << i;
        continue;
      }
#if defined(__x86_64__)
      if (!screened) {
        EXPECT_EQ(std::bit_cast<std::uint64_t>(dev[i]), std::bit_cast<std::uint64_t>(cpu[i]))
            << "point " << i << ": GPU " << dev[i] << ", CPU " << cpu[i];
        continue;
      }
#endif
      EXPECT_LE(std::fabs(dev[i] - cpu[i]), 1e-15 * std::fabs(cpu[i]))  // a few ulp of exp2
          << "point " << i << ": GPU " << dev[i] << ", CPU " << cpu[i];
    }
    // Inside r_min every point is the clamped value, the same bits as at the atom itself.
    EXPECT_EQ(dev[0], dev[1]);
    EXPECT_EQ(dev[0], dev[2]);  // 0.25 r_min along x
  }
}

TEST_F(ReferenceCuda, SameBitsOnEveryCallAndForAnySplit) {
  const System system = lysozyme();
  Physics physics;
  physics.ionic_strength = 0.15;
  physics.dielectric = kWaterDielectric;
  const std::vector<Vec3> points = probe_points(system, physics.min_distance);
  auto backend = gpu();
  const std::vector<double> first = gpu_reference(*backend, system, physics, points);
  const std::vector<double> second = gpu_reference(*backend, system, physics, points);
  EXPECT_TRUE(same_bits(first, second)) << "two calls differ";
  // Split at 1001 (not a multiple of the 8 points per block): values do not depend on the call.
  std::vector<double> split(points.size());
  const std::size_t cut = 1001;
  backend->reference_points(system, physics, points.data(), cut, split.data(), 0);
  backend->reference_points(system, physics, points.data() + cut, points.size() - cut,
                            split.data() + cut, 0);
  EXPECT_TRUE(same_bits(first, split)) << "splitting the points changed values";
  // A fresh backend (a new context's allocations) gives the same bits too.
  EXPECT_TRUE(same_bits(first, gpu_reference(*gpu(), system, physics, points)));
}

TEST_F(ReferenceCuda, TheMsmBackendForwardsToItsExactBackend) {
  const System system = lysozyme();
  const Physics physics;
  const std::vector<Vec3> points = probe_points(system, physics.min_distance);
  BackendOptions options;
  auto msm =
      cuda::make_msm_cuda_backend(cuda::make_cuda_backend(options), msm_parameters(1e-3), options);
  std::vector<double> out(points.size());
  const std::string where =
      msm->reference_points(system, physics, points.data(), points.size(), out.data(), 0);
  EXPECT_TRUE(same_bits(out, gpu_reference(*gpu(), system, physics, points)));
  EXPECT_EQ(where.find("CPU"), std::string::npos) << where;
  std::printf("msm backend's reference ran on: %s\n", where.c_str());
}

TEST_F(ReferenceCuda, SameBitsOnTwoGpus) {
  if (cuda::cuda_devices().size() < 2) GTEST_SKIP() << "one GPU";
  const System system = lysozyme();
  for (const Model& model : models()) {
    SCOPED_TRACE(model.name);
    const std::vector<Vec3> points = probe_points(system, model.physics.min_distance);
    EXPECT_TRUE(same_bits(gpu_reference(*gpu(0), system, model.physics, points),
                          gpu_reference(*gpu(1), system, model.physics, points)));
  }
}

TEST_F(ReferenceCuda, EdgeCases) {
  auto backend = gpu();
  const Physics physics;
  // No points: nothing written, nothing thrown.
  const System one = make_system({make_atom(0, 0, 0, 1)});
  double untouched = 42.0;
  backend->reference_points(one, physics, nullptr, 0, &untouched, 0);
  EXPECT_EQ(untouched, 42.0);
  // No atoms: zeros, as reference_potential() gives.
  const System none = make_system({});
  const std::vector<Vec3> points{{0, 0, 0}, {1, 2, 3}};
  const std::vector<double> zero = gpu_reference(*backend, none, physics, points);
  EXPECT_TRUE(same_bits(zero, cpu_reference(none, physics, points)));
  EXPECT_EQ(zero[0], 0.0);
}

/// 2e5 atoms (782 strided atoms per thread) at 4096 points: timed, and checked against the CPU
/// at 64 of them.
TEST_F(ReferenceCuda, ManyAtomsTimedAndChecked) {
  const System system = protein_like_system(200000, 7);
  const Physics physics;
  std::vector<Vec3> points;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> coordinate(-40.0, 40.0);
  for (int i = 0; i < 4096; ++i)
    points.push_back({coordinate(rng), coordinate(rng), coordinate(rng)});
  auto backend = gpu();
  gpu_reference(*backend, system, physics, {points[0]});  // warm-up
  const auto start = std::chrono::steady_clock::now();
  const std::vector<double> dev = gpu_reference(*backend, system, physics, points);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "%zu atoms x %zu points in %.4f s (%.3g pair evaluations/s, float64, with upload) "
      "on %s\n",
      system.size(), points.size(), seconds,
      static_cast<double>(system.size() * points.size()) / seconds, backend->device_name().c_str());
  const std::vector<Vec3> some(points.begin(), points.begin() + 64);
  const std::vector<double> cpu = cpu_reference(system, physics, some);
  for (std::size_t i = 0; i < some.size(); ++i)
    EXPECT_LE(std::fabs(dev[i] - cpu[i]), kSumTolerance * absolute_sum(system, physics, some[i]))
        << "point " << i;
}

}  // namespace
}  // namespace dcs::test
