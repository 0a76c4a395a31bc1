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
//   around R S           atoms within R Å of an atom of S, S's own atoms excluded
//   sphzone R S          atoms within R Å of S's centre of geometry (the plain mean of its
//                        positions, as MDAnalysis's center_of_geometry)
//   sphlayer R1 R2 S     atoms farther than R1 and within R2 Å of that centre
//   byres S              every atom of each residue that has an atom in S
//   same residue as S    the same as byres S
//   not S | S and S | S or S | ( S )
// Distances: "within R" is distance <= R (and > R1 for sphlayer's inner radius), as MDAnalysis's
// capped_distance; minimum-image in a periodic cell given to select() (orthorhombic or
// triclinic, exact: MDAnalysis's default periodic=True), plain without one. R is a finite
// number >= 0 (Å). S after these five keywords reaches as far right as 'and'/'or' continue it
// (MDAnalysis's precedence 1): `around 5 resname LYS and name NZ` is
// `around 5 (resname LYS and name NZ)`; write `(around 5 resname LYS) and name NZ` for the
// other reading. Every sub-selection is judged on all the atoms given (MDAnalysis 2.x's rule).
// A residue is a run of consecutive atoms with the same residue number, name, segment and chain
// (MDAnalysis's resindices for PSF, PDB, GRO, TPR and PRMTOP topologies).
// Several values after one keyword mean "or": `name CA CB` = `name CA or name CB`. Values run
// up to the next keyword, operator or parenthesis; a leading backslash lets a value be spelled
// like a keyword (`name \protein`) and is removed, as in MDAnalysis. Words that are keywords
// only in MDAnalysis (type, mass, bonded, cyzone, ...) are plain values here: `name type`
// selects atoms named "type" where MDAnalysis refuses the text. After 'same' only
// 'residue as' is supported.
// R is an integer (optional leading -) or an inclusive range "a:b", "a-b" or "a to b" (spaces
// allowed around ':' and '-': "1 : 5", "1- 5"; "-5--3" is -5 to -3; "1 -5" is two values, 1 and
// -5, as MDAnalysis reads them).
// Precedence: `not` binds tightest; `and` and `or` have EQUAL precedence and group from the left,
// exactly as in MDAnalysis (SelectionParser: both have precedence 3):
//   name CA or name CB and resid 5   ==   (name CA or name CB) and resid 5
//   not name CA and resid 5          ==   (not name CA) and resid 5
// Use parentheses whenever `and` and `or` are mixed.
// Stricter than MDAnalysis: a range with a > b, a number with trailing text ("1:5x"), an
// insertion code ("10A"), a negative or non-finite distance, a sphlayer whose inner radius
// exceeds its outer one, an empty text, and the rare bracket wildcards whose reading by
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
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/types.hpp"
#include "dcs/unit_cell.hpp"
#include "dcs/vec3.hpp"

namespace dcs {

namespace detail {
struct SelectionNode;
}

/// A parsed selection; immutable, cheap to copy, safe to use from several threads.
class Selection {
 public:
  /// Parses `text`; throws UsageError (naming `what`, e.g. "--select") when it is malformed.
  Selection(std::string_view text, std::string_view what = "--select");

  /// Whether each atom's verdict depends on that atom alone: false when the text has around,
  /// sphzone, sphlayer, byres or same residue as (select() then judges all atoms together).
  bool is_per_atom() const noexcept;
  /// Whether the verdict depends on positions (around, sphzone, sphlayer): a trajectory's
  /// selection then depends on the frame it is judged on.
  bool uses_distances() const noexcept;

  /// Whether the atom at position `index` (0-based, in the input) is selected. Only for a
  /// selection that is_per_atom() (throws InternalError otherwise).
  bool matches(const Atom& atom, std::size_t index) const;
  /// Indices of the matching atoms, increasing; distances from the atoms' own positions,
  /// minimum-image in `cell` when it is periodic.
  std::vector<std::size_t> select(const std::vector<Atom>& atoms,
                                  const UnitCell& cell = UnitCell()) const;
  /// The same with the positions given apart (a trajectory frame's, one per atom).
  std::vector<std::size_t> select(const std::vector<Atom>& atoms, std::span<const Vec3> positions,
                                  const UnitCell& cell) const;
  /// The text as given.
  const std::string& text() const;

 private:
  std::string text_;
  std::shared_ptr<const detail::SelectionNode> root_;
};

}  // namespace dcs
