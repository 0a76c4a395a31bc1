// Every registry variant's statistics and validation metrics on the GPU against the CPU oracle
// (dcs::cpu_statistics / cpu_difference) and against cub::DeviceReduce, for sizes around warp and
// block boundaries up to 512^3, with mixed signs, all-equal values and NaN/inf present.
// Tolerances: see expect_stats_near() in reduce_test_support.cuh.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "dcs/error.hpp"
#include "reduce/reduce.hpp"
#include "reduce_test_support.cuh"

namespace dcs::cuda::test {
namespace {

using detail::device_difference;
using detail::device_statistics;

const std::vector<std::size_t> kSizes = {
    1, 31, 32, 33, 255, 256, 257, 2048, (std::size_t{1} << 20) + 7, k512Cubed};

// --- statistics ------------------------------------------------------------------------------

class Statistics
    : public GpuTestWithParam<::testing::TestWithParam<std::tuple<std::size_t, std::string>>> {};

TEST_P(Statistics, MatchesCpuAndCub) {
  const auto& [n, variant] = GetParam();
  SharedContext& context = SharedContext::get();
  const StreamView stream = context.stream.view();
  for (Pattern pattern : {Pattern::Mixed, Pattern::Equal, Pattern::NonFinite}) {
    const DataSet& data = DataCache::get(n, pattern, stream);
    const std::string what = variant + ", n = " + std::to_string(n) + ", " + pattern_name(pattern);
    // The two oracles first agree with each other (else the test itself is wrong).
    expect_stats_near(data.cub, data.cpu, data.m, n, what + " (CUB vs CPU)");
    const StatsAccum got =
        device_statistics(data.d_values.data(), n, variant, context.workspace, stream);
    expect_stats_near(got, data.cpu, data.m, n, what + " vs CPU");
    expect_stats_near(got, data.cub, data.m, n, what + " vs CUB");
    // The map is never modified (checked in full where the copy back is cheap).
    if (n <= (std::size_t{1} << 21)) {
      std::vector<float> after(n);
      data.d_values.download(after.data(), n, stream);
      stream.synchronize();
      EXPECT_EQ(std::memcmp(after.data(), data.values.data(), n * sizeof(float)), 0)
          << what << ": the input was modified";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, Statistics,
                         ::testing::Combine(::testing::ValuesIn(kSizes),
                                            ::testing::ValuesIn(variant_names())),
                         [](const auto& param_info) {
                           return test_name(std::get<1>(param_info.param),
                                            std::get<0>(param_info.param));
                         });

/// Pointers that are not 16-byte aligned (a slab of a map starts anywhere): the vector kernels
/// must take the scalar head and tail.
class Misaligned : public GpuTestWithParam<::testing::TestWithParam<std::string>> {};

TEST_P(Misaligned, OffsetPointers) {
  const std::string& variant = GetParam();
  SharedContext& context = SharedContext::get();
  const StreamView stream = context.stream.view();
  const std::size_t n = (std::size_t{1} << 20) + 7;
  const std::vector<float> values = make_values(n, Pattern::NonFinite);
  DeviceBuffer<float> d_values(n);
  d_values.upload(values.data(), n, stream);
  for (std::size_t offset : {1, 2, 3}) {
    const std::size_t count = n - offset - 1;
    const std::vector<float> part(values.begin() + static_cast<std::ptrdiff_t>(offset),
                                  values.begin() + static_cast<std::ptrdiff_t>(offset + count));
    const StatsAccum got =
        device_statistics(d_values.data() + offset, count, variant, context.workspace, stream);
    expect_stats_near(got, cpu_statistics(part.data(), count), magnitudes(part), count,
                      variant + ", offset " + std::to_string(offset));
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, Misaligned, ::testing::ValuesIn(variant_names()),
                         [](const auto& param_info) { return test_name(param_info.param, 0); });

// --- validation metrics ----------------------------------------------------------------------

class Difference
    : public GpuTestWithParam<::testing::TestWithParam<std::tuple<std::size_t, std::string>>> {};

/// DiffAccum against cpu_difference: maxima and counts exact (the same double operations on the
/// same values), sum (a-ref)^2 within n * 2^-52 * itself. Offsets 0 (aligned), 1/1 (both arrays
/// misaligned alike: vector path after a head) and 1/0 (incompatible: scalar path).
TEST_P(Difference, MatchesCpu) {
  const auto& [n, variant] = GetParam();
  SharedContext& context = SharedContext::get();
  const StreamView stream = context.stream.view();
  const std::size_t total = n + 2;
  std::vector<float> values = uniform_values(total, 77, -500.0f, 500.0f);
  std::vector<double> reference(total);
  const std::vector<float> noise = uniform_values(total, 78, -1e-3f, 1e-3f);
  for (std::size_t i = 0; i < total; ++i)
    reference[i] = static_cast<double>(values[i]) * (1.0 + static_cast<double>(noise[i]));
  values[total / 2] = std::numeric_limits<float>::quiet_NaN();  // counted, excluded
  DeviceBuffer<float> d_values(total);
  DeviceBuffer<double> d_reference(total);
  d_values.upload(values.data(), total, stream);
  d_reference.upload(reference.data(), total, stream);
  for (const auto& [value_offset, reference_offset] :
       std::vector<std::pair<std::size_t, std::size_t>>{{0, 0}, {1, 1}, {1, 0}}) {
    const DiffAccum want =
        cpu_difference(values.data() + value_offset, reference.data() + reference_offset, n);
    const DiffAccum got =
        device_difference(d_values.data() + value_offset, d_reference.data() + reference_offset, n,
                          variant, context.workspace, stream);
    const std::string what = variant + ", n = " + std::to_string(n) + ", offsets " +
                             std::to_string(value_offset) + "/" + std::to_string(reference_offset);
    EXPECT_EQ(got.count, want.count) << what;
    EXPECT_EQ(got.nonfinite, want.nonfinite) << what;
    EXPECT_EQ(got.max_abs_diff, want.max_abs_diff) << what;
    EXPECT_EQ(got.max_abs_ref, want.max_abs_ref) << what;
    EXPECT_NEAR(got.sum_sq_diff, want.sum_sq_diff,
                static_cast<double>(n) * std::ldexp(1.0, -52) * want.sum_sq_diff)
        << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, Difference,
                         ::testing::Combine(::testing::Values(std::size_t{1}, std::size_t{33},
                                                              std::size_t{257},
                                                              (std::size_t{1} << 20) + 7),
                                            ::testing::ValuesIn(variant_names())),
                         [](const auto& param_info) {
                           return test_name(std::get<1>(param_info.param),
                                            std::get<0>(param_info.param));
                         });

// --- the interface -----------------------------------------------------------------------------

class ReduceInterface : public GpuTest {};

TEST_F(ReduceInterface, EmptyInputGivesEmptyStatistics) {
  SharedContext& context = SharedContext::get();
  for (const std::string& variant : variant_names()) {
    const StatsAccum got =
        device_statistics(nullptr, 0, variant, context.workspace, context.stream.view());
    EXPECT_EQ(got.count, 0u) << variant;
    EXPECT_EQ(got.nonfinite, 0u) << variant;
    EXPECT_EQ(got.min, std::numeric_limits<double>::infinity()) << variant;
    EXPECT_EQ(got.sum, 0.0) << variant;
  }
}

TEST_F(ReduceInterface, UnknownVariantIsAUsageError) {
  SharedContext& context = SharedContext::get();
  DeviceBuffer<float> d_values(4);
  EXPECT_THROW(device_statistics(d_values.data(), 4, "no-such-reduction", context.workspace,
                                 context.stream.view()),
               UsageError);
}

/// The second-pass variants combine in a fixed order: the same input gives the same bits.
TEST_F(ReduceInterface, DefaultIsDeterministic) {
  SharedContext& context = SharedContext::get();
  const StreamView stream = context.stream.view();
  const DataSet& data = DataCache::get((std::size_t{1} << 20) + 7, Pattern::Mixed, stream);
  const std::string variant = detail::default_reduction();
  const StatsAccum first = device_statistics(data.d_values.data(), data.values.size(), variant,
                                             context.workspace, stream);
  for (int repeat = 0; repeat < 5; ++repeat) {
    const StatsAccum again = device_statistics(data.d_values.data(), data.values.size(), variant,
                                               context.workspace, stream);
    EXPECT_EQ(again.sum, first.sum);
    EXPECT_EQ(again.sum_sq, first.sum_sq);
  }
}

}  // namespace
}  // namespace dcs::cuda::test
