// Statistics accumulators (DESIGN §5): hand-made arrays with non-finite values, combine(),
// finalize() and the difference metrics.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/stats.hpp"

namespace dcs {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(StatsAccum, CountsNonFiniteValuesApartFromTheStatistics) {
  const std::vector<float> values{1.0f, -2.0f, kNan, 3.0f, kInf, -kInf};
  const StatsAccum accum = cpu_statistics(values.data(), values.size());
  EXPECT_EQ(accum.count, 6u);
  EXPECT_EQ(accum.nonfinite, 3u);
  EXPECT_EQ(accum.min, -2.0);
  EXPECT_EQ(accum.max, 3.0);
  EXPECT_EQ(accum.sum, 2.0);
  EXPECT_EQ(accum.sum_sq, 14.0);
  const GridStats stats = finalize(accum);
  EXPECT_EQ(stats.count, 6u);
  EXPECT_EQ(stats.nonfinite, 3u);
  EXPECT_DOUBLE_EQ(stats.mean, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(stats.rms, std::sqrt(14.0 / 3.0));
  EXPECT_EQ(stats.max_abs(), 3.0);
}

TEST(StatsAccum, MeanAndRmsOfASimpleArray) {
  const std::vector<float> values{-4.0f, 2.0f, 2.0f, 4.0f};
  const GridStats stats = finalize(cpu_statistics(values.data(), values.size()));
  EXPECT_EQ(stats.min, -4.0);
  EXPECT_EQ(stats.max, 4.0);
  EXPECT_DOUBLE_EQ(stats.mean, 1.0);
  EXPECT_DOUBLE_EQ(stats.rms, std::sqrt(10.0));  // root mean square, not the standard deviation
  EXPECT_EQ(stats.sum, 4.0);
  EXPECT_EQ(stats.max_abs(), 4.0);
}

TEST(StatsAccum, EmptyAndAllNonFiniteFinalizeToZeros) {
  const GridStats empty = finalize(cpu_statistics(nullptr, 0));
  EXPECT_EQ(empty.count, 0u);
  EXPECT_EQ(empty.mean, 0.0);
  EXPECT_EQ(empty.min, 0.0);
  const std::vector<float> bad{kNan, kInf};
  const GridStats stats = finalize(cpu_statistics(bad.data(), bad.size()));
  EXPECT_EQ(stats.count, 2u);
  EXPECT_EQ(stats.nonfinite, 2u);
  EXPECT_EQ(stats.min, 0.0);
  EXPECT_EQ(stats.max, 0.0);
  EXPECT_EQ(stats.rms, 0.0);
  EXPECT_TRUE(std::isfinite(stats.mean));
}

TEST(StatsAccum, CombineIsAssociativeWithAnIdentity) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 50.0f);
  std::vector<float> values(3001);
  for (float& v : values) v = normal(rng);
  values[100] = kNan;
  values[2500] = -kInf;
  const StatsAccum a = cpu_statistics(values.data(), 1000);
  const StatsAccum b = cpu_statistics(values.data() + 1000, 1500);
  const StatsAccum c = cpu_statistics(values.data() + 2500, 501);
  const StatsAccum left = StatsAccum::combine(StatsAccum::combine(a, b), c);
  const StatsAccum right = StatsAccum::combine(a, StatsAccum::combine(b, c));
  const StatsAccum whole = cpu_statistics(values.data(), values.size());
  for (const StatsAccum& s : {left, right}) {
    EXPECT_EQ(s.count, whole.count);
    EXPECT_EQ(s.nonfinite, 2u);
    EXPECT_EQ(s.min, whole.min);
    EXPECT_EQ(s.max, whole.max);
    EXPECT_NEAR(s.sum, whole.sum, 1e-9 * whole.sum_sq);
    EXPECT_NEAR(s.sum_sq, whole.sum_sq, 1e-12 * whole.sum_sq);
  }
  const StatsAccum identity = StatsAccum::combine(StatsAccum{}, a);
  EXPECT_EQ(identity.count, a.count);
  EXPECT_EQ(identity.min, a.min);
  EXPECT_EQ(identity.max, a.max);
  EXPECT_EQ(identity.sum, a.sum);
  const StatsAccum swapped = StatsAccum::combine(b, a);
  EXPECT_EQ(swapped.min, StatsAccum::combine(a, b).min);
  EXPECT_EQ(swapped.sum, StatsAccum::combine(a, b).sum);  // one addition commutes exactly
}

TEST(DiffAccum, MaxAbsoluteAndSquaredDifferences) {
  const std::vector<float> values{1.0f, 2.0f, -3.0f, 4.0f};
  const std::vector<double> reference{1.5, 2.0, -3.25, -10.0};
  const DiffAccum diff = cpu_difference(values.data(), reference.data(), values.size());
  EXPECT_EQ(diff.count, 4u);
  EXPECT_EQ(diff.nonfinite, 0u);
  EXPECT_EQ(diff.max_abs_diff, 14.0);
  EXPECT_EQ(diff.max_abs_ref, 10.0);
  EXPECT_DOUBLE_EQ(diff.sum_sq_diff, 0.25 + 0.0 + 0.0625 + 196.0);
}

TEST(DiffAccum, NonFiniteValuesAreCounted) {
  const std::vector<float> values{kNan, 1.0f, kInf};
  const std::vector<double> reference{0.0, 1.0, 2.0};
  const DiffAccum diff = cpu_difference(values.data(), reference.data(), values.size());
  EXPECT_EQ(diff.count, 3u);
  EXPECT_EQ(diff.nonfinite, 2u);
  const DiffAccum both =
      DiffAccum::combine(diff, cpu_difference(values.data() + 1, reference.data() + 1, 1));
  EXPECT_EQ(both.count, 4u);
  EXPECT_EQ(both.nonfinite, 2u);
}

}  // namespace
}  // namespace dcs
