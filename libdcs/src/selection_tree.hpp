// The parsed form of a selection (selection.hpp), shared by its parser (selection.cpp) and its
// evaluation (selection_eval.cpp); private to libdcs.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dcs/types.hpp"
#include "dcs/unit_cell.hpp"

namespace dcs::detail {

enum class NodeKind {
  kAll,
  kNone,
  kNot,
  kAnd,
  kOr,
  kPattern,
  kRange,
  kResnameSet,
  kBackbone,
  // Nodes whose verdict on an atom depends on other atoms (evaluated over all atoms at once):
  kAround,    ///< atoms within `radius` of the child's, the child's own excluded
  kSphzone,   ///< atoms within `radius` of the child's centre of geometry
  kSphlayer,  ///< atoms farther than `inner` and within `radius` of that centre
  kByres,     ///< every atom of a residue with an atom of the child (also "same residue as")
};
enum class Field { kName, kResname, kSegid, kChain, kResid, kIndex, kBynum };

/// One character class of a wildcard: [abc], [a-z], [!abc].
struct CharClass {
  bool negated = false;
  bool any = false;    ///< "[!]" after Python's handling: any one character
  bool never = false;  ///< an empty class: matches nothing
  std::vector<std::pair<unsigned char, unsigned char>> ranges;  ///< inclusive
  bool contains(unsigned char c) const {
    if (any) return true;
    if (never) return false;
    bool in = false;
    for (const auto& [lo, hi] : ranges) in = in || (c >= lo && c <= hi);
    return in != negated;
  }
};

/// A shell pattern compiled to elements: a literal byte, '?', '*' or a class.
struct PatternElement {
  enum Kind { kLiteral, kAnyOne, kAnyRun, kClass } kind = kLiteral;
  unsigned char literal = 0;
  CharClass cls;
};
using Pattern = std::vector<PatternElement>;

struct Range {
  long long lo = 0, hi = 0;  ///< inclusive
};

struct SelectionNode {
  NodeKind kind = NodeKind::kAll;
  Field field = Field::kName;
  std::vector<Pattern> patterns;                               // kPattern
  std::vector<Range> ranges;                                   // kRange
  const std::set<std::string, std::less<>>* set = nullptr;     // kResnameSet
  std::vector<std::shared_ptr<const SelectionNode>> children;  // kNot, kAround, ... (one);
                                                               // kAnd, kOr (n-ary)
  double radius = 0.0;     ///< kAround, kSphzone, kSphlayer: Å (distance <= radius)
  double inner = 0.0;      ///< kSphlayer: Å (distance > inner)
  std::size_t depth = 1;   ///< of the tree below and including this node
  bool per_atom = true;    ///< whether no node of this subtree looks at other atoms
  bool distances = false;  ///< whether some node of this subtree measures distances
};

/// MDAnalysis's residue-name lists of `protein` and `nucleic`.
const std::set<std::string, std::less<>>& protein_residues();
const std::set<std::string, std::less<>>& nucleic_residues();

/// Whether one atom matches a per-atom tree (node.per_atom).
bool evaluate_atom(const SelectionNode& node, const Atom& atom, std::size_t index);

/// What a tree is evaluated on: the atoms, their positions (a frame's, or the atoms' own), and
/// the cell (minimum-image distances when periodic).
struct SelectionInput {
  const std::vector<Atom>& atoms;
  std::span<const Vec3> positions;
  const UnitCell& cell;
};

/// The verdict on every atom (1: selected), for any tree.
std::vector<char> evaluate_all(const SelectionNode& node, const SelectionInput& input);

}  // namespace dcs::detail
