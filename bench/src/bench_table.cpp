#include <string>

#include <fmt/format.h>

#include "dcs/bench.hpp"

namespace dcs {

std::string to_markdown(const BenchTable& table) {
  std::string out =
      fmt::format("### {}\n\n| {} |\n|", table.title, fmt::join(table.columns, " | "));
  for (std::size_t c = 0; c < table.columns.size(); ++c) out += " --- |";
  out += "\n";
  for (const auto& row : table.rows) out += fmt::format("| {} |\n", fmt::join(row, " | "));
  for (const auto& note : table.notes) out += fmt::format("\n{}\n", note);
  return out + "\n";
}

}  // namespace dcs
