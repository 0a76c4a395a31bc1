// The CUDA backend under the shared test bodies (tests/support/backend_test_bodies.hpp and
// points_test_bodies.hpp): one instance per CUDA potential kernel of the variant table
// (dcs/variants.hpp); the points tests run once, on the default kernel's case, since every
// kernel shares one points kernel (kernels/src/points). Plain C++, built
// in every configuration; each test skips, saying why, without a GPU (or in a build without
// CUDA). The CPU backends run the same bodies in tests/unit/backend_test.cpp.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend_test_bodies.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/variants.hpp"
#include "points_test_bodies.hpp"

namespace dcs::test {
namespace {

std::vector<BackendCase> cuda_backend_cases() {
  std::vector<BackendCase> cases;
  for (const Variant& row : kVariantTable) {
    if (row.kind != VariantKind::Potential || row.backend != BackendKind::Cuda) continue;
    BackendCase c;
    c.label = test_label(std::string(row.name));
    c.backend = std::string(backend_name(row.backend));
    c.kernel = std::string(row.name);
    c.create = [](BackendOptions options) { return cuda::make_cuda_backend(options); };
    c.unavailable = [] {
      return cuda::cuda_available() ? std::string() : "no GPU: " + cuda::cuda_unavailable_reason();
    };
    // One value: MUFU.RSQ ~2 ulp, the FMA-pipe cubic of the production kernels 1.1e-6, and up to
    // ~26 ulp of r^2 (1.6e-6 relative, 7.7e-7 in 1/r) from the plane expansion of their fast path.
    // coalesced (PMPP Fig. 18.10) forms a thread's m-th point as dx0 + m * 16 * h from the
    // displacement dx0 of its first point, up to 7 * 16 points away: dx0's rounding (half an ulp
    // of up to 56 A at h = 0.5) is up to 3e-5 of a 0.06 A dx near an atom, 1e-5 of 1/r.
    c.point_tolerance = row.name == "coalesced" ? 2e-5 : 3e-6;
    c.map_tolerance = kRelativeTolerance;
    // scatter adds every atom into the plane with atomicAdd, in an order that varies.
    c.deterministic = row.name != "scatter";
    c.every_model = row.name.starts_with("production") && row.name != "production-8";
    // The points kernel: MUFU.RSQ, one pair in 16 on the FMA-pipe cubic (1.1e-6; near pairs
    // always MUFU), ~1e-6 from its r^2 expansion far from the points and float offsets from a
    // group's centre: within the production kernel's 3e-6.
    c.points = row.is_default;
    cases.push_back(std::move(c));
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cuda, BackendTest, ::testing::ValuesIn(cuda_backend_cases()),
                         backend_case_name);
INSTANTIATE_TEST_SUITE_P(Cuda, PointsTest, ::testing::ValuesIn(cuda_backend_cases()),
                         backend_case_name);

}  // namespace
}  // namespace dcs::test
