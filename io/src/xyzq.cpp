// The "x y z q" text format (see pqr.hpp, xyzq). The lines are read as one chunk (serial
// reader) or as several read in parallel and joined in order (parallel_read.cpp): the same
// code gives the same atoms and the same first error either way.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "atom_parsers.hpp"
#include "atom_text.hpp"
#include "dcs/error.hpp"

namespace dcs::io::detail {

void read_xyzq_chunk(LineSource& source, const std::string& name, XyzqChunk& chunk) {
  static constexpr std::array<const char*, 4> kNames = {"x coordinate", "y coordinate",
                                                        "z coordinate", "charge"};
  try {
    std::string line;
    std::vector<Field> fields;
    while (source.next(line)) {
      std::string_view text = line;
      if (trim(text).empty()) continue;
      chunk.any_content = true;
      text = text.substr(0, text.find('#'));
      split_fields(text, 0, text.size(), fields);
      if (fields.empty()) continue;
      if (fields.size() != 4) {
        throw InputError(name, source.line_number(),
                         std::string(fields.size() < 4 ? "too few" : "too many") +
                             " fields: found " + std::to_string(fields.size()) +
                             ", expected 4 (x y z q)");
      }
      std::array<double, 4> values{};
      for (std::size_t i = 0; i < 4; ++i) {
        switch (parse_double(fields[i].text, values[i])) {
          case NumberStatus::kOk: break;
          case NumberStatus::kNotFinite:
            throw InputError(
                name, source.line_number(),
                std::string(kNames[i]) + " " + quote(fields[i].text) + " is not a finite number");
          case NumberStatus::kNotNumber:
            throw InputError(name, source.line_number(),
                             std::string(kNames[i]) + " " + quote(fields[i].text) +
                                 " is not a number (expected x y z q)");
        }
      }
      if (const std::string reason = out_of_range(values.data(), values.size()); !reason.empty())
        throw InputError(name, source.line_number(), reason);
      Atom atom;
      atom.position = {values[0], values[1], values[2]};
      atom.charge = values[3];
      chunk.atoms.push_back(std::move(atom));
    }
  } catch (...) {
    chunk.error = std::current_exception();
  }
}

System join_xyzq_chunks(std::vector<XyzqChunk>& chunks, const std::string& name) {
  System system;
  system.source_path = name;
  system.source_format = "xyzq";
  std::size_t total = 0;
  for (const XyzqChunk& chunk : chunks) total += chunk.atoms.size();
  system.atoms.reserve(total);
  bool any_content = false;
  for (XyzqChunk& chunk : chunks) {
    if (chunk.error) std::rethrow_exception(chunk.error);  // the first chunk's error wins
    any_content = any_content || chunk.any_content;
    for (Atom& atom : chunk.atoms) {
      atom.serial = static_cast<long long>(system.atoms.size()) + 1;
      system.atoms.push_back(std::move(atom));
    }
    chunk = XyzqChunk{};
  }
  if (!any_content) throw InputError(name, 0, "empty file");
  if (system.atoms.empty()) throw InputError(name, 0, "no atoms: only comments");
  return system;
}

System parse_xyzq_lines(LineSource& source, const std::string& name) {
  std::vector<XyzqChunk> chunks(1);
  read_xyzq_chunk(source, name, chunks.front());
  return join_xyzq_chunks(chunks, name);
}

}  // namespace dcs::io::detail
