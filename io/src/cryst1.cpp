// CRYST1 records (dcs/io/cryst1.hpp).
#include "dcs/io/cryst1.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "atom_text.hpp"
#include "dcs/error.hpp"
#include "line_source.hpp"

namespace dcs::io {
namespace {

/// The upper-case record name that starts `line` (letters and digits up to the first blank).
std::string record_of(std::string_view line) {
  std::string name;
  for (const char c : line.substr(0, 6)) {
    if (detail::is_blank(c)) break;
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return name;
}

}  // namespace

std::optional<UnitCell> parse_cryst1(std::string_view line, const std::string& path,
                                     std::uint64_t line_number) {
  // Whitespace-separated fields after the record name: PQR writers do not all keep the PDB
  // columns, and every CRYST1 in the fixed columns has blanks between its six numbers.
  std::vector<double> values;
  std::string_view rest = line.size() > 6 ? line.substr(6) : std::string_view();
  while (values.size() < 6) {
    while (!rest.empty() && detail::is_blank(rest.front())) rest.remove_prefix(1);
    std::size_t end = 0;
    while (end < rest.size() && !detail::is_blank(rest[end])) ++end;
    const std::string_view field = rest.substr(0, end);
    double value = 0.0;
    const auto [stop, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (field.empty() || error != std::errc() || stop != field.data() + field.size() ||
        !std::isfinite(value))
      throw InputError(path, line_number,
                       fmt::format("CRYST1 record: expected a b c alpha beta gamma (6 numbers), "
                                   "found {} then '{}'",
                                   values.size(), field));
    values.push_back(value);
    rest.remove_prefix(end);
  }
  if (values[0] == 1.0 && values[1] == 1.0 && values[2] == 1.0) return std::nullopt;
  const UnitCell cell = UnitCell::from_lengths_angles({values[0], values[1], values[2]},
                                                      {values[3], values[4], values[5]});
  if (!cell.is_periodic())
    throw InputError(path, line_number,
                     "CRYST1 record: " + cell.why_unusable().value_or("no usable cell") +
                         " (give the cell with --box a,b,c[,alpha,beta,gamma])");
  return cell;
}

std::optional<UnitCell> read_cryst1(const std::string& path) {
  const std::string name = detail::upper(std::filesystem::path(path).filename().string());
  const bool gzip = name.ends_with(".PQR.GZ");
  std::error_code error;
  if ((!gzip && !name.ends_with(".PQR")) || !std::filesystem::is_regular_file(path, error))
    return std::nullopt;
  detail::InputFile file(path);
  std::optional<detail::GzLineSource> gz;
  std::optional<detail::FileLineSource> plain;
  detail::LineSource& source =
      gzip ? static_cast<detail::LineSource&>(gz.emplace(file, path)) : plain.emplace(file, path);
  for (std::string line; source.next(line);) {
    const std::string record = record_of(line);
    if (record == "CRYST1") return parse_cryst1(line, path, source.line_number());
    if (record.starts_with("ATOM") || record.starts_with("HETATM") || record == "MODEL") break;
  }
  return std::nullopt;
}

}  // namespace dcs::io
