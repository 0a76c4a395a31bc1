// libFuzzer target: selection text (--select, --align) -> dcs::Selection.
// Expected: UsageError, whose message is '--select "TEXT": at character N: ...' with N in
// [1, size + 1]. For a selection that parses: matches() never throws on a few fixed atoms
// (empty and wildcard-like names, negative and huge residue numbers, indices up to SIZE_MAX);
// select() is increasing and agrees with matches() (select() alone judges the selections that
// look at other atoms: around, byres, ...); re-parsing text() selects the same atoms;
// "not (TEXT)" selects exactly the others, and "(TEXT) or none" the same ones.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dcs/selection.hpp"
#include "dcs/unit_cell.hpp"
#include "fuzz_support.hpp"

namespace {

using dcs::fuzz::require;
using dcs::fuzz::run_expecting;

dcs::Atom make_atom(const char* name, const char* res_name, long long res_seq, const char* segment,
                    const char* chain) {
  return {
      .name = name, .res_name = res_name, .chain = chain, .segment = segment, .res_seq = res_seq};
}

const std::vector<dcs::Atom>& fixed_atoms() {
  static const std::vector<dcs::Atom> atoms = {
      make_atom("N", "ALA", 1, "PROA", "A"),
      make_atom("CA", "ALA", 1, "PROA", "A"),
      make_atom("C", "GLY", 2, "PROA", "A"),
      make_atom("O", "HSD", -4, "PROB", "B"),
      make_atom("OH2", "TIP3", 9999, "SOLV", ""),
      make_atom("", "", 0, "", ""),
      make_atom("*[!?]-", "NA+", std::numeric_limits<long long>::min(), "seg_2_NA+", "NA+"),
      make_atom("P", "DA", std::numeric_limits<long long>::max(), "DNA", "\xff"),
  };
  return atoms;
}

// Indices at which the fixed atoms are evaluated by matches(): the start, and the far end.
const std::size_t kIndices[] = {0,
                                1,
                                2,
                                3,
                                4,
                                5,
                                std::numeric_limits<std::size_t>::max() - 1,
                                std::numeric_limits<std::size_t>::max()};

// A selection that looks at other atoms (around, byres, ...) is judged by select() on the
// fixed atoms at their own indices (and their positions, in a 20 Å cube), the others by matches().
std::vector<bool> verdicts(const dcs::Selection& s) {
  std::vector<bool> out;
  if (!s.is_per_atom()) {
    static const dcs::UnitCell cube =
        dcs::UnitCell::from_lengths_angles({20.0, 20.0, 20.0}, {90.0, 90.0, 90.0});
    out.assign(fixed_atoms().size(), false);
    for (std::size_t k : s.select(fixed_atoms(), cube)) out.at(k) = true;
    return out;
  }
  for (std::size_t a = 0; a < fixed_atoms().size(); ++a)
    out.push_back(s.matches(fixed_atoms()[a], kIndices[a]));
  return out;
}

void check_message(const std::string& message, const std::string& text) {
  std::string shown;  // control bytes as \xNN (selection.hpp)
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      shown += {'\\', 'x', kHex[byte >> 4], kHex[byte & 15]};
    } else {
      shown += c;
    }
  }
  const std::string head = "--select \"" + shown + "\": at character ";
  require(message.compare(0, head.size(), head) == 0, "error message without its head: " + message);
  std::size_t n = 0, i = head.size();
  while (i < message.size() && message[i] >= '0' && message[i] <= '9')
    n = n * 10 + static_cast<std::size_t>(message[i++] - '0');
  require(i > head.size() && n >= 1 && n <= text.size() + 1 && message.compare(i, 2, ": ") == 0,
          "error message with a bad position: " + message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string message;
  const dcs::fuzz::Outcome outcome = run_expecting(
      "Selection",
      [&] {
        const dcs::Selection s(text);
        require(s.text() == text, "text() is not the text given");
        const std::vector<bool> v = verdicts(s);
        const std::vector<std::size_t> picked =
            s.is_per_atom() ? s.select(fixed_atoms())
                            : s.select(fixed_atoms(), dcs::UnitCell::from_lengths_angles(
                                                          {20.0, 20.0, 20.0}, {90.0, 90.0, 90.0}));
        for (std::size_t k = 1; k < picked.size(); ++k)
          require(picked[k - 1] < picked[k], "select() is not increasing");
        for (std::size_t k : picked) require(k < fixed_atoms().size(), "select() out of range");
        for (std::size_t a = 0; a < fixed_atoms().size() && s.is_per_atom(); ++a) {
          const bool in = std::find(picked.begin(), picked.end(), a) != picked.end();
          require(in == s.matches(fixed_atoms()[a], a), "select() and matches() disagree");
        }
        require(verdicts(dcs::Selection(s.text())) == v, "re-parsing text() changes the selection");
        std::string nested;
        const auto wrapped = run_expecting(
            "Selection (wrapped)",
            [&] {
              std::vector<bool> inverse = verdicts(dcs::Selection("not (" + text + ")"));
              inverse.flip();
              require(inverse == v, "'not (TEXT)' is not the complement of TEXT");
              require(verdicts(dcs::Selection("(" + text + ") or none")) == v,
                      "'(TEXT) or none' differs from TEXT");
            },
            &nested);
        require(wrapped == dcs::fuzz::Outcome::kOk ||
                    nested.find("nested too deeply") != std::string::npos,
                "TEXT parses but '(TEXT)' does not: " + nested);
      },
      &message);
  require(outcome != dcs::fuzz::Outcome::kInputError, "Selection threw InputError: " + message);
  if (outcome == dcs::fuzz::Outcome::kUsageError) check_message(message, text);
  return 0;
}
