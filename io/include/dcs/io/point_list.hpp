// Plain lists of points (x y z in Å), the input of a "potential at points" run.
//
// One point per line: three numbers separated by commas (CSV) or blanks (spaces, tabs), e.g.
// "1.5,-2,3e1" or "1.5 -2 30". Blank lines and '#' comments (whole lines or line ends) are
// skipped. The first line with content may be a header (it is one when any of its fields is
// not a number, e.g. "x,y,z"); it must have three fields. A ".gz" name is decompressed.
//
// Refused with InputError "<file>:<line>: <reason>": another number of fields ("expected 3
// numbers (x y z), found 4"), a field that is not a number or not finite, a coordinate beyond
// dcs::limits::kMaxGridCoordinate (the points are where the potential is computed, like grid
// points), more than kMaxPoints points, a line longer than kMaxLineBytes; and "<file>: empty
// file" / "no points" (line 0).
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <utility>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/types.hpp"

namespace dcs::io {

/// The most points a list may hold: 2.4 GB of positions, and a day of GPU time for a large
/// molecule; far beyond the vertices of any molecular surface.
inline constexpr std::size_t kMaxPoints = 100'000'000;

/// read_point_list()'s refusal of a list of more than its `most` points (what the memory a
/// caller has affords): the file and how many points it lists (the lines with content after the
/// first `most` points are counted, not parsed). The caller says why (a UsageError: exit 2).
class TooManyPoints : public UsageError {
 public:
  TooManyPoints(std::string file, std::size_t count)
      : UsageError(file + ": " + std::to_string(count) + " points: more than fit"),
        file_(std::move(file)),
        count_(count) {}
  const std::string& file() const noexcept { return file_; }
  std::size_t count() const noexcept { return count_; }

 private:
  std::string file_;
  std::size_t count_;
};

/// Reads a point list file (plain or .gz). Throws InputError, and TooManyPoints beyond `most`
/// points (stored no further: the memory held stays that of `most` points).
std::vector<Vec3> read_point_list(const std::string& path, std::size_t most = kMaxPoints);

/// The same from a stream; `name` stands for the file in messages.
std::vector<Vec3> parse_point_list(std::istream& in, const std::string& name);

}  // namespace dcs::io
