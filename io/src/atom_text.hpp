// Text helpers shared by the atom-file readers (pqr.cpp, pqr_record.cpp, pqr_models.cpp,
// xyzq.cpp): blanks, quoting for messages, number parsing, whitespace fields and the splitting
// of numbers that fixed-width writers fuse.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dcs::io::detail {

inline bool is_blank(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) noexcept { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

inline std::string_view trim(std::string_view text) noexcept {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

inline bool all_blank(std::string_view text) noexcept {
  return std::all_of(text.begin(), text.end(), is_blank);
}

inline bool has_blank(std::string_view text) noexcept {
  return std::any_of(text.begin(), text.end(), is_blank);
}

/// A field for an error message: quoted, control bytes replaced, long fields shortened.
std::string quote(std::string_view field);

std::string upper(std::string_view text);

enum class NumberStatus { kOk, kNotNumber, kNotFinite };

NumberStatus parse_double(std::string_view text, double& value);

bool parse_integer(std::string_view text, long long& value);

/// A residue number, optionally followed by a one-letter insertion code ("52A").
bool parse_residue_number(std::string_view text, long long& value);

struct Field {
  std::string_view text;
  std::size_t pos = 0;  // offset of text in the line
};

/// The whitespace-delimited fields of line[begin, end).
void split_fields(std::string_view line, std::size_t begin, std::size_t end,
                  std::vector<Field>& out);

/// Splits a field into the numbers fused in it: at every '-' that follows a digit or '.'
/// (so "1e-5" stays whole), then by the equal-decimals rule. A plain field yields itself.
void split_fused(const Field& field, std::vector<Field>& out);

/// Values beyond dcs/limits.hpp would overflow or blur the float32 computation (coordinates
/// ±1e6 Å, charges ±1e6 e, radii up to 1e6 Å). values: x y z charge [radius]; "" when all fit.
std::string out_of_range(const double* values, std::size_t count);

}  // namespace dcs::io::detail
