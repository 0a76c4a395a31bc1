// Point lists (dcs/io/point_list.hpp): CSV and blank-separated x y z, headers, comments, .gz,
// and every refusal with its line and reason.
#include <zlib.h>

#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "../pqr/pqr_test_util.hpp"
#include "../scratch_dir.hpp"
#include "dcs/io/point_list.hpp"

namespace {

using dcs::Vec3;
using dcs::test::expect_input_error;

std::vector<Vec3> parse(const std::string& text, const std::string& name = "p.csv") {
  std::istringstream in(text);
  return dcs::io::parse_point_list(in, name);
}

TEST(PointList, CsvWithHeaderCommentsAndBlankLines) {
  const auto points = parse(
      "# points on a line\n"
      "x,y,z\n"
      "\n"
      "1,2,3\n"
      " -1.5e1 , +2.25 ,.5   # trailing comment\r\n"
      "0,0,0");
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0], (Vec3{1, 2, 3}));
  EXPECT_EQ(points[1], (Vec3{-15, 2.25, 0.5}));
  EXPECT_EQ(points[2], (Vec3{0, 0, 0}));
}

TEST(PointList, BlankSeparatedWithoutHeader) {
  const auto points = parse("1 2 3\n\t4\t5   6\r7 8 9\n");
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[1], (Vec3{4, 5, 6}));
  EXPECT_EQ(points[2], (Vec3{7, 8, 9}));
}

TEST(PointList, BlankSeparatedHeader) {
  const auto points = parse("X Y Z\n1 2 3\n");
  ASSERT_EQ(points.size(), 1u);
}

struct BadList {
  const char* label;
  const char* text;
  std::uint64_t line;
  const char* part;
};

class PointListMalformed : public ::testing::TestWithParam<BadList> {};

TEST_P(PointListMalformed, RefusedWithLineAndReason) {
  const BadList& c = GetParam();
  expect_input_error([&] { (void)parse(c.text, "bad.csv"); }, "bad.csv", c.line, {c.part});
}

const BadList kBad[] = {
    {"four_numbers", "1,2,3\n1,2,3,4\n", 2, "expected 3 numbers (x y z), found 4 fields"},
    {"two_numbers", "1 2\n", 1, "expected 3 numbers (x y z), found 2 fields"},
    {"trailing_comma", "1,2,3,\n", 1, "found 4 fields"},
    {"empty_field", "1,,3\n", 1, "y '' is not a number"},
    {"second_header", "x,y,z\nx,y,z\n", 2, "x 'x' is not a number"},
    {"text_in_data", "1,2,3\n1,two,3\n", 2, "y 'two' is not a number"},
    {"half_header", "x,2,3\n", 1, "x 'x' is not a number"},
    {"nan", "1 nan 3\n", 1, "y 'nan' is not a finite number"},
    {"inf", "-inf 2 3\n", 1, "x '-inf' is not a finite number"},
    {"overflow", "1 2 1e400\n", 1, "z '1e400' is not a finite number"},
    {"too_far", "1 2e7 3\n", 1, "y 2e+07 is outside the accepted ±1e+07 Å"},
    {"empty", "", 0, "empty file"},
    {"blank_lines", "\n  \n", 0, "empty file"},
    {"only_comments", "# a\n# b\n", 0, "no points"},
    {"only_header", "x,y,z\n", 0, "no points"},
};

INSTANTIATE_TEST_SUITE_P(Cases, PointListMalformed, ::testing::ValuesIn(kBad),
                         [](const ::testing::TestParamInfo<BadList>& param_info) {
                           return std::string(param_info.param.label);
                         });

TEST(PointList, LongLineRefusedAsNotAPointList) {
  const std::string text = "1 2 3\n" + std::string(dcs::io::kMaxLineBytes + 1, '1') + "\n";
  expect_input_error([&] { (void)parse(text, "long.csv"); }, "long.csv", 2, {"not a point list"});
}

TEST(PointList, ReadsFilesPlainAndGzipped) {
  dcs::test::ScratchDir dir;
  const std::string text = "x,y,z\n1,2,3\n4,5,6\n";
  dcs::test::write_bytes(dir.file("p.csv"), text);
  EXPECT_EQ(dcs::io::read_point_list(dir.file("p.csv")).size(), 2u);
  gzFile gz = gzopen(dir.file("p.csv.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(gz);
  const auto points = dcs::io::read_point_list(dir.file("p.csv.gz"));
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1], (Vec3{4, 5, 6}));
  dcs::test::write_bytes(dir.file("empty.xyz"), "");
  expect_input_error([&] { (void)dcs::io::read_point_list(dir.file("empty.xyz")); },
                     dir.file("empty.xyz"), 0, {"empty file"});
  expect_input_error([&] { (void)dcs::io::read_point_list(dir.file("missing.csv")); },
                     dir.file("missing.csv"), 0, {"no such file"});
}

}  // namespace
