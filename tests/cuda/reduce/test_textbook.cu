// The books' own float-sum kernels at the sizes they accept. With values in {-1, 0, 1} every
// partial sum is a small integer (below 2^24), so each float addition is exact in any order: the
// expected result is the exact integer sum, compared with ==. A NaN anywhere must give NaN.
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
#include "textbook.hpp"

namespace dcs::cuda::test {
namespace {

using detail::enqueue_textbook_sum;
using detail::textbook_in_place;
using detail::textbook_outputs;
using detail::textbook_requirement;

std::vector<float> ternary_values(std::size_t n, std::uint64_t seed) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i)
    values[i] = static_cast<float>(static_cast<int>(splitmix64(seed + i) % 3) - 1);
  return values;
}

/// Runs the book's kernel on a device copy of `values`; returns the sum of its outputs and checks
/// that a kernel which is not in place left its input alone.
double textbook_sum(const std::string& variant, const std::vector<float>& values) {
  SharedContext& context = SharedContext::get();
  const StreamView stream = context.stream.view();
  const std::size_t n = values.size();
  DeviceBuffer<float> d_values(n), d_outputs(textbook_outputs(variant, n));
  d_values.upload(values.data(), n, stream);
  enqueue_textbook_sum(variant, d_values.data(), n, d_outputs.data(), context.workspace, stream);
  std::vector<float> outputs(d_outputs.size());
  d_outputs.download(outputs.data(), outputs.size(), stream);
  stream.synchronize();
  if (!textbook_in_place(variant)) {
    std::vector<float> after(n);
    d_values.download(after.data(), n, stream);
    stream.synchronize();
    EXPECT_EQ(std::memcmp(after.data(), values.data(), n * sizeof(float)), 0)
        << variant << " modified its input";
  }
  double total = 0.0;
  for (float v : outputs) total += static_cast<double>(v);
  return total;
}

class Textbook
    : public GpuTestWithParam<::testing::TestWithParam<std::tuple<std::size_t, std::string>>> {};

TEST_P(Textbook, ExactIntegerSum) {
  const auto& [n, variant] = GetParam();
  if (const std::string requirement = textbook_requirement(variant, n); !requirement.empty()) {
    // Outside the book's sizes the launcher refuses, with the book's requirement.
    SharedContext& context = SharedContext::get();
    DeviceBuffer<float> d_values(n > 0 ? n : 1), d_out(1);
    EXPECT_THROW(enqueue_textbook_sum(variant, d_values.data(), n, d_out.data(), context.workspace,
                                      context.stream.view()),
                 UsageError);
    return;
  }
  // Exact in float only while every partial sum stays below 2^24; at 512^3 the running atomic
  // sums of segmented/coarsened are random walks of about 10^4, far below it.
  const std::vector<float> values = ternary_values(n, 0xbeef + n);
  double expected = 0.0;
  for (float v : values) expected += static_cast<double>(v);
  EXPECT_EQ(textbook_sum(variant, values), expected) << variant << ", n = " << n;
  // All-equal data where the total stays exact in float (n <= 2^24).
  if (n <= (std::size_t{1} << 24)) {
    const std::vector<float> ones(n, 1.0f);
    EXPECT_EQ(textbook_sum(variant, ones), static_cast<double>(n)) << variant << ", ones";
  }
  // A NaN propagates through every tree.
  if (n <= (std::size_t{1} << 21)) {
    std::vector<float> with_nan = values;
    with_nan[n / 3] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE(std::isnan(textbook_sum(variant, with_nan))) << variant << ", NaN present";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Variants, Textbook,
    ::testing::Combine(::testing::Values(std::size_t{1}, std::size_t{32}, std::size_t{33},
                                         std::size_t{256}, std::size_t{2048}, std::size_t{1} << 20,
                                         (std::size_t{1} << 20) + 7, k512Cubed),
                       ::testing::ValuesIn(variant_names())),
    [](const auto& param_info) {
      return test_name(std::get<1>(param_info.param), std::get<0>(param_info.param));
    });

}  // namespace
}  // namespace dcs::cuda::test
