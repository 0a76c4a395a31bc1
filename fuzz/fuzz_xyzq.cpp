// libFuzzer target: the xyzq reader (io::parse_xyzq) on the input as the text of a .xyzq file.
// Checks, besides crashes, UB and exceptions other than InputError: atoms within the limits,
// radius 0, serial = 1-based index, empty identification fields; LF, CRLF and CR-only line
// endings read alike; the reader's 128 KiB block boundary inside the input changes nothing; a
// line longer than io::kMaxLineBytes is refused; the atoms then go through the potential bound
// and grid placement.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "dcs/io/pqr.hpp"
#include "fuzz_support.hpp"

namespace {

using dcs::fuzz::Outcome;
using dcs::fuzz::require;

dcs::fuzz::TextReading read_xyzq(const std::string& text) {
  return dcs::fuzz::read_text(
      "parse_xyzq", text, [](std::istream& in) { return dcs::io::parse_xyzq(in, "fuzz.xyzq"); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const dcs::fuzz::TextReading first = read_xyzq(text);
  if (first.outcome == Outcome::kOk) {
    dcs::fuzz::check_system(first.system, "parse_xyzq");
    require(first.system.source_format == "xyzq", "parse_xyzq: source_format not xyzq");
    for (std::size_t i = 0; i < first.system.atoms.size(); ++i) {
      const dcs::Atom& atom = first.system.atoms[i];
      require(atom.radius == 0.0 && atom.serial == static_cast<long long>(i) + 1 &&
                  atom.name.empty() && atom.res_name.empty() && atom.chain.empty(),
              "parse_xyzq: radius, serial or identification fields not as documented");
    }
    dcs::fuzz::use_atoms(first.system, "parse_xyzq atoms");
  }

  dcs::fuzz::check_text_readings(data, size, first, "#", dcs::io::kMaxLineBytes, read_xyzq);
  return 0;
}
