// What only the CUDA points kernel (kernels/src/points) needs tested beyond the shared points
// bodies (tests/support/points_test_bodies.hpp, run in backend_test.cpp): skipped atoms far from
// their points (taken out of the fast path by the warp's skip bits), mixed skips in one group,
// large calls with partial groups against the float64 reference, splits at the hint's block,
// refusals, and the grid state left alone by the points calls. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/error.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

/// The points kernel's accuracy for one value relative to C sum |q| g(r): MUFU, one pair in 16
/// on the FMA-pipe cubic (1.1e-6), the fast path's r^2 expansion (~1e-6) and float offsets.
constexpr double kPointTolerance = 3e-6;

class CudaPointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::cuda_available()) GTEST_SKIP() << "no GPU: " << cuda::cuda_unavailable_reason();
    BackendOptions options;
    options.debug_sync = true;
    backend_ = cuda::make_cuda_backend(options);
  }

  std::vector<float> compute(const std::vector<Vec3>& points,
                             const std::vector<std::uint32_t>& skip = {}) {
    std::vector<float> out(points.size(), std::numeric_limits<float>::quiet_NaN());
    backend_->compute_points(points.data(), skip.empty() ? nullptr : skip.data(), points.size(),
                             out.data());
    return out;
  }

  /// The float64 value at `point` without atom `skip`, and C sum |q| / r (the error scale).
  struct Expected {
    double value = 0.0;
    double scale = 0.0;
  };
  static Expected expected(const System& system, const Physics& physics, const Vec3& point,
                           std::uint32_t skip) {
    Expected e;
    const double c = coulomb_factor(physics);
    for (std::size_t a = 0; a < system.atoms.size(); ++a) {
      if (a == skip) continue;
      const Vec3& x = system.atoms[a].position;
      const double r = std::max(std::hypot(point[0] - x[0], point[1] - x[1], point[2] - x[2]),
                                physics.min_distance);
      e.value += c * system.atoms[a].charge / r;
      e.scale += std::fabs(c * system.atoms[a].charge / r);
    }
    return e;
  }

  std::unique_ptr<PotentialBackend> backend_;
};

TEST_F(CudaPointsTest, HintIsOneBlockAndFillsTheDevice) {
  const PointsHint hint = backend_->points_hint();
  EXPECT_EQ(hint.block, 256u);  // one block: 4 warps of 4 tensor-core tiles of 16 points
  EXPECT_GE(hint.min_points, std::size_t{1} << 20);
}

TEST_F(CudaPointsTest, FarSkippedAtomsAreLeftOutInEveryChunkAndOnlyForTheirPoints) {
  // 5000 atoms (two chunks of 4000) in a 30 Å box; 128 points (half a block) in a 2 Å cube at
  // one corner, far from most atoms, so most pairs take the fast path. Each point skips a
  // different atom, many of them far from it (the warp's skip bits must send them exact), the
  // odd points kNoAtom, in the same group.
  const System system = protein_like_system(5000, 21);
  const Physics physics;
  backend_->prepare_points(system, physics);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<std::uint32_t> pick(0, 4999);
  const Vec3 corner = system.atoms.front().position;
  std::vector<Vec3> points(128);
  std::vector<std::uint32_t> skip(128);
  for (std::size_t i = 0; i < points.size(); ++i) {
    points[i] = {corner[0] + 3.0 + u(rng), corner[1] + 3.0 + u(rng), corner[2] + u(rng)};
    skip[i] = i % 2 == 0 ? pick(rng) : kNoAtom;
  }
  skip[0] = 4999;  // the last atom of the last chunk
  skip[2] = 4000;  // the first of the second chunk
  skip[4] = 3999;  // the last of the first
  const std::vector<float> got = compute(points, skip);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Expected e = expected(system, physics, points[i], skip[i]);
    ASSERT_LE(std::fabs(got[i] - e.value), kPointTolerance * e.scale)
        << "point " << i << " skipping " << skip[i] << ": " << got[i] << " vs " << e.value;
    const Expected all = expected(system, physics, points[i], kNoAtom);
    const double term = std::fabs(all.value - e.value);  // the skipped atom's own term
    if (term > 10.0 * kPointTolerance * e.scale) {       // then it is visibly missing
      ASSERT_GT(std::fabs(got[i] - all.value), 0.5 * term) << "point " << i;
    }
  }
}

TEST_F(CudaPointsTest, SkipIndicesPastTheAtomsLeaveNothingOut) {
  const System system = protein_like_system(300, 8);
  backend_->prepare_points(system, Physics{});
  const std::vector<Vec3> points = {system.atoms[5].position, {1.0, 2.0, 3.0}};
  const std::vector<float> none = compute(points);
  const std::vector<float> past = compute(points, {300, 0x7FFFFFFFu});
  for (std::size_t i = 0; i < points.size(); ++i)
    EXPECT_EQ(std::bit_cast<std::uint32_t>(none[i]), std::bit_cast<std::uint32_t>(past[i]));
}

TEST_F(CudaPointsTest, ALargeCallWithAPartialGroupMatchesTheReference) {
  // 200 003 points (not a multiple of the group) around 9000 atoms (three chunks), unsorted:
  // groups span the whole box, the hardest case for the fast path's near radius.
  const System system = protein_like_system(9000, 5);
  const Physics physics;
  backend_->prepare_points(system, physics);
  std::vector<Vec3> points(200'003);
  std::mt19937 rng(6);
  std::uniform_real_distribution<double> u(-25.0, 25.0);
  for (Vec3& p : points) p = {u(rng), u(rng), u(rng)};
  const std::vector<float> got = compute(points);
  std::vector<std::size_t> sample;
  for (std::size_t i = 0; i < points.size(); i += 97) sample.push_back(i);
  sample.push_back(points.size() - 1);
  for (const std::size_t i : sample) {
    const Expected e = expected(system, physics, points[i], kNoAtom);
    ASSERT_LE(std::fabs(got[i] - e.value), kPointTolerance * e.scale)
        << "point " << i << ": " << got[i] << " vs " << e.value;
  }
}

TEST_F(CudaPointsTest, CallsSplitAtMultiplesOfTheBlockGiveTheSameBits) {
  const System system = protein_like_system(1000, 9);
  backend_->prepare_points(system, Physics{});
  std::vector<Vec3> points(1000);
  std::mt19937 rng(10);
  std::uniform_real_distribution<double> u(-15.0, 15.0);
  for (Vec3& p : points) p = {u(rng), u(rng), u(rng)};
  std::vector<std::uint32_t> skip(points.size(), kNoAtom);
  for (std::size_t i = 0; i < skip.size(); i += 3) skip[i] = static_cast<std::uint32_t>(i);
  const std::vector<float> whole = compute(points, skip);
  const std::size_t block = backend_->points_hint().block;
  std::vector<float> split(points.size());
  for (const auto& [begin, end] :
       {std::pair<std::size_t, std::size_t>{3 * block, 1000}, {block, 3 * block}, {0, block}})
    backend_->compute_points(points.data() + begin, skip.data() + begin, end - begin,
                             split.data() + begin);
  for (std::size_t i = 0; i < points.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(whole[i]), std::bit_cast<std::uint32_t>(split[i]))
        << "point " << i;
}

TEST_F(CudaPointsTest, RefusesPointsBeyondTheCoordinateLimitAndInfinities) {
  backend_->prepare_points(protein_like_system(10, 1), Physics{});
  float out[2];
  const Vec3 far[2] = {{0.0, 0.0, 0.0}, {0.0, 2e7, 0.0}};
  EXPECT_THROW(backend_->compute_points(far, nullptr, 2, out), UsageError);
  const Vec3 inf[2] = {{0.0, 0.0, 0.0}, {std::numeric_limits<double>::infinity(), 0.0, 0.0}};
  EXPECT_THROW(backend_->compute_points(inf, nullptr, 2, out), UsageError);
  EXPECT_THROW(backend_->compute_points(nullptr, nullptr, 2, out), UsageError);
}

TEST_F(CudaPointsTest, PointCallsLeaveTheGridAlone) {
  // prepare() and prepare_points() hold separate atoms: a slab computed before and after a
  // points call of another system is the same.
  const System atoms = protein_like_system(700, 12);
  GridSpec grid;
  grid.counts = {24, 20, 16};
  grid.origin = {-12.0, -10.0, -8.0};
  grid.spacing = {1.0, 1.0, 1.0};
  backend_->prepare(atoms, grid, Physics{});
  const std::size_t n = grid.plane_points() * 16;
  std::vector<float> before(n), after(n);
  std::vector<StatsAccum> stats(16);
  backend_->compute_slab(Slab{0, 16}, before.data(), stats.data());
  backend_->prepare_points(protein_like_system(50, 13), Physics{});
  const std::vector<float> values = compute({{0.5, 0.5, 0.5}});
  EXPECT_TRUE(std::isfinite(values[0]));
  backend_->compute_slab(Slab{0, 16}, after.data(), stats.data());
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(before[i]), std::bit_cast<std::uint32_t>(after[i]));
}

}  // namespace
}  // namespace dcs::test
