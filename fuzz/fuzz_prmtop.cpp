// libFuzzer target: the AMBER PRMTOP parser (io::parse_prmtop) on the input as the text of a
// .prmtop file. Besides crashes, UB and exceptions other than InputError, it checks what
// io/topology.hpp promises: every System returned has atoms within dcs/limits.hpp, serial =
// index + 1, residue numbers from 1 that never decrease, positions zero; LF, CRLF and CR line
// endings read alike; the 128 KiB block boundary inside the input changes nothing; a line
// longer than io::kMaxLineBytes is refused.
#include <cstddef>
#include <cstdint>
#include <string>

#include "dcs/io/pqr.hpp"
#include "dcs/io/topology.hpp"
#include "fuzz_support.hpp"

namespace {

using dcs::fuzz::Outcome;
using dcs::fuzz::require;
using dcs::fuzz::TextReading;

TextReading read_prmtop(const std::string& text) {
  return dcs::fuzz::read_text("parse_prmtop", text, [](std::istream& in) {
    return dcs::io::parse_prmtop(in, "fuzz.prmtop");
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const TextReading first = read_prmtop(text);
  if (first.outcome == Outcome::kOk) {
    const dcs::System& system = first.system;
    dcs::fuzz::check_system(system, "parse_prmtop");
    require(system.source_format == "prmtop", "parse_prmtop: source_format not prmtop");
    long long previous = 1;
    for (std::size_t i = 0; i < system.atoms.size(); ++i) {
      const dcs::Atom& atom = system.atoms[i];
      require(atom.serial == static_cast<long long>(i) + 1, "parse_prmtop: serial != index + 1");
      require(atom.position == dcs::Vec3{0, 0, 0}, "parse_prmtop: a position not zero");
      require(atom.res_seq >= previous && atom.res_seq <= previous + 1,
              "parse_prmtop: residue numbers not 1, 2, ... in order");
      previous = atom.res_seq;
    }
    require(system.atoms.front().res_seq == 1, "parse_prmtop: first residue not 1");
    dcs::fuzz::use_atoms(system, "parse_prmtop atoms");
  }
  dcs::fuzz::check_text_readings(data, size, first, "%COMMENT ", dcs::io::kMaxLineBytes,
                                 read_prmtop);
  return 0;
}
