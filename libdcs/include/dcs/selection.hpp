// Atom selections: a small language modelled on MDAnalysis's select_atoms, so that a selection
// written for MDAnalysis selects the same atoms in dcs (tests/selection/ checks it against
// MDAnalysis on real topologies).
//
// The language (keywords and operators are case sensitive, as in MDAnalysis):
//   all                  every atom
//   none                 no atom (a dcs extension: MDAnalysis has no `none`)
//   name P...            atom name         }
//   resname P...         residue name      }  P: patterns with shell-style wildcards, as
//   segid P...           segment ID        }  Python's fnmatch.fnmatchcase: * any run, ? one
//   chainID P...         chain ID          }  character, [abc] [a-z] [!abc] one character
//                        (aliases chainid, and chain, which MDAnalysis lacks)
//   resid R...           residue number (Atom::res_seq)
//   index R...           0-based position of the atom in the input
//   bynum R...           1-based position of the atom in the input
//   protein              residue name in MDAnalysis's protein list (ProteinSelection.prot_res:
//                        CHARMM, OPLS-AA, GROMOS and Amber names, exact match)
//   backbone             protein and name N CA C O (exact names; no OT1/OT2/OXT, as MDAnalysis)
//   nucleic              residue name in MDAnalysis's nucleic-acid list (NucleicSelection)
//   not S | S and S | S or S | ( S )
// Several values after one keyword mean "or": `name CA CB` = `name CA or name CB`. Values run
// up to the next keyword, operator or parenthesis; a leading backslash lets a value be spelled
// like a keyword (`name \protein`) and is removed, as in MDAnalysis. Words that are keywords
// only in MDAnalysis (type, mass, around, byres, ...) are plain values here: `name type` selects
// atoms named "type" where MDAnalysis refuses the text.
// R is an integer (optional leading -) or an inclusive range "a:b", "a-b" or "a to b" (spaces
// allowed around ':' and '-': "1 : 5", "1- 5"; "-5--3" is -5 to -3; "1 -5" is two values, 1 and
// -5, as MDAnalysis reads them).
// Precedence: `not` binds tightest; `and` and `or` have EQUAL precedence and group from the left,
// exactly as in MDAnalysis (SelectionParser: both have precedence 3):
//   name CA or name CB and resid 5   ==   (name CA or name CB) and resid 5
//   not name CA and resid 5          ==   (not name CA) and resid 5
// Use parentheses whenever `and` and `or` are mixed.
// Stricter than MDAnalysis: a range with a > b, a number with trailing text ("1:5x"), an
// insertion code ("10A"), an empty text, and the rare bracket wildcards whose reading by
// Python's fnmatch + re is obscure (an empty range next to another range) are refused instead
// of selecting nothing or ignoring the rest. Values are compared byte by byte (MDAnalysis
// compares Unicode characters: '?' differs for non-ASCII names).
//
// Errors are dcs::UsageError with the message
//   <what> "TEXT": at character N: reason
// where N is 1-based and points at the offending token (or one past the end of the text), and
// control bytes (tab, newline, NUL, ...) of TEXT and of the tokens quoted are shown as \xNN.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/types.hpp"

namespace dcs {

namespace detail {
struct SelectionNode;
}

/// A parsed selection; immutable, cheap to copy, safe to use from several threads.
class Selection {
 public:
  /// Parses `text`; throws UsageError (naming `what`, e.g. "--select") when it is malformed.
  Selection(std::string_view text, std::string_view what = "--select");

  /// Whether the atom at position `index` (0-based, in the input) is selected.
  bool matches(const Atom& atom, std::size_t index) const;
  /// Indices of the matching atoms, increasing.
  std::vector<std::size_t> select(const std::vector<Atom>& atoms) const;
  /// The text as given.
  const std::string& text() const;

 private:
  std::string text_;
  std::shared_ptr<const detail::SelectionNode> root_;
};

}  // namespace dcs
