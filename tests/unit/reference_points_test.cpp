// PotentialBackend::reference_points()'s default (the CPU backends, and the CPU msm backend that
// wraps one): reference_potential() itself, the same bits, on the threads the caller passes.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/backend.hpp"
#include "dcs/msm.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

TEST(ReferencePoints, TheDefaultIsReferencePotential) {
  const System system = random_atoms(300, {1.0, 2.0, 3.0}, 20.0, 11);
  std::vector<Vec3> points;
  for (int i = 0; i < 101; ++i)
    points.push_back({-12.0 + 0.24 * i, 2.0 + 0.1 * (i % 7), 3.0 - 0.05 * (i % 11)});
  points.push_back(system.atoms[5].position);  // on an atom: the r_min clamp
  Physics screened;
  screened.ionic_strength = 0.1;
  screened.dielectric = kWaterDielectric;
  Physics distance;
  distance.dielectric_model = DielectricModel::kDistance;
  distance.dielectric = 4.0;
  BackendOptions options;
  options.threads = 3;
  std::vector<std::unique_ptr<PotentialBackend>> backends;
  backends.push_back(make_cpu_reference_backend(options));
  backends.push_back(make_cpu_fast_backend(options));
  backends.push_back(
      make_msm_backend(make_cpu_fast_backend(options), msm_parameters(1e-3), options));
  for (const Physics& physics : {Physics{}, screened, distance}) {
    std::vector<double> expected(points.size());
    reference_potential(system, physics, points.data(), points.size(), expected.data(), 2);
    for (auto& backend : backends) {
      SCOPED_TRACE(backend->name());
      std::vector<double> out(points.size(), -1.0);
      const std::string where =
          backend->reference_points(system, physics, points.data(), points.size(), out.data(), 2);
      EXPECT_EQ(std::memcmp(out.data(), expected.data(), out.size() * sizeof(double)), 0);
      EXPECT_EQ(where, "CPU, 2 threads");
    }
  }
}

}  // namespace
}  // namespace dcs::test
