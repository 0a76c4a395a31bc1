// libFuzzer target: the xyzq reader (io::parse_xyzq) on the input as the text of a .xyzq file.
// Checks, besides crashes, UB and exceptions other than InputError: atoms within the limits,
// radius 0, serial = 1-based index, empty identification fields; LF, CRLF and CR-only line
// endings read alike; the reader's 128 KiB block boundary inside the input changes nothing;
// the atoms then go through the potential bound and grid placement.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "dcs/io/pqr.hpp"
#include "fuzz_support.hpp"

namespace {

using dcs::System;
using dcs::fuzz::Outcome;
using dcs::fuzz::require;

constexpr std::size_t kReaderBlock = std::size_t{1} << 17;  // LineSource::kBlockSize

struct Reading {
  Outcome outcome = Outcome::kOk;
  std::string message;
  System system;
};

Reading read(const std::string& text) {
  Reading r;
  r.outcome = dcs::fuzz::run_expecting("parse_xyzq", [&] {
    std::istringstream in(text);
    r.system = dcs::io::parse_xyzq(in, "fuzz.xyzq");
  }, &r.message);
  require(r.outcome != Outcome::kUsageError, "parse_xyzq threw UsageError: " + r.message);
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  dcs::fuzz::quiet_logging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const Reading first = read(text);
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

  if (text.find('\r') == std::string::npos && text.find('\n') != std::string::npos) {
    for (const char* ending : {"\r\n", "\r"}) {
      std::string converted;
      for (char c : text) {
        if (c == '\n') converted += ending;
        else converted += c;
      }
      const Reading other = read(converted);
      require(other.outcome == first.outcome && other.message == first.message,
              "CRLF/CR line endings change the outcome: '" + first.message + "' vs '" +
                  other.message + "'");
      if (first.outcome == Outcome::kOk)
        require(dcs::fuzz::same_atoms(first.system, other.system), "CRLF/CR change the atoms");
    }
  }

  // One input in four (by its last byte): the long line costs more than the rest together.
  if (size > 0 && size + 16 < kReaderBlock && (data[size - 1] & 3) == 0) {
    const std::size_t k = (static_cast<std::size_t>(data[0]) * 131 + size) % (size + 1);
    std::string shifted = "#";
    shifted.append(kReaderBlock - k - 2, '.');
    shifted += '\n';
    shifted += text;
    const Reading other = read(shifted);
    require((other.outcome == Outcome::kOk) == (first.outcome == Outcome::kOk),
            "a block boundary inside the input changes the outcome: '" + first.message +
                "' vs '" + other.message + "'");
    if (first.outcome == Outcome::kOk)
      require(dcs::fuzz::same_atoms(first.system, other.system),
              "a block boundary inside the input changes the atoms");
  }
  return 0;
}
