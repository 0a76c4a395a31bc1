// OpenDX writer and reader: the exact APBS dialect, z-fastest order, round trips, gzip, --force
// and failures that leave nothing behind.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/opendx.hpp"
#include "output_test_util.hpp"

namespace dcs::io {
namespace {

using test::ScratchDir;

/// The lines of a DX file's data section (after "data follows", before "attribute"), found
/// without our reader.
std::vector<std::string> data_lines(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> lines;
  bool in_data = false;
  while (std::getline(in, line)) {
    if (line.find("data follows") != std::string::npos) {
      in_data = true;
      continue;
    }
    if (!in_data) continue;
    if (line.rfind("attribute", 0) == 0) break;
    lines.push_back(line);
  }
  return lines;
}

/// The data section of a DX file as raw tokens, read without our reader.
std::vector<double> raw_data_tokens(const std::string& text) {
  std::vector<double> values;
  for (const std::string& line : data_lines(text)) {
    std::istringstream words(line);
    double value = 0.0;
    while (words >> value) values.push_back(value);
  }
  return values;
}

/// Relative rounding of %12.6e: half a unit in the 7th significant digit.
double dx_tolerance(double value) { return 5.0000001e-7 * std::fabs(value) + 1e-300; }

// The complete file for a 2 x 1 x 2 map, byte for byte. Everything from "object 1" on is
// APBS's Vgrid_writeDX output for the same grid: "%12.6e" fields, a space after every value,
// three values per line, z fastest, a final partial line, the same trailer.
TEST(OpenDx, GoldenFile) {
  ScratchDir dir;
  GridSpec grid;
  grid.counts = {2, 1, 2};
  grid.origin = {-1.5, 0.0, 2.25};
  grid.spacing = {0.5, 1.0, 0.25};
  // x fastest: (0,0,0), (1,0,0), (0,0,1), (1,0,1)
  const std::vector<float> values{1.5f, -2.0f, 3.125e-3f, 123456.789f};
  MapMetadata meta;
  meta.grid = grid;
  meta.coulomb_factor = 560.0;
  meta.provenance.version = "0.1.0";
  const std::string path = dir.file("golden.dx");
  write_opendx(path, values.data(), meta, {});

  const std::string expected =
      "# Data from dcs 0.1.0\n"
      "# \n"
      "# POTENTIAL (kT/e)\n"
      "# \n"
      "# Direct Coulomb summation: V(p) = C * sum_i q_i / max(|p - r_i|, r_min)\n"
      "# units: kT/e (temperature 298.15 K, dielectric 1)\n"
      "# C = 560 kT*A/e^2; distances clamped at r_min = 0.1 A\n"
      "# grid: 2 x 1 x 2 points, node-centred, origin and deltas in Angstrom; values\n"
      "#   listed z fastest\n"
      "object 1 class gridpositions counts 2 1 2\n"
      "origin -1.500000e+00 0.000000e+00 2.250000e+00\n"
      "delta 5.000000e-01 0.000000e+00 0.000000e+00\n"
      "delta 0.000000e+00 1.000000e+00 0.000000e+00\n"
      "delta 0.000000e+00 0.000000e+00 2.500000e-01\n"
      "object 2 class gridconnections counts 2 1 2\n"
      "object 3 class array type double rank 0 items 4 data follows\n"
      "1.500000e+00 3.125000e-03 -2.000000e+00 \n"
      "1.234568e+05 \n"
      "attribute \"dep\" string \"positions\"\n"
      "object \"regular positions regular connections\" class field\n"
      "component \"positions\" value 1\n"
      "component \"connections\" value 2\n"
      "component \"data\" value 3\n";
  EXPECT_EQ(test::read_bytes(path), expected);
}

TEST(OpenDx, FieldsMatchPrintfE12_6) {
  // Values whose %12.6e needs padding, rounding and three-digit exponents.
  ScratchDir dir;
  GridSpec grid;
  grid.counts = {1, 1, 6};
  grid.origin = {1e-7, -123456789.0, 0.0};
  grid.spacing = {1.0, 1.0, 1.0};
  const std::vector<float> values{0.0f, -0.0f, 9.9999996e-5f, 3.4e38f, -1.17549435e-38f, 0.5f};
  MapMetadata meta;
  meta.grid = grid;
  const std::string path = dir.file("fields.dx");
  write_opendx(path, values.data(), meta, {});
  std::string expected_data;
  char field[64];
  for (std::size_t n = 0; n < values.size(); ++n) {
    std::snprintf(field, sizeof field, "%12.6e ", static_cast<double>(values[n]));
    expected_data += field;
    if (n % 3 == 2) expected_data += '\n';
  }
  const std::string text = test::read_bytes(path);
  EXPECT_NE(text.find("data follows\n" + expected_data + "attribute"), std::string::npos) << text;
  std::snprintf(field, sizeof field, "origin %12.6e %12.6e %12.6e\n", grid.origin[0],
                grid.origin[1], grid.origin[2]);
  EXPECT_NE(text.find(field), std::string::npos) << text;
}

TEST(OpenDx, DataIsZFastestOnAsymmetricGrid) {
  ScratchDir dir;
  const GridSpec grid = test::asymmetric_grid(3, 4, 5);
  const std::vector<float> values = test::index_map(grid);
  const std::string path = dir.file("order.dx");
  write_opendx(path, values.data(), test::sample_metadata(grid, values), {});

  const std::vector<double> tokens = raw_data_tokens(test::read_bytes(path));
  ASSERT_EQ(tokens.size(), 60u);
  std::size_t n = 0;
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j)
      for (std::int64_t k = 0; k < 5; ++k, ++n)
        EXPECT_EQ(tokens[n], static_cast<double>(test::index_value(i, j, k)))
            << "token " << n << " should be point (" << i << ", " << j << ", " << k << ")";
}

TEST(OpenDx, ThreeValuesPerLineAndPartialLastLine) {
  ScratchDir dir;
  const GridSpec grid = test::asymmetric_grid(2, 2, 2);  // 8 values: 3 + 3 + 2
  const std::vector<float> values = test::index_map(grid);
  const std::string path = dir.file("lines.dx");
  write_opendx(path, values.data(), test::sample_metadata(grid, values), {});
  const std::regex value_line(R"(((-?| )\d\.\d{6}e[+-]\d{2,3} ){1,3})");
  std::vector<std::size_t> per_line;
  for (const std::string& line : data_lines(test::read_bytes(path))) {
    EXPECT_TRUE(std::regex_match(line, value_line)) << "'" << line << "'";
    per_line.push_back(static_cast<std::size_t>(std::count(line.begin(), line.end(), 'e')));
  }
  EXPECT_EQ(per_line, (std::vector<std::size_t>{3, 3, 2}));
}

TEST(OpenDx, RoundTripWithinPrintfRounding) {
  ScratchDir dir;
  const GridSpec grid = test::asymmetric_grid(3, 4, 5);
  std::vector<float> values = test::index_map(grid);
  values[7] = 1.2345678e-12f;  // small and irrational-looking values round at the 7th digit
  values[8] = -987654.3f;
  const std::string path = dir.file("round.dx");
  write_opendx(path, values.data(), test::sample_metadata(grid, values), {});

  const OpenDxMap map = read_opendx(path);
  EXPECT_EQ(map.grid.counts, grid.counts);
  for (std::size_t axis = 0; axis < 3; ++axis) {
    EXPECT_NEAR(map.grid.origin[axis], grid.origin[axis], dx_tolerance(grid.origin[axis]));
    EXPECT_NEAR(map.grid.spacing[axis], grid.spacing[axis], dx_tolerance(grid.spacing[axis]));
  }
  ASSERT_EQ(map.values.size(), values.size());
  for (std::size_t n = 0; n < values.size(); ++n)
    EXPECT_NEAR(map.values[n], values[n], dx_tolerance(values[n])) << "index " << n;
  ASSERT_GE(map.comments.size(), 4u);
  EXPECT_EQ(map.comments[0], "Data from dcs 0.1.0 (git 0123456789ab)");
  EXPECT_EQ(map.comments[2], "POTENTIAL (kT/e)");
}

TEST(OpenDx, HeaderCarriesUnitsAndProvenanceInShortLines) {
  ScratchDir dir;
  const GridSpec grid = test::asymmetric_grid();
  const std::vector<float> values = test::index_map(grid);
  MapMetadata meta = test::sample_metadata(grid, values);
  meta.physics.unit = Unit::KcalPerMolPerE;
  meta.coulomb_factor = coulomb_factor(meta.physics);
  meta.provenance.command_line = "dcs --atoms " + std::string(300, 'x') + " --grid 3 4 5\n--dx y";
  const std::string path = dir.file("header.dx");
  write_opendx(path, values.data(), meta, {});
  const std::string text = test::read_bytes(path);
  EXPECT_NE(text.find("# POTENTIAL (kcal/mol/e)\n"), std::string::npos);
  EXPECT_NE(text.find("C = 332.06"), std::string::npos);
  // The whole digest stays on one line.
  EXPECT_NE(text.find("# sha256: " + meta.provenance.input_sha256 + "\n"), std::string::npos);
  EXPECT_NE(text.find("backend cpu-reference, kernel reference"), std::string::npos);
  std::istringstream in(text);
  std::string line;
  std::string command;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) != 0) continue;
    EXPECT_LE(line.size(), 79u) << line;
    if (line.rfind("# command:", 0) == 0 || (!command.empty() && line.rfind("#   ", 0) == 0))
      command += line;
  }
  EXPECT_NE(command.find("--dx y"), std::string::npos) << "the newline became a space: " << command;
}

TEST(OpenDx, GzipByExtensionAndByOption) {
  ScratchDir dir;
  const GridSpec grid = test::asymmetric_grid(3, 4, 5);
  const std::vector<float> values = test::index_map(grid);
  const MapMetadata meta = test::sample_metadata(grid, values);
  write_opendx(dir.file("plain.dx"), values.data(), meta, {});
  write_opendx(dir.file("map.dx.gz"), values.data(), meta, {});
  OpenDxOptions gzip;
  gzip.gzip = true;
  write_opendx(dir.file("option.dx"), values.data(), meta, gzip);

  for (const char* name : {"map.dx.gz", "option.dx"}) {
    const std::string bytes = test::read_bytes(dir.file(name));
    ASSERT_GE(bytes.size(), 2u);
    EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f) << name;
    EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b) << name;
    const OpenDxMap map = read_opendx(dir.file(name));
    EXPECT_EQ(map.values, read_opendx(dir.file("plain.dx")).values) << name;
  }
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"map.dx.gz", "option.dx", "plain.dx"}));

  OpenDxOptions smallest;
  smallest.gzip_level = 9;
  write_opendx(dir.file("nine.dx.gz"), values.data(), meta, smallest);
  EXPECT_EQ(read_opendx(dir.file("nine.dx.gz")).values, read_opendx(dir.file("plain.dx")).values);
  smallest.gzip_level = 0;
  EXPECT_THROW(write_opendx(dir.file("zero.dx.gz"), values.data(), meta, smallest), UsageError);
  EXPECT_FALSE(std::filesystem::exists(dir.file("zero.dx.gz")));
}

TEST(OpenDx, RefusesToOverwriteWithoutForce) {
  ScratchDir dir;
  const GridSpec grid = test::asymmetric_grid();
  const std::vector<float> values = test::index_map(grid);
  const MapMetadata meta = test::sample_metadata(grid, values);
  const std::string path = dir.file("exists.dx");
  test::write_bytes(path, "precious");
  try {
    write_opendx(path, values.data(), meta, {});
    FAIL() << "expected IoError";
  } catch (const IoError& error) {
    EXPECT_EQ(std::string(error.what()), path + " exists; use --force to overwrite");
  }
  EXPECT_EQ(test::read_bytes(path), "precious");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"exists.dx"});

  OpenDxOptions force;
  force.force = true;
  write_opendx(path, values.data(), meta, force);
  EXPECT_EQ(read_opendx(path).grid.counts, grid.counts);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"exists.dx"});
}

TEST(OpenDx, NonFiniteValueMidwayLeavesNoFile) {
  // 64^3 values make ~3.4 MB of text, flushed in 1 MiB blocks: when the NaN in the last
  // x-column is reached, megabytes are already in the temporary. Nothing may remain.
  ScratchDir dir;
  const GridSpec grid = test::asymmetric_grid(64, 64, 64);
  std::vector<float> values(grid.points(), 1.0f);
  values[grid.index(63, 5, 7)] = std::nanf("");
  const std::string path = dir.file("nan.dx");
  try {
    write_opendx(path, values.data(), test::sample_metadata(grid, values), {});
    FAIL() << "expected IoError";
  } catch (const IoError& error) {
    EXPECT_NE(std::string(error.what()).find("(63, 5, 7)"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(dir.entries().empty());
  EXPECT_EQ(pending_temporary_count(), 0u);
}

TEST(OpenDx, MissingDirectoryIsAnIoErrorNamingIt) {
  ScratchDir dir;
  const GridSpec grid = test::asymmetric_grid();
  const std::vector<float> values = test::index_map(grid);
  const std::string path = dir.file("no/such/dir/map.dx");
  try {
    write_opendx(path, values.data(), test::sample_metadata(grid, values), {});
    FAIL() << "expected IoError";
  } catch (const IoError& error) {
    EXPECT_NE(std::string(error.what()).find(dir.file("no/such/dir")), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("does not exist"), std::string::npos);
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(OpenDx, ReadsGridDataFormatsTestFile) {
  // An independent writer's file (GridDataFormats' own test data), if installed.
  const std::string path = "/usr/lib/python3/dist-packages/gridData/tests/datafiles/test.dx";
  if (!std::ifstream(path)) GTEST_SKIP() << path << " not installed (python3-griddataformats)";
  const OpenDxMap map = read_opendx(path);
  EXPECT_EQ(map.grid.counts, (std::array<std::int64_t, 3>{2, 2, 2}));
  EXPECT_EQ(map.grid.origin, (Vec3{20.1, 3.0, -10.0}));
  EXPECT_EQ(map.grid.spacing, (Vec3{1.0, 1.0, 1.0}));
  // gridData reads this file as grid[1,0,0] = 1e-6 and grid[1,0,1] = -1e6.
  EXPECT_EQ(map.values[map.grid.index(1, 0, 0)], 1e-6);
  EXPECT_EQ(map.values[map.grid.index(1, 0, 1)], -1e6);
  EXPECT_EQ(map.values[map.grid.index(0, 1, 1)], 1.0);
}

struct MalformedCase {
  const char* name;
  std::string text;
  std::uint64_t line;
  const char* reason;
};

std::string header(const std::string& counts = "2 1 1", const std::string& items = "2") {
  return "# comment\n"
         "object 1 class gridpositions counts " +
         counts +
         "\n"
         "origin 0 0 0\n"
         "delta 1 0 0\n"
         "delta 0 1 0\n"
         "delta 0 0 1\n"
         "object 2 class gridconnections counts " +
         counts +
         "\n"
         "object 3 class array type double rank 0 items " +
         items + " data follows\n";
}

class OpenDxMalformed : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(OpenDxMalformed, IsAnInputErrorWithLineAndReason) {
  ScratchDir dir;
  const MalformedCase& c = GetParam();
  const std::string path = dir.file("bad.dx");
  test::write_bytes(path, c.text);
  try {
    (void)read_opendx(path);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), path);
    EXPECT_EQ(error.line(), c.line) << error.what();
    EXPECT_NE(error.reason().find(c.reason), std::string::npos) << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, OpenDxMalformed,
    ::testing::Values(
        MalformedCase{"empty", "", 0, "no 'object 1 class gridpositions"},
        MalformedCase{"comments_only", "# a\n# b\n", 2, "no 'object 1 class gridpositions"},
        MalformedCase{"bad_count", "object 1 class gridpositions counts 2 x 1\n", 1,
                      "'x' is not a positive integer"},
        MalformedCase{"zero_count", "object 1 class gridpositions counts 2 0 1\n", 1,
                      "'0' is not a positive integer"},
        MalformedCase{"huge_count", "object 1 class gridpositions counts 100000 100000 100000\n", 1,
                      "more values than the file can hold"},
        MalformedCase{"missing_origin", "object 1 class gridpositions counts 2 1 1\ndelta 1 0 0\n",
                      2, "expected 'origin x y z'"},
        MalformedCase{"nan_origin", "object 1 class gridpositions counts 2 1 1\norigin 0 nan 0\n",
                      2, "'nan' is not a finite number"},
        MalformedCase{"flat_oblique_deltas",
                      "object 1 class gridpositions counts 2 1 1\norigin 0 0 0\ndelta 1 0.5 0\n"
                      "delta 2 1 0\ndelta 0 0 1\n",
                      5, "no right-handed volume"},
        MalformedCase{"negative_delta",
                      "object 1 class gridpositions counts 2 1 1\norigin 0 0 0\ndelta -1 0 0\n", 3,
                      "not positive"},
        MalformedCase{"connections_differ",
                      "object 1 class gridpositions counts 2 1 1\norigin 0 0 0\ndelta 1 0 0\n"
                      "delta 0 1 0\ndelta 0 0 1\nobject 2 class gridconnections counts 2 1 2\n",
                      6, "differ from gridpositions"},
        MalformedCase{"items_mismatch", header("2 1 1", "3") + "1 2 3\n", 8,
                      "items 3 differ from the grid's"},
        MalformedCase{"external_data",
                      "object 1 class gridpositions counts 2 1 1\norigin 0 0 0\ndelta 1 0 0\n"
                      "delta 0 1 0\ndelta 0 0 1\nobject 2 class gridconnections counts 2 1 1\n"
                      "object 3 class array type double rank 0 items 2 data file x.bin\n",
                      7, "unexpected 'data'"},
        MalformedCase{"not_a_number", header() + "1.0 abc\n", 9, "'abc' is not a number"},
        MalformedCase{"double_sign", header() + "1.0 +-2.0\n", 9, "'+-2.0' is not a number"},
        MalformedCase{"too_few",
                      header("2 1 1", "2") + "1.0\nattribute \"dep\" string \"positions\"\n", 10,
                      "expected 2 values, found only 1"},
        MalformedCase{"too_many_same_line", header() + "1 2 3\n", 9, "more than the 2 values"},
        MalformedCase{"too_many_next_line", header() + "1 2\n3\n", 10, "more than the 2 values"},
        MalformedCase{"truncated", header("3 1 1", "3") + "1 2\n", 9,
                      "unexpected end of file: expected 3 values, found 2"},
        MalformedCase{"garbage_after", header() + "1 2\nhello\n", 10, "unexpected text"}),
    [](const ::testing::TestParamInfo<MalformedCase>& param_info) {
      return std::string(param_info.param.name);
    });

TEST(OpenDx, MissingFileIsAnInputError) {
  ScratchDir dir;
  try {
    (void)read_opendx(dir.file("absent.dx"));
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.line(), 0u);
    EXPECT_NE(std::string(error.what()).find("No such file"), std::string::npos) << error.what();
  }
}

TEST(OpenDx, ReaderAcceptsCrLfQuotesAndFreeLayout) {
  ScratchDir dir;
  const std::string path = dir.file("free.dx");
  test::write_bytes(path,
                    "object 1 class gridpositions counts 1 2 2\r\n"
                    "origin 1 2 3\r\n# a comment in the header\r\n"
                    "delta 0.5 0 0\r\ndelta 0 0.5 0\r\ndelta 0 0 0.5\r\n"
                    "object 2 class gridconnections counts 1 2 2\r\n"
                    "object 3 class array type \"float\" rank 0 items 4, data follows\r\n"
                    "1\t2\r\n\r\n+3 -4e0\r\n"
                    "attribute \"dep\" string \"positions\"\r\n");
  const OpenDxMap map = read_opendx(path);
  // File order (z fastest): (0,0,0)=1, (0,0,1)=2, (0,1,0)=3, (0,1,1)=-4.
  EXPECT_EQ(map.values, (std::vector<double>{1, 3, 2, -4}));
  EXPECT_EQ(map.comments, std::vector<std::string>{"a comment in the header"});
}

}  // namespace
}  // namespace dcs::io
