// The fast backend's row sweep skips the clamp for the atoms stage_row finds far from the row
// (row_kernel.hpp): for every instruction set this CPU runs, the sweep with that split must give
// the same bits as the sweep with every atom through the clamp, and stage_row must name exactly
// the atoms with yz2 < min_r2 (or NaN), in order. Atoms sit on the row's points, on the row
// between points, at exactly r_min from it, just inside and just outside, and far away.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fast_kernels.hpp"

namespace dcs::test {
namespace {

using cpu_fast::Isa;
using cpu_fast::IsaKernels;

struct Case {
  std::vector<double> ay, az;        // atoms' y, z (grid units)
  std::vector<float> ia, neg_fx, q;  // split x and staged charge
};

Case atoms_around_the_row(double y, double z, float min_r2) {
  Case c;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const double r_min = std::sqrt(static_cast<double>(min_r2));
  auto add = [&](double x, double dy, double dz, float q) {
    const double ix = std::nearbyint(x);
    c.ia.push_back(static_cast<float>(ix));
    c.neg_fx.push_back(static_cast<float>(ix - x));
    c.ay.push_back(y + dy);
    c.az.push_back(z + dz);
    c.q.push_back(q);
  };
  for (int i = 0; i < 300; ++i) {
    const float q = static_cast<float>(unit(rng));
    switch (i % 6) {
      case 0: add(static_cast<double>(i % 37), 0.0, 0.0, q); break;         // on a point
      case 1: add(0.5 + static_cast<double>(i % 41), 0.0, 0.0, q); break;   // on the row
      case 2: add(3.0 + 20.0 * (unit(rng) + 1.0), r_min, 0.0, q); break;    // at r_min
      case 3: add(20.0 * (unit(rng) + 1.0), 0.0, 0.999 * r_min, q); break;  // just inside
      case 4: add(20.0 * (unit(rng) + 1.0), 1.001 * r_min, 0.0, q); break;  // just outside
      default: add(30.0 * (unit(rng) + 1.0), 12.0 * unit(rng), 12.0 * unit(rng), q); break;
    }
  }
  return c;
}

std::vector<float> sweep(const IsaKernels& k, const Case& c, const float* yz2,
                         const std::uint32_t* near, std::size_t near_count, std::int64_t nx,
                         float min_r2) {
  std::vector<float> out(static_cast<std::size_t>(nx), 0.0f);
  cpu_fast::RowArgs args;
  args.atoms = {c.ia.data(), c.neg_fx.data(), c.q.data(), c.ia.size()};
  args.yz2 = yz2;
  args.near = near;
  args.near_count = near_count;
  args.nx = nx;
  args.min_r2 = min_r2;
  args.out_row = out.data();
  k.models[0].row(args);
  return out;
}

void expect_split_is_exact(Isa isa, const IsaKernels& k) {
  const float min_r2 = 0.04f;
  const double y = 7.0, z = 9.0;
  const Case c = atoms_around_the_row(y, z, min_r2);
  const std::size_t n = c.ia.size();
  std::vector<float> yz2(n);
  std::vector<std::uint32_t> near(n);
  const std::size_t near_count =
      k.stage(c.ay.data(), c.az.data(), n, y, z, min_r2, yz2.data(), near.data());
  std::vector<std::uint32_t> expected;
  for (std::size_t a = 0; a < n; ++a)
    if (!(yz2[a] >= min_r2)) expected.push_back(static_cast<std::uint32_t>(a));
  ASSERT_EQ(near_count, expected.size()) << cpu_fast::isa_name(isa);
  ASSERT_GT(near_count, n / 3) << "the case must put atoms on and near the row";
  for (std::size_t i = 0; i < near_count; ++i) EXPECT_EQ(near[i], expected[i]);
  std::vector<std::uint32_t> every(n);
  std::iota(every.begin(), every.end(), 0u);
  for (std::int64_t nx : {1, 7, 16, 33, 64, 65, 129}) {
    const std::vector<float> split = sweep(k, c, yz2.data(), near.data(), near_count, nx, min_r2);
    const std::vector<float> clamped = sweep(k, c, yz2.data(), every.data(), n, nx, min_r2);
    EXPECT_EQ(0, std::memcmp(split.data(), clamped.data(), split.size() * sizeof(float)))
        << cpu_fast::isa_name(isa) << ", row of " << nx;
    for (float v : split) EXPECT_TRUE(std::isfinite(v)) << "clamped at r_min: finite everywhere";
  }
}

TEST(RowKernel, SkippingTheClampForFarAtomsGivesTheClampedSumToTheBit) {
  expect_split_is_exact(Isa::Portable, cpu_fast::portable_kernels());
  if (cpu_fast::isa_supported(Isa::Avx2))
    expect_split_is_exact(Isa::Avx2, cpu_fast::avx2_kernels());
  if (cpu_fast::isa_supported(Isa::Avx512))
    expect_split_is_exact(Isa::Avx512, cpu_fast::avx512_kernels());
  if (!cpu_fast::isa_supported(Isa::Avx512)) GTEST_LOG_(INFO) << "AVX-512 not on this CPU: not run";
}

TEST(RowKernel, ANanDistanceCountsAsNearAndStaysNan) {
  for (Isa isa : {Isa::Portable, Isa::Avx2, Isa::Avx512}) {
    if (!cpu_fast::isa_supported(isa)) continue;
    const IsaKernels k = isa == Isa::Portable ? cpu_fast::portable_kernels()
                         : isa == Isa::Avx2   ? cpu_fast::avx2_kernels()
                                              : cpu_fast::avx512_kernels();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> ay{1.0, nan, 30.0}, az{2.0, 2.0, 30.0};
    std::vector<float> yz2(3);
    std::vector<std::uint32_t> near(3);
    ASSERT_EQ(k.stage(ay.data(), az.data(), 3, 0.0, 0.0, 0.04f, yz2.data(), near.data()), 1u);
    EXPECT_EQ(near[0], 1u);
    EXPECT_TRUE(std::isnan(yz2[1]));
  }
}

}  // namespace
}  // namespace dcs::test
