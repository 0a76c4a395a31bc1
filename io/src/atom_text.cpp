#include "atom_text.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>

#include "dcs/limits.hpp"

namespace dcs::io::detail {

std::string quote(std::string_view field) {
  constexpr std::size_t kMaxShown = 40;
  std::string out = "'";
  for (std::size_t i = 0; i < field.size() && i < kMaxShown; ++i) {
    const auto byte = static_cast<unsigned char>(field[i]);
    out.push_back(byte >= 0x20 && byte < 0x7f ? field[i] : '?');
  }
  if (field.size() > kMaxShown) out += "...";
  out += "'";
  return out;
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

NumberStatus parse_double(std::string_view text, double& value) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  if (text.empty()) return NumberStatus::kNotNumber;
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, value, std::chars_format::general);
  if (ptr != last || ec == std::errc::invalid_argument) return NumberStatus::kNotNumber;
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves the value unset for overflow and underflow alike; strtod tells them
    // apart (an underflow to ~0 is a harmless value, an overflow is not finite).
    const std::string copy(text);
    value = std::strtod(copy.c_str(), nullptr);
  }
  return std::isfinite(value) ? NumberStatus::kOk : NumberStatus::kNotFinite;
}

bool parse_integer(std::string_view text, long long& value) {
  if (text.size() > 1 && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), last, value);
  return ec == std::errc() && ptr == last;
}

bool parse_residue_number(std::string_view text, long long& value) {
  if (text.size() > 1 && is_alpha(text.back()) && is_digit(text[text.size() - 2])) {
    text.remove_suffix(1);
  }
  return parse_integer(text, value);
}

void split_fields(std::string_view line, std::size_t begin, std::size_t end,
                  std::vector<Field>& out) {
  out.clear();
  std::size_t i = begin;
  while (i < end) {
    while (i < end && is_blank(line[i])) ++i;
    const std::size_t start = i;
    while (i < end && !is_blank(line[i])) ++i;
    if (i > start) out.push_back({line.substr(start, i - start), start});
  }
}

// "0.500010.0000" -> "0.5000", "10.0000": numbers written with one %.Nf format and no room for
// a blank between them (pdb2pqr: radius >= 10 Å; %8.3f coordinates >= 1000 Å). Every number
// then has as many decimals as the last one. Returns false when the field has no such shape.
bool split_equal_decimals(const Field& field, std::vector<Field>& out) {
  const std::string_view text = field.text;
  const std::size_t last_dot = text.rfind('.');
  if (last_dot == std::string_view::npos || text.find('.') == last_dot) return false;
  const std::size_t decimals = text.size() - last_dot - 1;
  if (decimals == 0) return false;
  for (const char c : text.substr(1)) {
    if (!is_digit(c) && c != '.') return false;
  }
  const std::size_t first_out = out.size();
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = text.find('.', start);
    const std::size_t cut = dot + 1 + decimals;
    if (dot == last_dot) {
      out.push_back({text.substr(start), field.pos + start});
      return true;
    }
    // The next number needs at least one integer digit before its own '.'.
    if (cut >= text.find('.', dot + 1)) {
      out.resize(first_out);
      return false;
    }
    out.push_back({text.substr(start, cut - start), field.pos + start});
    start = cut;
  }
}

void split_fused(const Field& field, std::vector<Field>& out) {
  out.clear();
  const std::string_view text = field.text;
  const auto emit = [&](std::size_t begin, std::size_t end) {
    const Field piece{text.substr(begin, end - begin), field.pos + begin};
    if (!split_equal_decimals(piece, out)) out.push_back(piece);
  };
  std::size_t start = 0;
  for (std::size_t i = 1; i < text.size(); ++i) {
    if (text[i] == '-' && (is_digit(text[i - 1]) || text[i - 1] == '.')) {
      emit(start, i);
      start = i;
    }
  }
  emit(start, text.size());
}

std::string out_of_range(const double* values, std::size_t count) {
  static constexpr std::array<const char*, 5> kNames = {"x coordinate", "y coordinate",
                                                        "z coordinate", "charge", "radius"};
  static constexpr std::array<double, 5> kLimits = {limits::kMaxCoordinate, limits::kMaxCoordinate,
                                                    limits::kMaxCoordinate, limits::kMaxCharge,
                                                    limits::kMaxRadius};
  static constexpr std::array<const char*, 5> kUnits = {" Å", " Å", " Å", " e", " Å"};
  for (std::size_t i = 0; i < count; ++i) {
    if (std::fabs(values[i]) <= kLimits[i]) continue;
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, values[i]).ptr;
    char limit[32];
    const auto limit_end = std::to_chars(limit, limit + sizeof limit, kLimits[i]).ptr;
    return std::string(kNames[i]) + " " + std::string(buffer, end) + " is outside the accepted ±" +
           std::string(limit, limit_end) + kUnits[i] +
           " (larger values overflow the float32 computation; see README, What dcs refuses)";
  }
  return {};
}

}  // namespace dcs::io::detail
