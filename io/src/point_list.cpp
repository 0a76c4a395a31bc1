// Point lists: x y z per line, CSV or blank-separated (dcs/io/point_list.hpp).
#include "dcs/io/point_list.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "atom_text.hpp"
#include "dcs/error.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/limits.hpp"
#include "input_path.hpp"
#include "line_source.hpp"

namespace dcs::io {
namespace {

using detail::Field;
using detail::NumberStatus;

constexpr std::array<const char*, 3> kAxes = {"x", "y", "z"};

/// The fields of one line: split at commas when the line has one, else at blanks; each trimmed.
void split_line(std::string_view text, std::vector<Field>& fields) {
  fields.clear();
  if (text.find(',') == std::string_view::npos) {
    detail::split_fields(text, 0, text.size(), fields);
    return;
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::size_t end = comma == std::string_view::npos ? text.size() : comma;
    fields.push_back({detail::trim(text.substr(start, end - start)), start});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

std::string limit_text(double value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

std::vector<Vec3> parse_lines(detail::LineSource& source, const std::string& name,
                              std::size_t most = kMaxPoints) {
  std::vector<Vec3> points;
  std::size_t beyond = 0;  // lines with content after `most` points: counted, not parsed
  std::vector<Field> fields;
  std::string line;
  bool any_content = false;
  bool header_allowed = true;
  try {
    while (source.next(line)) {
      std::string_view text = line;
      text = text.substr(0, text.find('#'));
      if (detail::all_blank(text)) {
        any_content = any_content || !detail::all_blank(line);
        continue;
      }
      any_content = true;
      if (points.size() == most && most < kMaxPoints) {
        ++beyond;
        continue;
      }
      split_line(text, fields);
      const auto fail = [&](const std::string& reason) {
        throw InputError(name, source.line_number(), reason);
      };
      if (fields.size() != 3)
        fail("expected 3 numbers (x y z), found " + std::to_string(fields.size()) + " fields");
      std::array<double, 3> xyz{};
      std::array<NumberStatus, 3> status{};
      bool any_number = false;
      for (std::size_t a = 0; a < 3; ++a) {
        status[a] = detail::parse_double(fields[a].text, xyz[a]);
        any_number = any_number || status[a] != NumberStatus::kNotNumber;
      }
      // A header: the first line with content when none of its fields is a number ("x,y,z").
      const bool header =
          header_allowed && !any_number &&
          std::none_of(fields.begin(), fields.end(), [](const Field& f) { return f.text.empty(); });
      header_allowed = false;
      if (header) continue;
      for (std::size_t a = 0; a < 3; ++a) {
        if (status[a] == NumberStatus::kNotNumber)
          fail(std::string(kAxes[a]) + " " + detail::quote(fields[a].text) +
               " is not a number (expected x y z in Å)");
        if (status[a] == NumberStatus::kNotFinite)
          fail(std::string(kAxes[a]) + " " + detail::quote(fields[a].text) +
               " is not a finite number");
        if (std::fabs(xyz[a]) > limits::kMaxGridCoordinate)
          fail(std::string(kAxes[a]) + " " + limit_text(xyz[a]) + " is outside the accepted ±" +
               limit_text(limits::kMaxGridCoordinate) +
               " Å (larger values overflow the float32 computation; see README, What dcs "
               "refuses)");
      }
      if (points.size() == kMaxPoints)
        fail("more than " + std::to_string(kMaxPoints) + " points (dcs::io::kMaxPoints)");
      points.push_back({xyz[0], xyz[1], xyz[2]});
    }
  } catch (const detail::LineTooLong& error) {
    throw InputError(name, error.line(),
                     "line longer than " + std::to_string(kMaxLineBytes) +
                         " bytes: not a point list (x y z per line), or a damaged one");
  }
  if (beyond > 0) throw TooManyPoints(name, most + beyond);
  if (!any_content) throw InputError(name, 0, "empty file");
  if (points.empty()) throw InputError(name, 0, "no points: only comments or a header");
  return points;
}

}  // namespace

std::vector<Vec3> parse_point_list(std::istream& in, const std::string& name) {
  detail::StreamLineSource source(in, name);
  return parse_lines(source, name);
}

std::vector<Vec3> read_point_list(const std::string& path, std::size_t most) {
  detail::check_input_exists(path, "a point list");
  std::error_code error;
  if (std::filesystem::file_size(path, error) == 0 && !error)
    throw InputError(path, 0, "empty file");
  detail::InputFile file(path);
  const std::string name = detail::upper(std::filesystem::path(path).filename().string());
  if (name.size() > 3 && name.ends_with(".GZ")) {
    detail::GzLineSource source(file, path);
    try {
      return parse_lines(source, path, most);
    } catch (const InputError& parse_error) {
      // Corrupt deflate data decode to garbage that only the CRC exposes: report the cause.
      if (parse_error.line() > 0) source.drain();
      throw;
    }
  }
  detail::FileLineSource source(file, path);
  return parse_lines(source, path, most);
}

}  // namespace dcs::io
