// MRC2014 writer: header words byte by byte, streaming in slabs, statistics rewritten by
// finish(), atomic output; and the |V| percentile estimator behind the colour range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "../io/output/output_test_util.hpp"
#include "dcs/error.hpp"
#include "dcs/io/colour_range.hpp"
#include "dcs/io/mrc.hpp"

namespace dcs::io {
namespace {

using test::ScratchDir;

std::vector<unsigned char> file_bytes(const std::string& path) {
  const std::string text = test::read_bytes(path);
  return {text.begin(), text.end()};
}
bool exists(const std::string& path) { return std::ifstream(path).good(); }

// Word w (1-based, as in the MRC2014 table), read without the writer's code.
std::int32_t word_int(const unsigned char* h, int w) {
  return static_cast<std::int32_t>(
      std::uint32_t{h[4 * (w - 1)]} | std::uint32_t{h[4 * (w - 1) + 1]} << 8 |
      std::uint32_t{h[4 * (w - 1) + 2]} << 16 | std::uint32_t{h[4 * (w - 1) + 3]} << 24);
}
float word_float(const unsigned char* h, int w) {
  const std::int32_t bits = word_int(h, w);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

MapMetadata sample(const std::vector<float>& values) {
  return test::sample_metadata(test::asymmetric_grid(3, 4, 5), values);
}

TEST(MrcHeader, WordsFollowMrc2014) {
  const GridSpec grid = test::asymmetric_grid(3, 4, 5);  // spacing 0.5 0.75 1.25, origin -12.5 ...
  const std::vector<float> values = test::index_map(grid);
  const MapMetadata meta = sample(values);
  const auto h = mrc_header(meta, &meta.stats);
  EXPECT_EQ(word_int(h.data(), 1), 3);
  EXPECT_EQ(word_int(h.data(), 2), 4);
  EXPECT_EQ(word_int(h.data(), 3), 5);
  EXPECT_EQ(word_int(h.data(), 4), 2);  // mode 2: float32
  for (int w = 5; w <= 7; ++w) EXPECT_EQ(word_int(h.data(), w), 0) << "NXSTART.. word " << w;
  EXPECT_EQ(word_int(h.data(), 8), 3);  // MX = NX: voxel size = cell / MX = spacing
  EXPECT_EQ(word_int(h.data(), 9), 4);
  EXPECT_EQ(word_int(h.data(), 10), 5);
  EXPECT_FLOAT_EQ(word_float(h.data(), 11), 1.5f);   // 3 * 0.5
  EXPECT_FLOAT_EQ(word_float(h.data(), 12), 3.0f);   // 4 * 0.75
  EXPECT_FLOAT_EQ(word_float(h.data(), 13), 6.25f);  // 5 * 1.25
  for (int w = 14; w <= 16; ++w) EXPECT_EQ(word_float(h.data(), w), 90.0f);
  EXPECT_EQ(word_int(h.data(), 17), 1);
  EXPECT_EQ(word_int(h.data(), 18), 2);
  EXPECT_EQ(word_int(h.data(), 19), 3);
  EXPECT_EQ(word_float(h.data(), 20), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(word_float(h.data(), 21), *std::max_element(values.begin(), values.end()));
  double sum = 0, sq = 0;
  for (float v : values) sum += v, sq += double{v} * v;
  const auto n = static_cast<double>(values.size());
  const double mean = sum / n;
  EXPECT_NEAR(word_float(h.data(), 22), mean, 1e-4 * std::fabs(mean) + 1e-6);
  EXPECT_NEAR(word_float(h.data(), 55), std::sqrt(sq / n - mean * mean), 1e-3);
  EXPECT_EQ(word_int(h.data(), 23), 1);  // ISPG: a volume
  EXPECT_EQ(word_int(h.data(), 24), 0);  // no extended header
  EXPECT_EQ(word_int(h.data(), 27), 0);
  EXPECT_EQ(word_int(h.data(), 28), 20140);
  EXPECT_EQ(word_float(h.data(), 50), -12.5f);
  EXPECT_EQ(word_float(h.data(), 51), 3.25f);
  EXPECT_EQ(word_float(h.data(), 52), 101.875f);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(h.data()) + 208, 4), "MAP ");
  EXPECT_EQ(h[212], 0x44);
  EXPECT_EQ(h[213], 0x44);
  EXPECT_EQ(h[214], 0);
  EXPECT_EQ(h[215], 0);
  const int labels = word_int(h.data(), 56);
  EXPECT_GE(labels, 3);
  EXPECT_LE(labels, 10);
  const std::string first(reinterpret_cast<const char*>(h.data()) + 224, 80);
  EXPECT_EQ(first.rfind("dcs ", 0), 0u) << first;
  const std::string second(reinterpret_cast<const char*>(h.data()) + 224 + 80, 80);
  EXPECT_NE(second.find("kT/e"), std::string::npos) << second;
  const std::string unused(reinterpret_cast<const char*>(h.data()) + 224 + 80 * labels, 80);
  EXPECT_EQ(unused, std::string(80, ' '));
}

TEST(MrcHeader, WithoutStatisticsMarksThemUndetermined) {
  const std::vector<float> values = test::index_map(test::asymmetric_grid(3, 4, 5));
  const auto h = mrc_header(sample(values), nullptr);
  EXPECT_LT(word_float(h.data(), 21), word_float(h.data(), 20));  // DMAX < DMIN
  EXPECT_LT(word_float(h.data(), 22), word_float(h.data(), 20));  // DMEAN below both
  EXPECT_LT(word_float(h.data(), 55), 0.0f);                      // RMS < 0
}

TEST(MrcWriter, SlabsInOrderGiveHeaderThenValues) {
  ScratchDir dir;
  const GridSpec grid = test::asymmetric_grid(3, 4, 5);
  const std::vector<float> values = test::index_map(grid);
  const MapMetadata meta = sample(values);
  const std::string path = dir.file("map.mrc");
  {
    MrcWriter writer(path, false);
    writer.begin(meta);
    const std::size_t plane = grid.plane_points();
    writer.write_slab(0, 2, values.data());
    writer.write_slab(2, 1, values.data() + 2 * plane);
    writer.write_slab(3, 2, values.data() + 3 * plane);
    writer.finish(meta.stats);
    EXPECT_FALSE(exists(path));  // nothing under the final name before commit()
    writer.commit();
  }
  const std::vector<unsigned char> bytes = file_bytes(path);
  ASSERT_EQ(bytes.size(), kMrcHeaderBytes + 4 * values.size());
  const auto expected = mrc_header(meta, &meta.stats);
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), bytes.begin()));
  EXPECT_EQ(0, std::memcmp(bytes.data() + kMrcHeaderBytes, values.data(), 4 * values.size()));
  // Point (i, j, k) = (2, 3, 4) sits at byte 1024 + 4 * (i + nx * (j + ny * k)).
  float v;
  std::memcpy(&v, bytes.data() + kMrcHeaderBytes + 4 * (2 + 3 * (3 + 4 * 4)), 4);
  EXPECT_EQ(v, test::index_value(2, 3, 4));
}

TEST(MrcWriter, OutOfOrderSlabOrMissingPlanesAreRefusedAndLeaveNothing) {
  ScratchDir dir;
  const GridSpec grid = test::asymmetric_grid(3, 4, 5);
  const std::vector<float> values = test::index_map(grid);
  const MapMetadata meta = sample(values);
  {
    MrcWriter writer(dir.file("gap.mrc"), false);
    writer.begin(meta);
    writer.write_slab(0, 1, values.data());
    EXPECT_THROW(writer.write_slab(2, 1, values.data()), UsageError);
    EXPECT_THROW(writer.finish(meta.stats), UsageError);  // planes 1-4 missing
    EXPECT_THROW(writer.commit(), UsageError);
  }
  EXPECT_EQ(dir.entries().size(), 0u) << "temporary left behind";
}

TEST(MrcWriter, RefusesToOverwriteWithoutForce) {
  ScratchDir dir;
  const GridSpec grid = test::asymmetric_grid(3, 4, 5);
  const std::vector<float> values = test::index_map(grid);
  const std::string path = dir.file("m.mrc");
  write_mrc(path, values.data(), sample(values), false);
  EXPECT_THROW(write_mrc(path, values.data(), sample(values), false), IoError);
  EXPECT_NO_THROW(write_mrc(path, values.data(), sample(values), true));
  EXPECT_EQ(file_bytes(path).size(), kMrcHeaderBytes + 4 * values.size());
}

TEST(MrcHeader, RefusesCountsBeyondInt32) {
  MapMetadata meta;
  meta.grid.counts = {std::int64_t{1} << 31, 1, 1};
  meta.grid.spacing = {1, 1, 1};
  EXPECT_THROW(mrc_header(meta, nullptr), UsageError);
}

// The pipeline's view: MrcSink through the MapSink interface gives write_mrc's bytes; abort()
// leaves nothing.
class NoReader final : public MapReader {
 public:
  void read_planes(const Slab&, float*) override { ADD_FAILURE() << "MrcSink read the map back"; }
  void read_x_columns(std::int64_t, std::int64_t, float*) override {
    ADD_FAILURE() << "MrcSink read the map back";
  }
  std::int64_t x_chunk() const override { return 1; }
};

TEST(MrcSink, StreamsSlabsLikeWriteMrcAndAbortLeavesNothing) {
  ScratchDir dir;
  const GridSpec grid = test::asymmetric_grid(3, 4, 5);
  const std::vector<float> values = test::index_map(grid);
  MapMetadata meta = sample(values);
  write_mrc(dir.file("whole.mrc"), values.data(), meta, false);
  NoReader reader;
  {
    MrcSink sink(dir.file("sink.mrc"), false);
    MapSink& as_sink = sink;
    EXPECT_EQ(as_sink.memory_bytes(), 0u);
    EXPECT_TRUE(as_sink.wants_slabs());
    as_sink.begin(meta);
    const std::size_t plane = grid.plane_points();
    as_sink.write_slab(Slab{0, 3}, values.data(), nullptr);
    as_sink.write_slab(Slab{3, 2}, values.data() + 3 * plane, nullptr);
    as_sink.finish(meta, reader);
    as_sink.commit();
  }
  EXPECT_EQ(file_bytes(dir.file("sink.mrc")), file_bytes(dir.file("whole.mrc")));
  {
    MrcSink sink(dir.file("aborted.mrc"), false);
    sink.begin(meta);
    sink.write_slab(Slab{0, 2}, values.data(), nullptr);
    sink.abort();
  }
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"sink.mrc", "whole.mrc"}));
}

// --- colour range ----------------------------------------------------------------------------

double exact_percentile(std::vector<double> abs_values, double p) {
  std::sort(abs_values.begin(), abs_values.end());
  const auto n = abs_values.size();
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  return abs_values[rank - 1];
}

TEST(ColourRange, PercentilesWithinATenthOfAPercentOverManyDecades) {
  std::mt19937_64 rng(12345);
  std::lognormal_distribution<double> magnitude(0.0, 3.0);  // spans ~1e-4 .. 1e4
  std::vector<float> values(100'000);
  std::vector<double> abs_values;
  for (float& v : values) {
    v = static_cast<float>((rng() & 1 ? 1.0 : -1.0) * magnitude(rng));
    abs_values.push_back(std::fabs(double{v}));
  }
  AbsValueHistogram whole, parts, other;
  whole.add(values.data(), values.size());
  parts.add(values.data(), 30'000);  // two "slabs", merged
  other.add(values.data() + 30'000, 70'000);
  parts.merge(other);
  for (double p : {0.0, 1.0, 5.0, 50.0, 95.0, 99.0, 99.9, 100.0}) {
    const double exact = exact_percentile(abs_values, p);
    EXPECT_NEAR(whole.percentile(p), exact, 1e-3 * exact) << "percentile " << p;
    EXPECT_EQ(parts.percentile(p), whole.percentile(p)) << "percentile " << p;
  }
  const ColourRange range = robust_colour_range(whole);
  EXPECT_EQ(range.low, whole.percentile(1.0));
  EXPECT_EQ(range.high, whole.percentile(99.0));
  EXPECT_LT(range.high, exact_percentile(abs_values, 100.0));
}

TEST(ColourRange, SkipsNonFiniteAndHandlesZerosAndEmpty) {
  AbsValueHistogram h;
  EXPECT_EQ(h.percentile(99.0), 0.0);
  const float values[] = {0.0f, -0.0f, 0.0f, 2.0f, NAN, INFINITY};
  h.add(values, 6);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.nonfinite(), 2u);
  EXPECT_LT(h.percentile(50.0), 1e-30);  // 3 of 4 values are zero
  EXPECT_NEAR(h.percentile(100.0), 2.0, 2e-3);
  EXPECT_THROW(h.percentile(101.0), UsageError);
  EXPECT_THROW(robust_colour_range(h, 99.0, 1.0), UsageError);
}

TEST(ColourRange, SinkCountsEverySlab) {
  const GridSpec grid = test::asymmetric_grid(6, 7, 8);
  const std::vector<float> values = test::index_map(grid);
  AbsValueHistogram whole;
  whole.add(values.data(), values.size());
  ColourRangeSink sink(5.0, 95.0);
  NoReader reader;
  sink.begin(test::sample_metadata(grid, values));
  EXPECT_EQ(sink.memory_bytes(), std::size_t{1} << 20);
  const std::size_t plane = grid.plane_points();
  for (std::int64_t z = 0; z < 8; z += 3)
    sink.write_slab(Slab{z, std::min<std::int64_t>(3, 8 - z)},
                    values.data() + static_cast<std::size_t>(z) * plane, nullptr);
  sink.finish(test::sample_metadata(grid, values), reader);
  EXPECT_EQ(sink.histogram().count(), values.size());
  const ColourRange range = sink.range();
  EXPECT_EQ(range.low, whole.percentile(5.0));
  EXPECT_EQ(range.high, whole.percentile(95.0));
  EXPECT_EQ(range.high_percentile, 95.0);
}

// A map held in memory that records which planes were read back.
class PlaneReader final : public MapReader {
 public:
  PlaneReader(const GridSpec& grid, const std::vector<float>& values)
      : grid_(grid), values_(values) {}
  void read_planes(const Slab& slab, float* out) override {
    const std::size_t plane = grid_.plane_points();
    for (std::int64_t k = 0; k < slab.z_count; ++k) read.push_back(slab.z_begin + k);
    std::copy_n(values_.begin() +
                    static_cast<std::ptrdiff_t>(slab.z_begin) * static_cast<std::ptrdiff_t>(plane),
                static_cast<std::size_t>(slab.z_count) * plane, out);
  }
  void read_x_columns(std::int64_t, std::int64_t, float*) override {
    ADD_FAILURE() << "columns read";
  }
  std::int64_t x_chunk() const override { return 1; }
  std::vector<std::int64_t> read;

 private:
  GridSpec grid_;
  const std::vector<float>& values_;
};

// Large maps: whole planes evenly spread in z, the same for any slabbing; a resumed run (slabs
// with gaps) reads back only the sampled planes it did not see, and gets the same range.
TEST(ColourRange, SampledPlanesDependOnlyOnTheGrid) {
  const GridSpec grid = test::asymmetric_grid(6, 7, 40);
  std::vector<float> values = test::index_map(grid);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> noise(0.5f, 2.0f);
  for (float& v : values) v *= noise(rng);
  const MapMetadata meta = test::sample_metadata(grid, values);
  const std::size_t plane = grid.plane_points();
  const std::size_t budget = 4 * plane;  // points / budget = 10: planes 0, 10, 20, 30
  auto feed = [&](ColourRangeSink& sink, std::int64_t z, std::int64_t count) {
    sink.write_slab(Slab{z, count}, values.data() + static_cast<std::size_t>(z) * plane, nullptr);
  };

  ColourRangeSink streamed(1.0, 99.0, budget);
  EXPECT_TRUE(streamed.wants_slabs());
  EXPECT_FALSE(streamed.wants_done_slabs());  // a resumed run need not read the map back for it
  streamed.begin(meta);
  EXPECT_EQ(streamed.plane_stride(), 10);
  for (std::int64_t z = 0; z < 40; z += 3) feed(streamed, z, std::min<std::int64_t>(3, 40 - z));
  PlaneReader none(grid, values);
  streamed.finish(meta, none);
  EXPECT_TRUE(none.read.empty());
  EXPECT_EQ(streamed.histogram().count(), 4 * plane);

  AbsValueHistogram expected;
  for (std::int64_t z : {0, 10, 20, 30})
    expected.add(values.data() + static_cast<std::size_t>(z) * plane, plane);
  const ColourRange range = streamed.range();
  EXPECT_EQ(range.high, expected.percentile(99.0));
  EXPECT_EQ(range.low, expected.percentile(1.0));
  EXPECT_EQ(range.values, 4 * plane);
  EXPECT_TRUE(range.known());

  ColourRangeSink resumed(1.0, 99.0, budget);
  resumed.begin(meta);
  feed(resumed, 8, 8);    // planes 8..15 computed now (10 among them)
  feed(resumed, 28, 12);  // 28..39 (30)
  PlaneReader reader(grid, values);
  resumed.complete(reader);
  EXPECT_EQ(reader.read, (std::vector<std::int64_t>{0, 20}));
  resumed.complete(reader);  // idempotent
  EXPECT_EQ(reader.read.size(), 2u);
  EXPECT_EQ(resumed.range().high, range.high);
  EXPECT_EQ(resumed.range().low, range.low);
  EXPECT_EQ(resumed.histogram().count(), 4 * plane);

  // Small maps (the default budget): every plane.
  ColourRangeSink all;
  all.begin(meta);
  EXPECT_EQ(all.plane_stride(), 1);
  PlaneReader everything(grid, values);
  all.complete(everything);
  EXPECT_EQ(everything.read.size(), 40u);
  EXPECT_EQ(all.histogram().count(), values.size());
}

}  // namespace
}  // namespace dcs::io
