// --frames (parse_frames, frame_indices): Python slices over a trajectory's frames, refused when
// empty, exact for starts, stops and steps anywhere in int64's range (no signed overflow).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/pipeline/run_config.hpp"

namespace dcs::pipeline {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

std::vector<std::int64_t> indices(const std::string& text, std::int64_t frames) {
  return frame_indices(parse_frames(text), frames);
}

std::string usage_message(const std::string& text, std::int64_t frames) {
  try {
    indices(text, frames);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "(accepted)";
}

TEST(FrameRange, SlicesLikePython) {
  EXPECT_EQ(indices("::3", 10), (std::vector<std::int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(indices("2:7:2", 10), (std::vector<std::int64_t>{2, 4, 6}));
  EXPECT_EQ(indices("-3:", 10), (std::vector<std::int64_t>{7, 8, 9}));
  EXPECT_EQ(indices("-1", 10), (std::vector<std::int64_t>{9}));
  EXPECT_EQ(indices("4", 10), (std::vector<std::int64_t>{4}));
}

TEST(FrameRange, AnEmptyOptionIsRefusedNotAllFrames) {
  EXPECT_NE(usage_message("", 10).find("empty"), std::string::npos) << usage_message("", 10);
  EXPECT_THROW(parse_frames(""), UsageError);
  EXPECT_THROW(parse_frames("1:2:3:4"), UsageError);
}

TEST(FrameRange, ValuesNearTheInt64LimitsDoNotOverflow) {
  const std::string max = std::to_string(kMax), min = std::to_string(kMin);
  // A step past the end after the first frame: that frame alone (start + step overflowed).
  EXPECT_EQ(indices("5::" + max, 100), (std::vector<std::int64_t>{5}));
  EXPECT_EQ(indices("99:" + max + ":" + std::to_string(kMax - 1), 100),
            (std::vector<std::int64_t>{99}));
  EXPECT_EQ(indices(min + "::" + max, 100), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(indices(min + ":" + max + ":50", 100), (std::vector<std::int64_t>{0, 50}));
  EXPECT_EQ(indices("-2:" + max, 100), (std::vector<std::int64_t>{98, 99}));
  // Single frames at the limits (N + 1 overflowed at INT64_MAX): no such frame.
  for (const std::string& frame : {max, min, std::to_string(kMax - 1)})
    EXPECT_NE(usage_message(frame, 100).find("selects no frame"), std::string::npos)
        << frame << ": " << usage_message(frame, 100);
  EXPECT_NE(usage_message(max + ":", 100).find("selects no frame"), std::string::npos);
  // One past the limits does not parse.
  EXPECT_NE(usage_message("9223372036854775808", 100).find("not an integer"), std::string::npos);
  // A step below 1 given through the API is refused, not looped on.
  EXPECT_THROW(frame_indices(FrameRange{std::nullopt, std::nullopt, 0}, 10), UsageError);
}

}  // namespace
}  // namespace dcs::pipeline
