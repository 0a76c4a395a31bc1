// The CPU backends under the shared test bodies (tests/support/backend_test_bodies.hpp): one
// instance per CPU potential variant of the table (dcs/variants.hpp), ISA-specific kernels
// skipped where this CPU lacks the instruction set. Below them, what only the CPU backends do.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend_test_bodies.hpp"
#include "dcs/backend.hpp"
#include "dcs/error.hpp"
#include "dcs/variants.hpp"
#include "fast_kernels.hpp"
#include "points_test_bodies.hpp"

namespace dcs::test {
namespace {

/// One case per CPU potential variant of the table, table order.
std::vector<BackendCase> cpu_backend_cases() {
  std::vector<BackendCase> cases;
  for (const Variant& row : kVariantTable) {
    if (row.kind != VariantKind::Potential || row.backend == BackendKind::Cuda) continue;
    BackendCase c;
    c.label = test_label(std::string(row.name));
    c.backend = std::string(backend_name(row.backend));
    c.kernel = std::string(row.name);
    if (row.backend == BackendKind::CpuReference) {
      c.create = [](BackendOptions options) { return make_cpu_reference_backend(options); };
      // float64 sums rounded once to float: 2^-24 plus a little.
      c.point_tolerance = c.map_tolerance = 1.2e-7;
    } else {
      c.create = [](BackendOptions options) { return make_cpu_fast_backend(options); };
      const cpu_fast::FastKernel& kernel = cpu_fast::find_fast_kernel(row.name);
      if (!kernel.automatic && !cpu_fast::isa_supported(kernel.isa))
        c.unavailable = [] { return std::string("this CPU lacks the instruction set"); };
      c.point_tolerance = 1e-6;  // Newton-refined rsqrt estimate or 1/sqrt: a few ulp
      c.map_tolerance = kRelativeTolerance;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cpu, PointsTest, ::testing::ValuesIn(cpu_backend_cases()),
                         backend_case_name);
INSTANTIATE_TEST_SUITE_P(Cpu, BackendTest, ::testing::ValuesIn(cpu_backend_cases()),
                         backend_case_name);

// --- What only the CPU backends do
// ----------------------------------------------------------------

TEST(FastBackend, RejectsUnknownKernelAndReductionNamingTheValidOnes) {
  BackendOptions options;
  options.kernel = "warp-drive";
  try {
    make_cpu_fast_backend(options);
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("simd"), std::string::npos) << error.what();
  }
  options.kernel.clear();
  options.reduction = "tree";
  EXPECT_THROW(make_cpu_fast_backend(options), UsageError);
  options.reduction = "cpu-serial";
  EXPECT_EQ(make_cpu_fast_backend(options)->reduction_name(), "cpu-serial");
}

TEST(FastBackend, DefaultKernelIsSimdAndNamesTheIsa) {
  const auto backend = make_cpu_fast_backend(BackendOptions{});
  EXPECT_EQ(backend->kernel_name(), "simd");
  const std::string device = backend->device_name();
  EXPECT_TRUE(device.find("AVX-512") != std::string::npos ||
              device.find("AVX2") != std::string::npos ||
              device.find("portable") != std::string::npos)
      << device;
}

TEST(FastBackend, MinDistanceBelowTheLimitsIsRefusedBeforeComputing) {
  Physics physics;
  physics.min_distance = 1e-30;  // once accepted; now refused before computing
  EXPECT_THROW(validate(physics), UsageError);
  EXPECT_THROW(make_cpu_fast_backend(BackendOptions{})
                   ->prepare(make_system({make_atom(0, 0, 0, 1)}),
                             make_spec({3, 3, 3}, 1.0, {0, 0, 0}), physics),
               UsageError);
}

TEST(ReferenceBackend, RejectsOtherKernels) {
  BackendOptions options;
  options.kernel = "simd";
  EXPECT_THROW(make_cpu_reference_backend(options), UsageError);
}

TEST(ReferenceBackend, RejectsOtherReductions) {
  BackendOptions options;
  options.reduction = "warp-shuffle";
  EXPECT_THROW(make_cpu_reference_backend(options), UsageError);
  options.reduction = "cpu-serial";
  EXPECT_EQ(make_cpu_reference_backend(options)->reduction_name(), "cpu-serial");
}

}  // namespace
}  // namespace dcs::test
