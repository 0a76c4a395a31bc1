// The selection language (dcs/selection.hpp): keywords, wildcards, ranges, precedence as in
// MDAnalysis, and every parse error with its character position.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/selection.hpp"

namespace {

using dcs::Atom;
using dcs::Selection;

Atom atom(std::string name, std::string res_name, long long res_seq, std::string segment,
          std::string chain = "A") {
  Atom a;
  a.name = std::move(name);
  a.res_name = std::move(res_name);
  a.res_seq = res_seq;
  a.segment = std::move(segment);
  a.chain = std::move(chain);
  return a;
}

// 0 N ALA 1 PROA A   1 CA ALA 1   2 CB ALA 1   3 C ALA 1   4 O ALA 1
// 5 N GLY 2 PROA A   6 CA GLY 2   7 OT1 GLY 2
// 8 OH2 TIP3 -3 SOLV W   9 H1 TIP3 -3 SOLV W   10 NA SOD 7 IONS ""   11 P DA 12 DNA B
const std::vector<Atom>& atoms() {
  static const std::vector<Atom> table = {
      atom("N", "ALA", 1, "PROA"),          atom("CA", "ALA", 1, "PROA"),
      atom("CB", "ALA", 1, "PROA"),         atom("C", "ALA", 1, "PROA"),
      atom("O", "ALA", 1, "PROA"),          atom("N", "GLY", 2, "PROA"),
      atom("CA", "GLY", 2, "PROA"),         atom("OT1", "GLY", 2, "PROA"),
      atom("OH2", "TIP3", -3, "SOLV", "W"), atom("H1", "TIP3", -3, "SOLV", "W"),
      atom("NA", "SOD", 7, "IONS", ""),     atom("P", "DA", 12, "DNA", "B")};
  return table;
}

std::vector<std::size_t> sel(const std::string& text) { return Selection(text).select(atoms()); }

using V = std::vector<std::size_t>;

TEST(SelectionParse, Keywords) {
  EXPECT_EQ(sel("all").size(), 12u);
  EXPECT_EQ(sel("none"), V{});
  EXPECT_EQ(sel("name CA"), (V{1, 6}));
  EXPECT_EQ(sel("name CA CB"), (V{1, 2, 6}));
  EXPECT_EQ(sel("resname TIP3"), (V{8, 9}));
  EXPECT_EQ(sel("segid PROA"), (V{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(sel("chainID W B"), (V{8, 9, 11}));
  EXPECT_EQ(sel("chainid W"), (V{8, 9}));
  EXPECT_EQ(sel("chain B"), (V{11}));
  EXPECT_EQ(sel("resid 2"), (V{5, 6, 7}));
  EXPECT_EQ(sel("resid -3"), (V{8, 9}));
  EXPECT_EQ(sel("index 0 11"), (V{0, 11}));
  EXPECT_EQ(sel("bynum 1 12"), (V{0, 11}));
  EXPECT_EQ(sel("protein"), (V{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(sel("backbone"), (V{0, 1, 3, 4, 5, 6}));  // no OT1, as MDAnalysis
  EXPECT_EQ(sel("nucleic"), (V{11}));
}

TEST(SelectionParse, RangesAreInclusiveInEverySpelling) {
  for (const char* text : {"resid 1:2", "resid 1-2", "resid 1 to 2", "resid 1 : 2", "resid 1- 2",
                           "resid 1 -2 2", "resid 1 :2", "resid 1: 2", "resid 1 - 2"})
    EXPECT_EQ(sel(text), (V{0, 1, 2, 3, 4, 5, 6, 7})) << text;
  EXPECT_EQ(sel("resid -5--3"), (V{8, 9}));
  EXPECT_EQ(sel("resid -5:-3 12"), (V{8, 9, 11}));
  EXPECT_EQ(sel("index 2:4 10-11"), (V{2, 3, 4, 10, 11}));
  EXPECT_EQ(sel("bynum 3:5"), (V{2, 3, 4}));
  EXPECT_EQ(sel("index 5:5"), (V{5}));
  EXPECT_EQ(sel("index 100:200"), V{});
  EXPECT_EQ(sel("index -3:1"), (V{0, 1}));
  EXPECT_EQ(sel("index 9223372036854775807"), V{});
}

TEST(SelectionParse, Wildcards) {
  EXPECT_EQ(sel("name C*"), (V{1, 2, 3, 6}));
  EXPECT_EQ(sel("name ?"), (V{0, 3, 4, 5, 11}));
  EXPECT_EQ(sel("name O*"), (V{4, 7, 8}));
  EXPECT_EQ(sel("name *1"), (V{7, 9}));
  EXPECT_EQ(sel("name **A"), (V{1, 6, 10}));
  EXPECT_EQ(sel("name [NO]"), (V{0, 4, 5}));
  EXPECT_EQ(sel("name [!NO]"), (V{3, 11}));
  EXPECT_EQ(sel("name [A-D]?"), (V{1, 2, 6}));
  EXPECT_EQ(sel("resname T*3 S?D"), (V{8, 9, 10}));
  EXPECT_EQ(sel("segid P*"), (V{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(sel("name [z-a]"), V{});       // a reversed range is empty, as in fnmatch
  EXPECT_EQ(sel("name [C"), V{});          // no closing ']': a literal '['
  EXPECT_EQ(sel("name [b-a-C]"), (V{3}));  // fnmatch: b-a dropped with its ends: '-' or 'C'
  EXPECT_EQ(sel("chainID \"\""), V{});
  EXPECT_EQ(sel("name \\protein"), V{});  // an escaped keyword is a value
  EXPECT_EQ(sel("name \\CA"), (V{1, 6}));
}

TEST(SelectionParse, CaseSensitive) {
  EXPECT_EQ(sel("name ca"), V{});
  EXPECT_THROW(Selection("NAME CA"), dcs::UsageError);
  EXPECT_THROW(Selection("name CA AND resid 1"), dcs::UsageError);  // AND is a value, then resid
}

TEST(SelectionParse, AndOrHaveEqualPrecedenceFromTheLeftAsInMDAnalysis) {
  // (name CA or name CB) and resid 1, not name CA or (name CB and resid 1).
  EXPECT_EQ(sel("name CA or name CB and resid 1"), (V{1, 2}));
  EXPECT_EQ(sel("name CA or (name CB and resid 1)"), (V{1, 2, 6}));
  EXPECT_EQ(sel("resid 1 and name CA or name N"), (V{0, 1, 5}));
  EXPECT_EQ(sel("not name CA and resid 1"), (V{0, 2, 3, 4}));
  EXPECT_EQ(sel("not (name CA and resid 1)").size(), 11u);
  EXPECT_EQ(sel("not not name CA"), (V{1, 6}));
  EXPECT_EQ(sel("protein and not backbone"), (V{2, 7}));
  EXPECT_EQ(sel("((name CA))or(name CB)"), (V{1, 2, 6}));
  EXPECT_EQ(sel("name CA or name CB or name N or name C"), (V{0, 1, 2, 3, 5, 6}));
  EXPECT_EQ(sel("segid PROA and resid 2 and not name OT1"), (V{5, 6}));
}

TEST(SelectionParse, MatchesAgreesWithSelectAndKeepsTheText) {
  const Selection s("  bynum 2 or name P  ");
  EXPECT_EQ(s.text(), "  bynum 2 or name P  ");
  for (std::size_t i = 0; i < atoms().size(); ++i)
    EXPECT_EQ(s.matches(atoms()[i], i), i == 1 || i == 11) << i;
  EXPECT_EQ(s.select({}), V{});
}

// Every error: the message names the option, the text, the 1-based character and the reason.
std::string error_of(const std::string& text, const std::string& what = "--select") {
  try {
    Selection s(text, what);
  } catch (const dcs::UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(SelectionErrors, MessagesNameThePosition) {
  EXPECT_EQ(error_of(""), "--select \"\": at character 1: the selection is empty");
  EXPECT_EQ(error_of("   ", "--align"), "--align \"   \": at character 1: the selection is empty");
  EXPECT_EQ(error_of("nam CA"),
            "--select \"nam CA\": at character 1: unknown keyword 'nam' (did you mean 'name'?)");
  EXPECT_EQ(error_of("name CA and resnme ALA"),
            "--select \"name CA and resnme ALA\": at character 13: unknown keyword 'resnme' "
            "(did you mean 'resname'?)");
  EXPECT_EQ(error_of("segment PROA"),
            "--select \"segment PROA\": at character 1: unknown keyword 'segment' (did you mean "
            "'segid'?)");
  EXPECT_NE(error_of("xyzzyplugh").find("unknown keyword 'xyzzyplugh' (keywords: all none"),
            std::string::npos);
  EXPECT_EQ(error_of("name"), "--select \"name\": at character 5: 'name' needs at least one value");
  EXPECT_EQ(error_of("name and resid 1"),
            "--select \"name and resid 1\": at character 6: 'name' needs at least one value "
            "(found 'and')");
  EXPECT_EQ(error_of("(name CA"),
            "--select \"(name CA\": at character 1: '(' without a matching ')'");
  EXPECT_EQ(error_of("name CA)"),
            "--select \"name CA)\": at character 8: ')' without a matching '('");
  EXPECT_EQ(error_of("()"), "--select \"()\": at character 2: empty parentheses");
  EXPECT_EQ(error_of("(name CA protein)"),
            "--select \"(name CA protein)\": at character 10: expected 'and', 'or' or ')' here, "
            "found 'protein' (the '(' at character 1 is not closed)");
  EXPECT_EQ(error_of("resid 5:3"),
            "--select \"resid 5:3\": at character 7: the range '5:3' is empty: its start is "
            "greater than its end");
  EXPECT_EQ(error_of("resid 1.5"),
            "--select \"resid 1.5\": at character 7: '1.5' is not an integer or a range ('resid' "
            "expects integers or ranges a:b, a-b, a to b)");
  EXPECT_NE(error_of("index one").find("at character 7: 'one' is not an integer"),
            std::string::npos);
  EXPECT_NE(error_of("bynum 1:5x").find("'1:5x' is not an integer"), std::string::npos);
  EXPECT_NE(error_of("resid 1::5").find("'1::5' is not an integer"), std::string::npos);
  EXPECT_NE(error_of("resid 99999999999999999999").find("is not an integer"), std::string::npos);
  EXPECT_EQ(error_of("resid 10A"),
            "--select \"resid 10A\": at character 7: '10A': insertion codes are not supported");
  EXPECT_EQ(error_of("resid : 5"),
            "--select \"resid : 5\": at character 7: the range separator ':' needs a number on "
            "each side");
  EXPECT_EQ(error_of("resid 5 to"),
            "--select \"resid 5 to\": at character 9: the range separator 'to' needs a number on "
            "each side");
  EXPECT_EQ(error_of("protein backbone"),
            "--select \"protein backbone\": at character 9: unexpected 'backbone' after a complete "
            "selection (expected 'and', 'or' or the end; values must follow their keyword)");
  EXPECT_EQ(error_of("name CA and"),
            "--select \"name CA and\": at character 12: 'and' needs a selection on its right");
  EXPECT_EQ(error_of("or name CA"),
            "--select \"or name CA\": at character 1: 'or' needs a selection on its left");
  EXPECT_EQ(error_of("not"),
            "--select \"not\": at character 4: 'not' needs a selection on its right");
  EXPECT_EQ(error_of("name CA and )"),
            "--select \"name CA and )\": at character 13: ')' without a matching '(' or a "
            "selection before it");
}

TEST(SelectionErrors, ControlBytesAreShownEscaped) {
  EXPECT_EQ(error_of(std::string("nam\0e\tCA", 8)),
            "--select \"nam\\x00e\\x09CA\": at character 1: unknown keyword 'nam\\x00e' (did you "
            "mean 'name'?)");
}

TEST(SelectionErrors, DeepNestingIsRefusedNotOverflowed) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "(";
  EXPECT_NE(error_of(deep + "all").find("nested too deeply"), std::string::npos);
  std::string nots;
  for (int i = 0; i < 100000; ++i) nots += "not ";
  EXPECT_NE(error_of(nots + "all").find("nested too deeply"), std::string::npos);
  std::string alternating = "all";
  for (int i = 0; i < 100000; ++i) alternating += i % 2 ? " and all" : " or all";
  EXPECT_NE(error_of(alternating).find("nested too deeply"), std::string::npos);
  // A long run of one operator is one level, however long.
  std::string many = "index 0";
  for (int i = 1; i < 100000; ++i) many += " or index " + std::to_string(i);
  EXPECT_EQ(Selection(many).select(atoms()).size(), 12u);
}

}  // namespace
