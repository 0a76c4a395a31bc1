// The check sample taken from the streaming slabs (pipeline/src/sample_sink.hpp): the same points
// as validation_points() once the extremes join, and the same values whether the slabs brought
// them or complete() read them back (a resumed run's done planes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/map.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/stats.hpp"
#include "sample_sink.hpp"
#include "validation.hpp"

namespace dcs::pipeline {
namespace {

GridSpec grid_of(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  GridSpec grid;
  grid.counts = {nx, ny, nz};
  grid.origin = {0.0, 0.0, 0.0};
  grid.spacing = {1.0, 1.0, 1.0};
  return grid;
}

/// value(index) = index as float, read through the MapReader interface; counts planes read.
class IndexMap final : public MapReader {
 public:
  explicit IndexMap(const GridSpec& grid) : grid_(grid) {}
  void read_planes(const Slab& slab, float* out) override {
    planes_read += slab.z_count;
    const std::size_t first = static_cast<std::size_t>(slab.z_begin) * grid_.plane_points();
    for (std::size_t n = 0; n < static_cast<std::size_t>(slab.z_count) * grid_.plane_points(); ++n)
      out[n] = static_cast<float>(first + n);
  }
  void read_x_columns(std::int64_t, std::int64_t, float*) override { FAIL() << "not used"; }
  std::int64_t x_chunk() const override { return 1; }
  std::int64_t planes_read = 0;

 private:
  GridSpec grid_;
};

TEST(SampleSink, FixedPointsAndExtremesAreTheValidationPoints) {
  for (const GridSpec& grid : {grid_of(37, 29, 41), grid_of(1, 1, 5000), grid_of(300, 200, 100)})
    for (const std::size_t atoms : {std::size_t{1}, std::size_t{2000}, std::size_t{1000000}})
      for (const std::size_t requested : {std::size_t{0}, std::size_t{5}, std::size_t{4096}}) {
        const std::size_t min = grid.points() / 3, max = grid.points() - 1;
        std::vector<std::size_t> joined = fixed_sample_points(grid, atoms, requested, 5e8);
        if (joined.size() != grid.points()) {
          joined.push_back(min);
          joined.push_back(max);
          std::sort(joined.begin(), joined.end());
          joined.erase(std::unique(joined.begin(), joined.end()), joined.end());
        }
        EXPECT_EQ(joined, validation_points(grid, atoms, requested, 5e8, min, max))
            << grid.nx() << "x" << grid.ny() << "x" << grid.nz() << ", " << atoms << " atoms, "
            << requested << " requested";
      }
}

TEST(SampleSink, StreamedAndReadBackValuesAgree) {
  const GridSpec grid = grid_of(23, 19, 31);
  const std::vector<std::size_t> indices = fixed_sample_points(grid, 1000000, 600, 5e8);
  ASSERT_LT(indices.size(), grid.points());
  MapMetadata meta;
  meta.grid = grid;
  IndexMap map(grid);
  // Slabs of 4 planes for z < 20 streamed; the rest (a resumed run's done planes) read back.
  SampleSink sink(indices);
  sink.begin(meta);
  const std::size_t plane = grid.plane_points();
  for (std::int64_t z = 0; z < 20; z += 4) {
    std::vector<float> slab(4 * plane);
    map.read_planes({z, 4}, slab.data());
    sink.write_slab({z, 4}, slab.data(), nullptr);
  }
  map.planes_read = 0;
  sink.complete(map);
  std::int64_t unseen_planes = 0;
  for (std::int64_t z = 20; z < grid.nz(); ++z)
    unseen_planes += std::any_of(indices.begin(), indices.end(), [&](std::size_t i) {
      return static_cast<std::int64_t>(i / plane) == z;
    });
  EXPECT_EQ(map.planes_read, unseen_planes);  // each missing plane once, no streamed one
  ASSERT_EQ(sink.values().size(), indices.size());
  for (std::size_t n = 0; n < indices.size(); ++n)
    EXPECT_EQ(sink.values()[n], static_cast<float>(indices[n])) << "index " << indices[n];
  map.planes_read = 0;
  sink.complete(map);  // idempotent
  EXPECT_EQ(map.planes_read, 0);
}

/// sample_points() with a cap (--null-output keeps the values in memory): the budget's every
/// point of a grid of few atoms becomes a sample of about the cap, corners included; under the
/// cap nothing changes.
TEST(SampleSink, SamplePointsKeepAtMostTheCap) {
  RunConfig config;
  config.validation.enabled = true;
  const GridSpec grid = grid_of(160, 160, 160);  // 4.1e6 points: every point at 1 atom
  const std::vector<std::size_t> all = sample_points(config, grid, 1);
  EXPECT_EQ(all.size(), grid.points());
  const std::vector<std::size_t> capped = sample_points(config, grid, 1, std::size_t{1} << 18);
  EXPECT_LT(capped.size(), grid.points());
  EXPECT_LE(capped.size(), std::size_t{1} << 18);
  EXPECT_GT(capped.size(), (std::size_t{1} << 18) * 9 / 10);
  EXPECT_TRUE(std::binary_search(capped.begin(), capped.end(), grid.index(159, 159, 159)));
  EXPECT_EQ(sample_points(config, grid_of(40, 40, 40), 1, std::size_t{1} << 18).size(),
            std::size_t{40 * 40 * 40});
  EXPECT_EQ(sample_points(config, grid, 2000, std::size_t{1} << 18),
            sample_points(config, grid, 2000));
}

/// keep_extremes (--null-output): the minimum and maximum at their first point in index order,
/// as the read-back of reference_sample() finds them (first plane whose statistics hold the
/// value, then std::min_element / max_element in it), with ties in several planes, ties within
/// a plane, non-finite values and slabs of different sizes.
TEST(SampleSink, KeepsTheExtremesAtTheirFirstPoints) {
  const GridSpec grid = grid_of(7, 5, 12);
  const std::size_t plane = grid.plane_points();
  std::vector<float> map(grid.points());
  for (std::size_t i = 0; i < map.size(); ++i)
    map[i] = static_cast<float>((i * 37) % 101) - 50.0f;  // -50 .. 50, each value many times
  map[3 * plane + 17] = -80.0f;                           // the minimum, three times
  map[3 * plane + 30] = -80.0f;
  map[9 * plane + 2] = -80.0f;
  map[5 * plane + 4] = 90.0f;  // the maximum, twice
  map[11 * plane] = 90.0f;
  map[2 * plane + 1] = NAN;  // not finite: never an extreme
  map[4 * plane + 6] = INFINITY;
  const auto stats_of = [&](std::int64_t z) {
    StatsAccum stats;
    for (std::size_t n = 0; n < plane; ++n) stats.add(map[static_cast<std::size_t>(z) * plane + n]);
    return stats;
  };
  MapMetadata meta;
  meta.grid = grid;
  SampleSink sink({0, plane + 3}, /*keep_extremes=*/true);
  sink.begin(meta);
  EXPECT_FALSE(sink.minimum().found);
  for (const auto& [z, count] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 3}, {3, 1}, {4, 5}, {9, 3}}) {
    std::vector<StatsAccum> stats;
    for (std::int64_t k = 0; k < count; ++k) stats.push_back(stats_of(z + k));
    sink.write_slab({z, count}, map.data() + static_cast<std::size_t>(z) * plane, stats.data());
  }
  const auto finite_first = [&](bool minimum) {
    std::size_t best = map.size();
    for (std::size_t i = 0; i < map.size(); ++i) {
      if (!std::isfinite(map[i])) continue;
      if (best == map.size() || (minimum ? map[i] < map[best] : map[i] > map[best])) best = i;
    }
    return best;
  };
  ASSERT_TRUE(sink.minimum().found && sink.maximum().found);
  EXPECT_EQ(sink.minimum().index, finite_first(true));
  EXPECT_EQ(sink.minimum().index, 3 * plane + 17);
  EXPECT_EQ(sink.minimum().value, -80.0f);
  EXPECT_EQ(sink.maximum().index, finite_first(false));
  EXPECT_EQ(sink.maximum().index, 5 * plane + 4);
  EXPECT_EQ(sink.maximum().value, 90.0f);
  EXPECT_EQ(sink.values()[1], map[plane + 3]);  // the sample itself as before

  // Without keep_extremes nothing is searched.
  SampleSink plain({0}, false);
  plain.begin(meta);
  std::vector<StatsAccum> stats{stats_of(0)};
  plain.write_slab({0, 1}, map.data(), stats.data());
  EXPECT_FALSE(plain.minimum().found);
}

}  // namespace
}  // namespace dcs::pipeline
