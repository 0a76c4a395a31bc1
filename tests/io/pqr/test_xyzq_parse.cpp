// The plain "x y z q" format.
#include <string>

#include <gtest/gtest.h>

#include "dcs/io/pqr.hpp"
#include "pqr_test_util.hpp"

namespace {

using dcs::test::expect_input_error;
using dcs::test::xyzq_from_text;

TEST(XyzqParse, CommentsBlankLinesAndNumberForms) {
  const dcs::System system = xyzq_from_text(
      "# header comment\n"
      "\n"
      "1 2 3 4\n"
      "  -1.5e1\t+2.25   .5 -0.125   # trailing comment\r\n"
      "\t \n"
      "#1 2 3 4 (commented out)\n"
      "0 0 0 0",
      "p.xyzq");
  ASSERT_EQ(system.size(), 3u);
  EXPECT_EQ(system.source_path, "p.xyzq");
  EXPECT_EQ(system.source_format, "xyzq");
  EXPECT_EQ(system.atoms[0].position, (dcs::Vec3{1.0, 2.0, 3.0}));
  EXPECT_EQ(system.atoms[0].charge, 4.0);
  EXPECT_EQ(system.atoms[1].position, (dcs::Vec3{-15.0, 2.25, 0.5}));
  EXPECT_EQ(system.atoms[1].charge, -0.125);
  EXPECT_EQ(system.atoms[1].radius, 0.0);
  EXPECT_EQ(system.atoms[1].serial, 2);
  EXPECT_TRUE(system.atoms[1].name.empty());
  EXPECT_EQ(system.atoms[2].serial, 3);
}

struct XyzqCase {
  const char* label;
  const char* text;
  std::uint64_t line;
  const char* part;
};

class XyzqMalformed : public ::testing::TestWithParam<XyzqCase> {};

TEST_P(XyzqMalformed, ThrowsInputErrorWithLineAndReason) {
  const XyzqCase& c = GetParam();
  expect_input_error([&] { (void)xyzq_from_text(c.text, "bad.xyzq"); }, "bad.xyzq", c.line,
                     {c.part});
}

const XyzqCase kXyzqMalformed[] = {
    {"too_few", "1 2 3 4\n1 2 3\n", 2, "too few fields: found 3, expected 4 (x y z q)"},
    {"too_many", "# c\n1 2 3 4 5\n", 2, "too many fields: found 5, expected 4 (x y z q)"},
    {"not_a_number", "1 2 3 4\n\n1 2 three 4\n", 3, "z coordinate 'three' is not a number"},
    {"fused_minus_is_not_split", "1.0-2.0 3 4\n", 1, "too few fields: found 3"},
    {"nan_charge", "1 2 3 nan\n", 1, "charge 'nan' is not a finite number"},
    {"inf_x", "inf 2 3 4\n", 1, "x coordinate 'inf' is not a finite number"},
    {"overflow_y", "1 -1e400 3 4\n", 1, "y coordinate '-1e400' is not a finite number"},
    {"empty", "", 0, "empty file"},
    {"blank", "  \n\n", 0, "empty file"},
    {"only_comments", "# nothing\n   # here\n", 0, "no atoms"},
};

INSTANTIATE_TEST_SUITE_P(Cases, XyzqMalformed, ::testing::ValuesIn(kXyzqMalformed),
                         [](const ::testing::TestParamInfo<XyzqCase>& param_info) {
                           return std::string(param_info.param.label);
                         });

TEST(XyzqParse, UnderflowIsAcceptedAsTiny) {
  const dcs::System system = xyzq_from_text("1e-400 0 0 1\n");
  ASSERT_EQ(system.size(), 1u);
  EXPECT_EQ(system.atoms[0].position[0], 0.0);
}

}  // namespace
