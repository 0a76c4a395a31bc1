// The selection language of dcs/selection.hpp: a tokenizer that splits like MDAnalysis's
// (whitespace, with parentheses as tokens of their own), a precedence-climbing parser that
// mirrors SelectionParser.parse_expression, and the tree (selection_tree.hpp) it builds; the
// tree is evaluated in selection_eval.cpp.
#include "dcs/selection.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#include "dcs/error.hpp"
#include "dcs/spelling.hpp"
#include "selection_tree.hpp"

namespace dcs {

namespace {

using detail::CharClass;
using detail::Field;
using detail::NodeKind;
using detail::Pattern;
using detail::PatternElement;
using detail::SelectionNode;
using NodePtr = std::shared_ptr<const SelectionNode>;

// Every word with a meaning; anything else in keyword position is an unknown keyword.
constexpr std::array<std::string_view, 22> kKeywords = {
    "all",      "none",  "name",  "resname", "resid",    "segid",   "chainID", "chainid",
    "chain",    "index", "bynum", "protein", "backbone", "nucleic", "around",  "sphzone",
    "sphlayer", "byres", "same",  "not",     "and",      "or"};

bool is_keyword(std::string_view token) {
  return token == "(" || token == ")" ||
         std::find(kKeywords.begin(), kKeywords.end(), token) != kKeywords.end();
}

struct Token {
  std::string text;
  std::size_t position;  ///< 1-based character position in the selection text
};

// Python's str.split() on ASCII whitespace, after "(" -> " ( " and ")" -> " ) ".
std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  std::size_t i = 0;
  while (i < text.size()) {
    if (space(text[i])) {
      ++i;
    } else if (text[i] == '(' || text[i] == ')') {
      tokens.push_back({std::string(1, text[i]), i + 1});
      ++i;
    } else {
      const std::size_t start = i;
      while (i < text.size() && !space(text[i]) && text[i] != '(' && text[i] != ')') ++i;
      tokens.push_back({std::string(text.substr(start, i - start)), start + 1});
    }
  }
  return tokens;
}

// The bracket expression pat[open+1 .. close) as Python's fnmatch.translate reads it (3.11):
// ranges are split at hyphens, reversed ranges are dropped with their end points. Returns false
// where Python would build a malformed or ambiguous regex (left to the caller to refuse).
bool parse_class(std::string_view pat, std::size_t i, std::size_t j, CharClass& out) {
  std::vector<std::string> chunks;
  const std::string_view stuff = pat.substr(i, j - i);
  if (stuff.find('-') == std::string_view::npos) {
    chunks.emplace_back(stuff);
  } else {
    std::size_t k = pat[i] == '!' ? i + 2 : i + 1;
    while (true) {
      k = pat.find('-', k);
      if (k == std::string_view::npos || k >= j) break;
      chunks.emplace_back(pat.substr(i, k - i));
      i = k + 1;
      k = k + 3;
    }
    const std::string_view last = pat.substr(i, j - i);
    if (!last.empty()) chunks.emplace_back(last);
    else chunks.back() += '-';
    for (std::size_t k2 = chunks.size() - 1; k2 > 0; --k2) {
      if (chunks[k2 - 1].empty() || chunks[k2].empty()) return false;
      if (static_cast<unsigned char>(chunks[k2 - 1].back()) >
          static_cast<unsigned char>(chunks[k2].front())) {
        chunks[k2 - 1] = chunks[k2 - 1].substr(0, chunks[k2 - 1].size() - 1) + chunks[k2].substr(1);
        chunks.erase(chunks.begin() + static_cast<std::ptrdiff_t>(k2));
      }
    }
  }
  if (chunks.size() == 1 && chunks[0].empty()) {
    out.never = true;
    return true;
  }
  if (chunks.size() == 1 && chunks[0] == "!") {
    out.any = true;
    return true;
  }
  out.negated = !chunks[0].empty() && chunks[0][0] == '!';
  if (out.negated) chunks[0].erase(0, 1);
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const std::string& chunk = chunks[c];
    // An empty chunk ("--" in the regex, a set operation in Python's re) or a one-byte chunk
    // between two ranges ("a-x-c") reads differently in Python's re: refused, not guessed.
    if (chunk.empty() || (c > 0 && c + 1 < chunks.size() && chunk.size() < 2)) return false;
    // The last byte of a chunk and the first of the next one bound a range.
    const std::size_t first = c > 0 ? 1 : 0;
    const std::size_t end = c + 1 < chunks.size() ? chunk.size() - 1 : chunk.size();
    for (std::size_t k = first; k < end; ++k) {
      const auto byte = static_cast<unsigned char>(chunk[k]);
      out.ranges.emplace_back(byte, byte);
    }
    if (c + 1 < chunks.size()) {
      if (chunks[c + 1].empty()) return false;
      out.ranges.emplace_back(static_cast<unsigned char>(chunk.back()),
                              static_cast<unsigned char>(chunks[c + 1].front()));
    }
  }
  return true;
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view what)
      : text_(text), what_(what), tokens_(tokenize(text)) {}

  NodePtr parse() {
    if (tokens_.empty()) fail(1, "the selection is empty");
    NodePtr root = expression(0);
    if (pos_ < tokens_.size()) {
      const Token& t = tokens_[pos_];
      if (t.text == ")") fail(t.position, "')' without a matching '('");
      fail(t.position, "unexpected '" + t.text +
                           "' after a complete selection (expected 'and', 'or' or the end; "
                           "values must follow their keyword)");
    }
    return root;
  }

 private:
  [[noreturn]] void fail(std::size_t position, const std::string& reason) const {
    throw UsageError(printable(std::string(what_) + " \"" + std::string(text_) +
                               "\": at character " + std::to_string(position) + ": " + reason));
  }

  // A message with control bytes (a NUL would cut what() short) shown as \xNN.
  static std::string printable(std::string_view text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 || byte == 0x7f) {
        out += "\\x";
        out += kHex[byte >> 4];
        out += kHex[byte & 15];
      } else {
        out += c;
      }
    }
    return out;
  }

  std::size_t end_position() const { return text_.size() + 1; }
  const Token* peek() const { return pos_ < tokens_.size() ? &tokens_[pos_] : nullptr; }

  // Precedence climbing as MDAnalysis's parse_expression: 'and' and 'or' both have precedence
  // 3 and are left-associative; 'not' takes a sub-expression of precedence 5 (one term).
  static constexpr int kBinaryPrecedence = 3;
  static constexpr int kNotPrecedence = 5;
  static constexpr int kContextPrecedence = 1;  // around, sphzone, sphlayer, byres, same
  // Bounds the parser's recursion and the evaluation's: deeper texts are refused.
  static constexpr std::size_t kMaxDepth = 256;
  std::size_t nesting_ = 0;

  // A run of one operator becomes one n-ary node (`a or b or c`), so that long lists of
  // alternatives do not make deep trees; each change of operator adds a level.
  NodePtr expression(int min_precedence) {
    NodePtr left = term();
    std::shared_ptr<SelectionNode> open;  // the n-ary node being extended, if any
    while (const Token* t = peek()) {
      if ((t->text != "and" && t->text != "or") || kBinaryPrecedence < min_precedence) break;
      const Token op = *t;
      ++pos_;
      if (!peek()) fail(end_position(), "'" + op.text + "' needs a selection on its right");
      NodePtr right = expression(kBinaryPrecedence + 1);
      const NodeKind kind = op.text == "and" ? NodeKind::kAnd : NodeKind::kOr;
      if (!open || open->kind != kind) {
        open = std::make_shared<SelectionNode>();
        open->kind = kind;
        open->children.push_back(std::move(left));
        open->depth = open->children[0]->depth + 1;
        open->per_atom = open->children[0]->per_atom;
        open->distances = open->children[0]->distances;
        if (open->depth > kMaxDepth) fail(op.position, too_deep());
        left = open;
      }
      open->depth = std::max(open->depth, right->depth + 1);
      open->per_atom = open->per_atom && right->per_atom;
      open->distances = open->distances || right->distances;
      if (open->depth > kMaxDepth) fail(op.position, too_deep());
      open->children.push_back(std::move(right));
    }
    return left;
  }

  static std::string too_deep() {
    return "the selection is nested too deeply (more than " + std::to_string(kMaxDepth) +
           " levels of parentheses, 'not' or alternating 'and'/'or')";
  }

  NodePtr term() {
    const Token* t = peek();
    if (!t) fail(end_position(), "a selection was expected here");
    const Token token = *t;
    ++pos_;
    const std::string& w = token.text;
    auto node = std::make_shared<SelectionNode>();
    if ((w == "(" || w == "not") && ++nesting_ > kMaxDepth) fail(token.position, too_deep());
    if (w == "(") {
      if (!peek()) fail(token.position, "'(' without a matching ')'");
      if (peek()->text == ")") fail(peek()->position, "empty parentheses");
      NodePtr inner = expression(0);
      if (!peek() || peek()->text != ")") {
        if (peek())
          fail(peek()->position, "expected 'and', 'or' or ')' here, found '" + peek()->text +
                                     "' (the '(' at character " + std::to_string(token.position) +
                                     " is not closed)");
        fail(token.position, "'(' without a matching ')'");
      }
      ++pos_;
      --nesting_;
      return inner;
    }
    if (w == ")") fail(token.position, "')' without a matching '(' or a selection before it");
    if (w == "and" || w == "or") fail(token.position, "'" + w + "' needs a selection on its left");
    if (w == "not") {
      if (!peek()) fail(end_position(), "'not' needs a selection on its right");
      node->kind = NodeKind::kNot;
      node->children.push_back(expression(kNotPrecedence));
      node->depth = node->children[0]->depth + 1;
      node->per_atom = node->children[0]->per_atom;
      node->distances = node->children[0]->distances;
      if (node->depth > kMaxDepth) fail(token.position, too_deep());
      --nesting_;
      return node;
    }
    if (w == "around" || w == "sphzone" || w == "sphlayer" || w == "byres" || w == "same")
      return context_node(token);
    if (w == "all") node->kind = NodeKind::kAll;
    else if (w == "none") node->kind = NodeKind::kNone;
    else if (w == "protein")
      node->kind = NodeKind::kResnameSet, node->set = &detail::protein_residues();
    else if (w == "nucleic")
      node->kind = NodeKind::kResnameSet, node->set = &detail::nucleic_residues();
    else if (w == "backbone") node->kind = NodeKind::kBackbone;
    else if (w == "name") pattern_values(*node, Field::kName, token);
    else if (w == "resname") pattern_values(*node, Field::kResname, token);
    else if (w == "segid") pattern_values(*node, Field::kSegid, token);
    else if (w == "chainID" || w == "chainid" || w == "chain")
      pattern_values(*node, Field::kChain, token);
    else if (w == "resid") range_values(*node, Field::kResid, token);
    else if (w == "index") range_values(*node, Field::kIndex, token);
    else if (w == "bynum") range_values(*node, Field::kBynum, token);
    else unknown_keyword(token);
    return node;
  }

  // around R SEL, sphzone R SEL, sphlayer R1 R2 SEL, byres SEL, same residue as SEL. SEL
  // reaches as far right as 'and'/'or' continue it (MDAnalysis's precedence 1 for them):
  // "around 5 resname LYS and name NZ" is around 5 (resname LYS and name NZ).
  NodePtr context_node(const Token& keyword) {
    if (++nesting_ > kMaxDepth) fail(keyword.position, too_deep());
    auto node = std::make_shared<SelectionNode>();
    const std::string& w = keyword.text;
    if (w == "around" || w == "sphzone") {
      node->kind = w == "around" ? NodeKind::kAround : NodeKind::kSphzone;
      node->radius = distance(keyword, "a distance");
    } else if (w == "sphlayer") {
      node->kind = NodeKind::kSphlayer;
      node->inner = distance(keyword, "an inner radius");
      const std::size_t at = peek() ? peek()->position : end_position();
      node->radius = distance(keyword, "an outer radius");
      if (node->inner > node->radius)
        fail(at, "sphlayer's outer radius " + tokens_[pos_ - 1].text +
                     " is smaller than its inner radius " + tokens_[pos_ - 2].text);
    } else {
      node->kind = NodeKind::kByres;
      if (w == "same") same_residue_as(keyword);
    }
    node->distances = node->kind != NodeKind::kByres;
    if (!peek()) fail(end_position(), "'" + w + "' needs a selection after it");
    node->children.push_back(expression(kContextPrecedence));
    const SelectionNode& child = *node->children[0];
    node->depth = child.depth + 1;
    if (node->depth > kMaxDepth) fail(keyword.position, too_deep());
    node->per_atom = false;
    node->distances = node->distances || child.distances;
    --nesting_;
    return node;
  }

  // "same residue as": the only property dcs supports after 'same' (MDAnalysis has more).
  void same_residue_as(const Token& keyword) {
    const Token* property = peek();
    if (!property || property->text != "residue")
      fail(property ? property->position : end_position(),
           "'same' is supported as 'same residue as SELECTION' only" +
               (property ? " (found '" + property->text + "')" : std::string()));
    ++pos_;
    if (!peek() || peek()->text != "as")
      fail(peek() ? peek()->position : end_position(),
           "'" + keyword.text + " residue' needs 'as' next ('same residue as SELECTION')");
    ++pos_;
  }

  // A distance in Å after around/sphzone/sphlayer: a finite number >= 0 (MDAnalysis reads it
  // with Python's float(); dcs refuses negative and non-finite values, which select nothing
  // there).
  double distance(const Token& keyword, const std::string& what) {
    const std::string usage = keyword.text == "sphlayer" ? "'sphlayer INNER OUTER SELECTION'"
                                                         : "'" + keyword.text + " R SELECTION'";
    const Token* t = peek();
    if (!t || is_keyword(t->text))
      fail(t ? t->position : end_position(),
           "'" + keyword.text + "' needs " + what + " in Å here (" + usage + ")");
    std::string_view text = t->text;
    if (text.starts_with('+')) text.remove_prefix(1);
    double value = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty() ||
        !std::isfinite(value) || value < 0.0)
      fail(t->position, "'" + t->text + "' is not " + what + " for '" + keyword.text +
                            "' (a finite number >= 0, in Å: " + usage + ")");
    ++pos_;
    return value;
  }

  [[noreturn]] void unknown_keyword(const Token& token) const {
    std::string_view best;
    std::size_t best_distance = std::string::npos;
    for (std::string_view k : kKeywords) {
      const std::size_t d = edit_distance(token.text, k);
      if (d < best_distance) best = k, best_distance = d;
    }
    std::string reason = "unknown keyword '" + token.text + "'";
    if (best_distance <= std::max<std::size_t>(2, token.text.size() * 2 / 3))
      reason += " (did you mean '" + std::string(best) + "'?)";
    else
      reason +=
          " (keywords: all none name resname resid segid chainID index bynum protein backbone "
          "nucleic around sphzone sphlayer byres same, combined with not and or and "
          "parentheses)";
    fail(token.position, reason);
  }

  // The values after a keyword: tokens up to the next keyword, operator or parenthesis; a
  // leading backslash is removed (MDAnalysis's escape for names spelled like keywords).
  std::vector<Token> values(const Token& keyword) {
    std::vector<Token> out;
    while (const Token* t = peek()) {
      if (is_keyword(t->text)) break;
      Token v = *t;
      if (!v.text.empty() && v.text[0] == '\\') v.text.erase(0, 1);
      out.push_back(std::move(v));
      ++pos_;
    }
    if (out.empty())
      fail(peek() ? peek()->position : end_position(),
           "'" + keyword.text + "' needs at least one value" +
               (peek() ? " (found '" + peek()->text + "')" : ""));
    return out;
  }

  void pattern_values(SelectionNode& node, Field field, const Token& keyword) {
    node.kind = NodeKind::kPattern;
    node.field = field;
    for (const Token& v : values(keyword)) node.patterns.push_back(compile(v));
  }

  Pattern compile(const Token& value) const {
    Pattern out;
    const std::string_view pat = value.text;
    std::size_t i = 0;
    while (i < pat.size()) {
      const char c = pat[i++];
      PatternElement e;
      if (c == '*') {
        if (!out.empty() && out.back().kind == PatternElement::kAnyRun) continue;
        e.kind = PatternElement::kAnyRun;
      } else if (c == '?') {
        e.kind = PatternElement::kAnyOne;
      } else if (c == '[') {
        // The closing ']' as fnmatch finds it: a ']' right after '[' or '[!' is a member.
        std::size_t j = i;
        if (j < pat.size() && pat[j] == '!') ++j;
        if (j < pat.size() && pat[j] == ']') ++j;
        while (j < pat.size() && pat[j] != ']') ++j;
        if (j >= pat.size()) {  // no closing ']': a literal '['
          e.literal = '[';
        } else {
          e.kind = PatternElement::kClass;
          if (!parse_class(pat, i, j, e.cls))
            fail(value.position + (i - 1), "the wildcard class '" +
                                               std::string(pat.substr(i - 1, j - i + 2)) +
                                               "' is not supported (an empty range inside it)");
          i = j + 1;
        }
      } else {
        e.literal = static_cast<unsigned char>(c);
      }
      out.push_back(std::move(e));
    }
    return out;
  }

  static bool is_delimiter(std::string_view s) { return s == "to" || s == ":" || s == "-"; }
  static bool ends_with_delimiter(std::string_view s) {
    return s.ends_with("to") || s.ends_with(':') || s.ends_with('-');
  }

  void range_values(SelectionNode& node, Field field, const Token& keyword) {
    node.kind = NodeKind::kRange;
    node.field = field;
    std::vector<Token> raw = values(keyword);
    // MDAnalysis's join_separated_values: "1 : 5", "1 to 5", "1- 5", "1 :5" are one value.
    std::vector<Token> joined;
    for (std::size_t k = 0; k < raw.size(); ++k) {
      const Token& v = raw[k];
      if (is_delimiter(v.text)) {
        if (joined.empty() || k + 1 >= raw.size())
          fail(v.position, "the range separator '" + v.text + "' needs a number on each side");
        joined.back().text += " " + v.text + " " + raw[++k].text;
      } else if (!joined.empty() && (v.text.starts_with("--") || v.text.starts_with("to") ||
                                     v.text[0] == ':' || ends_with_delimiter(joined.back().text))) {
        joined.back().text += " " + v.text;
      } else {
        joined.push_back(v);
      }
    }
    for (const Token& v : joined) node.ranges.push_back(parse_range(v, keyword));
  }

  // An integer "-?[0-9]+" at s[i...]; advances i. False when none is there or it overflows.
  static bool read_integer(std::string_view s, std::size_t& i, long long& value) {
    const std::size_t start = i;
    if (i < s.size() && s[i] == '-') ++i;
    const std::size_t digits = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == digits) return false;
    const auto [end, ec] = std::from_chars(s.data() + start, s.data() + i, value);
    return ec == std::errc{} && end == s.data() + i;
  }

  detail::Range parse_range(const Token& v, const Token& keyword) const {
    const std::string_view s = v.text;
    const std::string expected =
        "'" + keyword.text + "' expects integers or ranges a:b, a-b, a to b";
    std::size_t i = 0;
    long long lo = 0, hi = 0;
    auto space = [&] {
      while (i < s.size() && s[i] == ' ') ++i;
    };
    if (!read_integer(s, i, lo))
      fail(v.position, "'" + v.text + "' is not an integer or a range (" + expected + ")");
    if (i == s.size()) return {lo, lo};
    const std::size_t after_first = i;
    space();
    bool separator = false;
    if (i < s.size() && (s[i] == ':' || s[i] == '-')) {
      ++i;
      separator = true;
    } else if (i > after_first && s.substr(i).starts_with("to ")) {
      i += 2;
      separator = true;
    }
    if (!separator) {
      if (keyword.text == "resid" && i == after_first && i + 1 == s.size() &&
          ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z')))
        fail(v.position, "'" + v.text + "': insertion codes are not supported");
      fail(v.position, "'" + v.text + "' is not an integer or a range (" + expected + ")");
    }
    space();
    if (!read_integer(s, i, hi) || i != s.size())
      fail(v.position, "'" + v.text + "' is not an integer or a range (" + expected + ")");
    if (lo > hi)
      fail(v.position, "the range '" + v.text + "' is empty: its start is greater than its end");
    return {lo, hi};
  }

  std::string_view text_;
  std::string_view what_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

}  // namespace

Selection::Selection(std::string_view text, std::string_view what)
    : text_(text), root_(Parser(text, what).parse()) {}

bool Selection::is_per_atom() const noexcept { return root_->per_atom; }

bool Selection::uses_distances() const noexcept { return root_->distances; }

bool Selection::matches(const Atom& atom, std::size_t index) const {
  if (!root_->per_atom)
    throw InternalError("Selection::matches() on \"" + text_ +
                        "\", which looks at other atoms (select() judges it)");
  return detail::evaluate_atom(*root_, atom, index);
}

std::vector<std::size_t> Selection::select(const std::vector<Atom>& atoms,
                                           const UnitCell& cell) const {
  std::vector<Vec3> positions;
  if (!root_->per_atom) {
    positions.reserve(atoms.size());
    for (const Atom& a : atoms) positions.push_back(a.position);
  }
  return select(atoms, positions, cell);
}

std::vector<std::size_t> Selection::select(const std::vector<Atom>& atoms,
                                           std::span<const Vec3> positions,
                                           const UnitCell& cell) const {
  std::vector<std::size_t> out;
  if (root_->per_atom) {
    for (std::size_t i = 0; i < atoms.size(); ++i)
      if (detail::evaluate_atom(*root_, atoms[i], i)) out.push_back(i);
    return out;
  }
  if (positions.size() != atoms.size())
    throw InternalError("Selection::select(): " + std::to_string(positions.size()) +
                        " positions for " + std::to_string(atoms.size()) + " atoms");
  const std::vector<char> mask = detail::evaluate_all(*root_, {atoms, positions, cell});
  for (std::size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) out.push_back(i);
  return out;
}

const std::string& Selection::text() const { return text_; }

}  // namespace dcs
