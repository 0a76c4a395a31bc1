// What only the CUDA backend does: its kernel list, its option errors and its device
// description. Every kernel's accuracy, sizes, chunk boundaries, atoms on grid
// points, slabs and determinism are the shared test bodies (tests/support/
// backend_test_bodies.hpp), instantiated for every CUDA kernel in backend_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/error.hpp"
#include "dcs/stats.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::cuda_available()) GTEST_SKIP() << "no GPU: " << cuda::cuda_unavailable_reason();
  }
};

// --- The registry and the backend's contract ------------------------------------------------

TEST(CudaKernelRegistry, ListsEveryKernelOnceWithTheDefaultFirst) {
  const std::vector<VariantInfo> variants = cuda::cuda_kernel_variants();
  ASSERT_GE(variants.size(), 6u);
  EXPECT_TRUE(variants.front().is_default);
  for (const char* name : {"production", "scatter", "gather", "coarsened", "coalesced"})
    EXPECT_EQ(std::count_if(variants.begin(), variants.end(),
                            [&](const VariantInfo& v) { return v.name == name; }),
              1)
        << name;
  for (std::size_t i = 1; i < variants.size(); ++i) EXPECT_FALSE(variants[i].is_default);
  for (const VariantInfo& v : variants) {
    EXPECT_EQ(v.backend, "cuda");
    EXPECT_EQ(v.kind, VariantKind::Potential);
    EXPECT_FALSE(v.summary.empty()) << v.name;
  }
}

TEST_F(CudaTest, UnknownKernelIsAUsageErrorListingTheNames) {
  BackendOptions options;
  options.kernel = "no-such-kernel";
  try {
    cuda::make_cuda_backend(options);
    FAIL() << "no error for an unknown kernel";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("no-such-kernel"), std::string::npos) << message;
    for (const VariantInfo& v : cuda::cuda_kernel_variants())
      EXPECT_NE(message.find(v.name), std::string::npos) << message;
  }
}

TEST_F(CudaTest, UnknownReductionAndDeviceAreUsageErrors) {
  BackendOptions options;
  options.reduction = "no-such-reduction";
  EXPECT_THROW(cuda::make_cuda_backend(options), UsageError);
  options.reduction.clear();
  options.device = 4096;
  EXPECT_THROW(cuda::make_cuda_backend(options), UsageError);
}

TEST_F(CudaTest, DefaultBackendDescribesItsDevice) {
  const auto backend = cuda::make_cuda_backend(BackendOptions{});
  EXPECT_EQ(backend->name(), "cuda");
  EXPECT_EQ(backend->kernel_name(), cuda::cuda_kernel_variants().front().name);
  const std::string device = backend->device_name();
  EXPECT_NE(device.find("cuda:0"), std::string::npos) << device;
  EXPECT_NE(device.find("sm_"), std::string::npos) << device;
  EXPECT_NE(device.find("SMs"), std::string::npos) << device;
  const auto devices = cuda::cuda_devices();
  ASSERT_FALSE(devices.empty());
  EXPECT_GT(devices.front().multiprocessors, 0);
  EXPECT_GT(devices.front().clock_khz, 0);
  EXPECT_GT(devices.front().memory_bytes, 0u);
}

}  // namespace
}  // namespace dcs::test
