// Evaluation of a parsed selection (selection_tree.hpp): per atom for the trees that look at
// one atom only, over all atoms at once (masks) for those with around, sphzone, sphlayer, byres
// or same residue as, whose verdict on an atom depends on the others, as MDAnalysis applies
// each sub-selection to the whole group.
#include <cmath>
#include <cstdint>

#include "dcs/error.hpp"
#include "dcs/neighbour_grid.hpp"
#include "selection_tree.hpp"

namespace dcs::detail {
namespace {

// MDAnalysis 2.x ProteinSelection.prot_res: CHARMM top_all27_prot_lipid.rtf, PDB, GROMACS
// OPLS-AA, GROMOS 53a6 and Amber (amber03, amber99sb-star-ildn N/C-terminal) residue names.
const std::set<std::string, std::less<>> kProteinResidues = {
    "ALA",  "ARG",  "ASN",  "ASP",  "CYS",  "GLN",  "GLU",  "GLY",  "HSD",  "HSE",  "HSP",  "ILE",
    "LEU",  "LYS",  "MET",  "PHE",  "PRO",  "SER",  "THR",  "TRP",  "TYR",  "VAL",  "ALAD", "HIS",
    "MSE",  "ARGN", "ASPH", "CYS2", "CYSH", "QLN",  "PGLU", "GLUH", "HIS1", "HISD", "HISE", "HISH",
    "LYSH", "ASN1", "CYS1", "HISA", "HISB", "HIS2", "HID",  "HIE",  "HIP",  "ORN",  "DAB",  "LYN",
    "HYP",  "CYM",  "CYX",  "ASH",  "GLH",  "ACE",  "NME",  "NALA", "NGLY", "NSER", "NTHR", "NLEU",
    "NILE", "NVAL", "NASN", "NGLN", "NARG", "NHID", "NHIE", "NHIP", "NTRP", "NPHE", "NTYR", "NGLU",
    "NASP", "NLYS", "NPRO", "NCYS", "NCYX", "NMET", "CALA", "CGLY", "CSER", "CTHR", "CLEU", "CILE",
    "CVAL", "CASF", "CASN", "CGLN", "CARG", "CHID", "CHIE", "CHIP", "CTRP", "CPHE", "CTYR", "CGLU",
    "CASP", "CLYS", "CPRO", "CCYS", "CCYX", "CMET", "CME",  "ASF"};

// MDAnalysis 2.x NucleicSelection.nucl_res.
const std::set<std::string, std::less<>> kNucleicResidues = {
    "ADE", "URA", "CYT", "GUA", "THY", "DA",  "DC",  "DG",  "DT",  "RA",  "RU",  "RG",
    "RC",  "A",   "T",   "U",   "C",   "G",   "DA5", "DC5", "DG5", "DT5", "DA3", "DC3",
    "DG3", "DT3", "RA5", "RU5", "RG5", "RC5", "RA3", "RU3", "RG3", "RC3"};

bool match_pattern(const Pattern& pattern, std::size_t p, std::string_view s, std::size_t i) {
  // Iterative glob matching with one backtrack point for the last '*' (linear for one star,
  // O(n*m) at worst), so hostile patterns cannot blow up.
  std::size_t star_p = std::string_view::npos, star_i = 0;
  while (i < s.size()) {
    if (p < pattern.size()) {
      const PatternElement& e = pattern[p];
      const auto c = static_cast<unsigned char>(s[i]);
      if (e.kind == PatternElement::kAnyRun) {
        star_p = p++;
        star_i = i;
        continue;
      }
      const bool ok = e.kind == PatternElement::kAnyOne ||
                      (e.kind == PatternElement::kLiteral && e.literal == c) ||
                      (e.kind == PatternElement::kClass && e.cls.contains(c));
      if (ok) {
        ++p;
        ++i;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p + 1;
    i = ++star_i;
  }
  while (p < pattern.size() && pattern[p].kind == PatternElement::kAnyRun) ++p;
  return p == pattern.size();
}

bool field_matches(const Pattern& pattern, std::string_view value) {
  return match_pattern(pattern, 0, value, 0);
}

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// Residues as runs of consecutive atoms with the same number, name, segment and chain (each
// atom's residue ordinal), as MDAnalysis's resindices for the topologies dcs reads.
std::vector<std::size_t> residue_ordinals(const std::vector<Atom>& atoms) {
  std::vector<std::size_t> out(atoms.size());
  for (std::size_t i = 1; i < atoms.size(); ++i) {
    const Atom& a = atoms[i];
    const Atom& b = atoms[i - 1];
    const bool same = a.res_seq == b.res_seq && a.res_name == b.res_name &&
                      a.segment == b.segment && a.chain == b.chain;
    out[i] = out[i - 1] + (same ? 0 : 1);
  }
  return out;
}

std::vector<char> byres(const std::vector<char>& inner, const SelectionInput& input) {
  const std::vector<std::size_t> residue = residue_ordinals(input.atoms);
  std::vector<char> hit(input.atoms.empty() ? 0 : residue.back() + 1, 0);
  for (std::size_t i = 0; i < inner.size(); ++i)
    if (inner[i]) hit[residue[i]] = 1;
  std::vector<char> out(inner.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = hit[residue[i]];
  return out;
}

// around R SEL: the atoms not in SEL within R of one of SEL's (MDAnalysis's AroundSelection).
std::vector<char> around(const SelectionNode& node, const std::vector<char>& inner,
                         const SelectionInput& input) {
  std::vector<Vec3> reference;
  for (std::size_t i = 0; i < inner.size(); ++i)
    if (inner[i]) reference.push_back(input.positions[i]);
  std::vector<char> out(inner.size(), 0);
  if (reference.empty()) return out;
  const NeighbourGrid grid(reference, node.radius, input.cell);
  for (std::size_t i = 0; i < inner.size(); ++i)
    if (!inner[i]) out[i] = grid.any_within(input.positions[i]) ? 1 : 0;
  return out;
}

// sphzone / sphlayer: distances to SEL's centre of geometry (the plain mean of its positions,
// as MDAnalysis's center_of_geometry), minimum-image in a periodic cell.
std::vector<char> sphere(const SelectionNode& node, const std::vector<char>& inner,
                         const SelectionInput& input) {
  Vec3 centre{0.0, 0.0, 0.0};
  std::size_t count = 0;
  for (std::size_t i = 0; i < inner.size(); ++i) {
    if (!inner[i]) continue;
    for (int k = 0; k < 3; ++k) centre[k] += input.positions[i][k];
    ++count;
  }
  std::vector<char> out(inner.size(), 0);
  if (count == 0) return out;
  for (int k = 0; k < 3; ++k) centre[k] /= static_cast<double>(count);
  const double outer2 = node.radius * node.radius;
  const double inner2 = node.inner * node.inner;
  const bool layer = node.kind == NodeKind::kSphlayer;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Vec3& p = input.positions[i];
    const Vec3 d = input.cell.minimum_image({p[0] - centre[0], p[1] - centre[1], p[2] - centre[2]});
    const double r2 = dot(d, d);
    out[i] = r2 <= outer2 && (!layer || r2 > inner2) ? 1 : 0;
  }
  return out;
}

}  // namespace

const std::set<std::string, std::less<>>& protein_residues() { return kProteinResidues; }
const std::set<std::string, std::less<>>& nucleic_residues() { return kNucleicResidues; }

bool evaluate_atom(const SelectionNode& node, const Atom& atom, std::size_t index) {
  switch (node.kind) {
    case NodeKind::kAll: return true;
    case NodeKind::kNone: return false;
    case NodeKind::kNot: return !evaluate_atom(*node.children[0], atom, index);
    case NodeKind::kAnd:
      for (const auto& child : node.children)
        if (!evaluate_atom(*child, atom, index)) return false;
      return true;
    case NodeKind::kOr:
      for (const auto& child : node.children)
        if (evaluate_atom(*child, atom, index)) return true;
      return false;
    case NodeKind::kResnameSet: return node.set->contains(atom.res_name);
    case NodeKind::kBackbone:
      return protein_residues().contains(atom.res_name) &&
             (atom.name == "N" || atom.name == "CA" || atom.name == "C" || atom.name == "O");
    case NodeKind::kPattern: {
      const std::string& value = node.field == Field::kName      ? atom.name
                                 : node.field == Field::kResname ? atom.res_name
                                 : node.field == Field::kSegid   ? atom.segment
                                                                 : atom.chain;
      for (const Pattern& p : node.patterns)
        if (field_matches(p, value)) return true;
      return false;
    }
    case NodeKind::kRange: {
      // index/bynum compare in unsigned arithmetic: an index beyond long long never matches.
      for (const detail::Range& r : node.ranges) {
        if (node.field == Field::kResid) {
          if (atom.res_seq >= r.lo && atom.res_seq <= r.hi) return true;
        } else {
          const std::uint64_t offset = node.field == Field::kBynum ? 1 : 0;
          if (r.hi < 0) continue;
          const std::uint64_t value = static_cast<std::uint64_t>(index) + offset;
          const std::uint64_t lo = r.lo < 0 ? 0 : static_cast<std::uint64_t>(r.lo);
          if (value >= lo && value <= static_cast<std::uint64_t>(r.hi)) return true;
        }
      }
      return false;
    }
    default: break;  // the nodes that look at other atoms: evaluate_all()
  }
  throw InternalError("a selection that looks at other atoms was evaluated atom by atom");
}

std::vector<char> evaluate_all(const SelectionNode& node, const SelectionInput& input) {
  const std::size_t n = input.atoms.size();
  std::vector<char> out(n, 0);
  if (node.per_atom) {
    for (std::size_t i = 0; i < n; ++i) out[i] = evaluate_atom(node, input.atoms[i], i) ? 1 : 0;
    return out;
  }
  switch (node.kind) {
    case NodeKind::kNot:
      out = evaluate_all(*node.children[0], input);
      for (char& v : out) v = v ? 0 : 1;
      return out;
    case NodeKind::kAnd:
    case NodeKind::kOr: {
      const bool all = node.kind == NodeKind::kAnd;
      out.assign(n, all ? 1 : 0);
      for (const auto& child : node.children) {
        const std::vector<char> part = evaluate_all(*child, input);
        for (std::size_t i = 0; i < n; ++i)
          out[i] = static_cast<char>(all ? (out[i] && part[i]) : (out[i] || part[i]));
      }
      return out;
    }
    case NodeKind::kAround: return around(node, evaluate_all(*node.children[0], input), input);
    case NodeKind::kSphzone:
    case NodeKind::kSphlayer: return sphere(node, evaluate_all(*node.children[0], input), input);
    case NodeKind::kByres: return byres(evaluate_all(*node.children[0], input), input);
    default: throw InternalError("a per-atom selection node is marked as looking at other atoms");
  }
}

}  // namespace dcs::detail
