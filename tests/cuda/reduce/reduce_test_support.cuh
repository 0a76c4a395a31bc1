// Shared pieces of the GPU reduction tests: the skip-without-GPU fixture, the variant names and
// test names, deterministic data
// sets cached per size (uploading 512^3 floats once, not once per variant), and the
// cub::DeviceReduce oracle, which computes each statistic with its own reduction so that it does
// not share StatsAccum::combine with the code under test.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cub/device/device_reduce.cuh>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/stats.hpp"
#include "dcs/variants.hpp"
#include "device_buffer.hpp"
#include "reduce/reduce.hpp"
#include "stream.hpp"

namespace dcs::cuda::test {

using detail::DeviceBuffer;
using detail::ReduceWorkspace;
using detail::Stream;
using detail::StreamView;

/// Fixture base: skips (with the reason printed) where no GPU exists, so a CPU-only runner reports
/// "skipped", never "passed". Base is ::testing::Test or a ::testing::TestWithParam<...>.
template <class Base = ::testing::Test>
class GpuTestWithParam : public Base {
 protected:
  void SetUp() override {
    if (const std::string reason = cuda_unavailable_reason(); !reason.empty())
      GTEST_SKIP() << reason;
  }
};
using GpuTest = GpuTestWithParam<>;

/// Every registry variant's name, registry order (the tests' parameter lists).
inline std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const VariantInfo& info : detail::reduction_variants()) names.push_back(info.name);
  return names;
}

inline constexpr std::size_t k512Cubed = std::size_t{512} * 512 * 512;

/// A gtest-safe name for a variant at size n: "unroll8_warp_n257", "warp_shuffle_n512cubed".
inline std::string test_name(const std::string& variant, std::size_t n) {
  std::string name = variant + "_n";
  name += n == k512Cubed ? std::string("512cubed") : std::to_string(n);
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Uniform in [lo, hi) from a counter-based generator (fast for 512^3 values, fixed seed).
inline std::vector<float> uniform_values(std::size_t n, std::uint64_t seed, float lo, float hi) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u =
        static_cast<double>(splitmix64(seed ^ (i * 0x2545f4914f6cdd1dull)) >> 11) * 0x1.0p-53;
    values[i] = lo + static_cast<float>(u) * (hi - lo);
  }
  return values;
}

enum class Pattern { Mixed, Equal, NonFinite };

inline const char* pattern_name(Pattern pattern) {
  switch (pattern) {
    case Pattern::Mixed: return "mixed-sign random";
    case Pattern::Equal: return "all equal (-3.25)";
    case Pattern::NonFinite: return "random with NaN, +inf, -inf";
  }
  return "?";
}

/// The data of one test case: mixed-sign random values in [-1000, 1000); all values equal; or
/// the random values with NaN at 0, +inf at n/2 and -inf at n-1 (later ones win for tiny n).
inline std::vector<float> make_values(std::size_t n, Pattern pattern) {
  if (pattern == Pattern::Equal) return std::vector<float>(n, -3.25f);
  std::vector<float> values = uniform_values(n, 0x5eed0000 + n, -1000.0f, 1000.0f);
  if (pattern == Pattern::NonFinite && n > 0) {
    values[n / 2] = std::numeric_limits<float>::infinity();
    values[n - 1] = -std::numeric_limits<float>::infinity();
    values[0] = std::numeric_limits<float>::quiet_NaN();
  }
  return values;
}

/// sum |x| and sum x^2 over the finite values (for the stated tolerances).
struct Magnitudes {
  double sum_abs = 0.0;
  double sum_sq = 0.0;
};
inline Magnitudes magnitudes(const std::vector<float>& values) {
  Magnitudes m;
  for (float v : values)
    if (std::isfinite(v)) {
      m.sum_abs += std::fabs(static_cast<double>(v));
      m.sum_sq += static_cast<double>(v) * static_cast<double>(v);
    }
  return m;
}

// --- the CUB oracle ----------------------------------------------------------------------------

struct FiniteOr {
  float fill;
  __host__ __device__ float operator()(float v) const { return fabsf(v) <= FLT_MAX ? v : fill; }
};
struct FiniteAsDouble {
  __host__ __device__ double operator()(float v) const {
    return fabsf(v) <= FLT_MAX ? static_cast<double>(v) : 0.0;
  }
};
struct FiniteSquare {
  __host__ __device__ double operator()(float v) const {
    const double d = fabsf(v) <= FLT_MAX ? static_cast<double>(v) : 0.0;
    return d * d;
  }
};
struct IsNonFinite {
  __host__ __device__ unsigned long long operator()(float v) const {
    return fabsf(v) <= FLT_MAX ? 0ull : 1ull;
  }
};
struct MinF {
  __host__ __device__ float operator()(float a, float b) const { return a < b ? a : b; }
};
struct MaxF {
  __host__ __device__ float operator()(float a, float b) const { return a > b ? a : b; }
};
struct PlusD {
  __host__ __device__ double operator()(double a, double b) const { return a + b; }
};
struct PlusU {
  __host__ __device__ unsigned long long operator()(unsigned long long a,
                                                    unsigned long long b) const {
    return a + b;
  }
};

template <class Out, class Reduce, class Transform>
Out cub_transform_reduce(const float* d_in, std::size_t n, Reduce reduce, Transform transform,
                         Out init, StreamView stream) {
  DeviceBuffer<Out> d_out(1);
  std::size_t bytes = 0;
  EXPECT_EQ(cub::DeviceReduce::TransformReduce(nullptr, bytes, d_in, d_out.data(), n, reduce,
                                               transform, init, stream.get()),
            cudaSuccess);
  DeviceBuffer<std::byte> temp(bytes > 0 ? bytes : 1);
  EXPECT_EQ(cub::DeviceReduce::TransformReduce(temp.data(), bytes, d_in, d_out.data(), n, reduce,
                                               transform, init, stream.get()),
            cudaSuccess);
  Out result{};
  d_out.download(&result, 1, stream);
  stream.synchronize();
  return result;
}

/// Statistics of n device floats from five independent cub::DeviceReduce reductions.
inline StatsAccum cub_statistics(const float* d_in, std::size_t n, StreamView stream) {
  const float inf = std::numeric_limits<float>::infinity();
  StatsAccum accum;
  if (n == 0) return accum;
  accum.min = cub_transform_reduce(d_in, n, MinF{}, FiniteOr{inf}, inf, stream);
  accum.max = cub_transform_reduce(d_in, n, MaxF{}, FiniteOr{-inf}, -inf, stream);
  accum.sum = cub_transform_reduce(d_in, n, PlusD{}, FiniteAsDouble{}, 0.0, stream);
  accum.sum_sq = cub_transform_reduce(d_in, n, PlusD{}, FiniteSquare{}, 0.0, stream);
  accum.nonfinite = cub_transform_reduce(d_in, n, PlusU{}, IsNonFinite{}, 0ull, stream);
  accum.count = n;
  return accum;
}

/// Tolerances, stated: min, max, count and non-finite count are exact (selections and integer
/// sums); each double sum of n terms, in any order, lies within (n-1) * 2^-53 * sum|terms| of the
/// exact value, so two of them differ by at most n * 2^-52 * sum|terms|.
inline void expect_stats_near(const StatsAccum& got, const StatsAccum& want, const Magnitudes& m,
                              std::size_t n, const std::string& what) {
  const double bound = static_cast<double>(n) * std::ldexp(1.0, -52);
  EXPECT_EQ(got.count, want.count) << what;
  EXPECT_EQ(got.nonfinite, want.nonfinite) << what;
  EXPECT_EQ(got.min, want.min) << what;
  EXPECT_EQ(got.max, want.max) << what;
  EXPECT_NEAR(got.sum, want.sum, bound * m.sum_abs) << what;
  EXPECT_NEAR(got.sum_sq, want.sum_sq, bound * m.sum_sq) << what;
}

/// One size's three data sets on host and device, with their CPU and CUB results; computed once
/// and shared by every variant's test (the last size used stays cached).
struct DataSet {
  std::vector<float> values;
  DeviceBuffer<float> d_values;
  Magnitudes m;
  StatsAccum cpu;
  StatsAccum cub;
};

class DataCache {
 public:
  static const DataSet& get(std::size_t n, Pattern pattern, StreamView stream) {
    static DataCache cache;
    if (cache.n_ != n) {
      cache.sets_.clear();
      cache.n_ = n;
    }
    auto& slot = cache.sets_[pattern];
    if (!slot) {
      slot = std::make_unique<DataSet>();
      slot->values = make_values(n, pattern);
      slot->d_values = DeviceBuffer<float>(n);
      slot->d_values.upload(slot->values.data(), n, stream);
      slot->m = magnitudes(slot->values);
      slot->cpu = cpu_statistics(slot->values.data(), n);
      slot->cub = cub_statistics(slot->d_values.data(), n, stream);
      stream.synchronize();
    }
    return *slot;
  }

 private:
  std::size_t n_ = ~std::size_t{0};
  std::map<Pattern, std::unique_ptr<DataSet>> sets_;
};

/// One stream and workspace for the whole test program (the workspace grows and is reused across
/// variants and sizes, as in the backend).
struct SharedContext {
  Stream stream;
  ReduceWorkspace workspace;
  static SharedContext& get() {
    static SharedContext context;
    return context;
  }
};

}  // namespace dcs::cuda::test
