// The selections that look at other atoms (dcs/selection.hpp): around, sphzone, sphlayer,
// byres, same residue as, on hand-made systems with known answers: images through the cell's
// faces, a skewed cell where only the triclinic minimum image is right, the bounds (<= R, > R1),
// precedence, the residue rule, and every error with its position. MDAnalysis's answers on real
// systems: tests/selection/distance_check.py.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/selection.hpp"
#include "dcs/unit_cell.hpp"

namespace {

using dcs::Atom;
using dcs::Selection;
using dcs::UnitCell;
using V = std::vector<std::size_t>;

Atom near_atom(std::string name, std::string res_name, long long res_seq, dcs::Vec3 position) {
  Atom a;
  a.name = std::move(name);
  a.res_name = std::move(res_name);
  a.res_seq = res_seq;
  a.position = position;
  return a;
}

const UnitCell& cube20() {
  static const UnitCell cell = UnitCell::from_lengths_angles({20, 20, 20}, {90, 90, 90});
  return cell;
}

// 0, 1: LIG 1 Å apart near the x = 0 face; 2, 3: a water whose O is 1.5 Å from atom 0 through
// the face (19.5 - 20 = -0.5) and its H 2.5 Å; 4: a far water; 5: an ion 19.5 Å from atom 0
// along z, 0.5 Å through the z face (and a cell away).
const std::vector<Atom>& near_face_system() {
  static const std::vector<Atom> atoms = {
      near_atom("C1", "LIG", 1, {1.0, 10.0, 10.0}), near_atom("C2", "LIG", 1, {2.0, 10.0, 10.0}),
      near_atom("O", "WAT", 2, {19.5, 10.0, 10.0}), near_atom("H", "WAT", 2, {18.5, 10.0, 10.0}),
      near_atom("O", "WAT", 3, {10.0, 10.0, 10.0}), near_atom("NA", "NA", 4, {1.0, 10.0, 29.5}),
  };
  return atoms;
}

V near_select(const std::string& text, const UnitCell& cell = cube20()) {
  return Selection(text).select(near_face_system(), cell);
}

TEST(SelectionDistance, AroundUsesTheNearestImageAndExcludesItsOwnAtoms) {
  EXPECT_EQ(near_select("around 2 resname LIG"), (V{2, 5}));  // the O through x, the ion through z
  EXPECT_EQ(near_select("around 2 resname LIG", UnitCell()), V{});  // no cell: plain distances
  EXPECT_EQ(near_select("around 3 resname LIG"), (V{2, 3, 5}));
  EXPECT_EQ(near_select("around 1.5 index 0"), (V{1, 2, 5}));  // 1.5 Å exactly: within (<=)
  EXPECT_EQ(near_select("around 1.4999 index 0"), (V{1, 5}));
  EXPECT_EQ(near_select("around 100 index 4"), (V{0, 1, 2, 3, 5}));  // never itself
  EXPECT_EQ(near_select("around 1e300 index 4"), (V{0, 1, 2, 3, 5}));
  EXPECT_EQ(near_select("around 1e300 index 4", UnitCell()), (V{0, 1, 2, 3, 5}));
  EXPECT_EQ(near_select("around 2 none"), V{});
  EXPECT_EQ(near_select("not around 2 resname LIG"), (V{0, 1, 3, 4}));
}

TEST(SelectionDistance, SphereAroundTheCentreOfGeometry) {
  // Centre of LIG: (1.5, 10, 10). The O is 2 Å from it through the face, the H 3 Å, the ion
  // 0.71 Å through z.
  EXPECT_EQ(near_select("sphzone 2 resname LIG"), (V{0, 1, 2, 5}));  // 2 Å exactly: within; LIG too
  EXPECT_EQ(near_select("sphzone 2 resname LIG", UnitCell()), (V{0, 1}));
  EXPECT_EQ(near_select("sphlayer 0.5 3 resname LIG"),
            (V{2, 3, 5}));  // 0.5 Å: not beyond the inner
  EXPECT_EQ(near_select("sphlayer 0 0.5 resname LIG"), (V{0, 1}));
  EXPECT_EQ(near_select("sphzone 5 none"), V{});
}

TEST(SelectionDistance, TriclinicMinimumImage) {
  // a = (10, 0, 0), b = (5, 8.66, 0): atom 1 sits 0.3 Å from atom 0's image at b, while every
  // orthorhombic reading of the box (x, y, z apart) puts it about 5 Å away.
  const UnitCell skewed = UnitCell::from_lengths_angles({10, 10, 10}, {90, 90, 60});
  const dcs::Vec3 b = skewed.vectors()[1];
  const std::vector<Atom> atoms = {near_atom("A", "X", 1, {0.0, 0.0, 5.0}),
                                   near_atom("B", "Y", 2, {b[0] + 0.3, b[1], 5.0}),
                                   near_atom("C", "Z", 3, {5.0, 2.0, 5.0})};
  EXPECT_EQ(Selection("around 0.5 index 0").select(atoms, skewed), (V{1}));
  EXPECT_EQ(Selection("around 0.5 index 0").select(atoms), V{});
  EXPECT_EQ(Selection("sphzone 0.31 index 1").select(atoms, skewed), (V{0, 1}));
}

TEST(SelectionDistance, PrecedenceReachesRightAsInMDAnalysis) {
  // around 2 (resname LIG and name C2): atom 1 is 2.5 Å from the O through the face.
  EXPECT_EQ(near_select("around 2 resname LIG and name C2"), (V{0, 5}));
  EXPECT_EQ(near_select("(around 2 resname LIG) and name O"), (V{2}));
  EXPECT_EQ(near_select("name O and around 2 resname LIG"), (V{2}));
  EXPECT_EQ(near_select("byres around 2 resname LIG"), (V{2, 3, 5}));
  EXPECT_EQ(near_select("same residue as around 2 resname LIG"), (V{2, 3, 5}));
  EXPECT_EQ(near_select("byres name H or index 0"), (V{0, 1, 2, 3}));  // byres (name H or index 0)
}

TEST(SelectionDistance, ResiduesAreRunsOfConsecutiveAtoms) {
  // The same residue number twice, apart or with another name, is two residues.
  const std::vector<Atom> atoms = {near_atom("N", "ALA", 1, {}), near_atom("CA", "ALA", 1, {}),
                                   near_atom("N", "GLY", 1, {}), near_atom("N", "ALA", 2, {}),
                                   near_atom("N", "ALA", 1, {}), near_atom("C", "ALA", 1, {})};
  EXPECT_EQ(Selection("byres index 1").select(atoms), (V{0, 1}));
  EXPECT_EQ(Selection("byres index 2").select(atoms), (V{2}));
  EXPECT_EQ(Selection("same residue as index 5").select(atoms), (V{4, 5}));
  EXPECT_EQ(Selection("byres none").select(atoms), V{});
}

TEST(SelectionDistance, PositionsGivenApartAndTheFlags) {
  const Selection around("around 2 resname LIG");
  std::vector<dcs::Vec3> frame;
  for (const Atom& a : near_face_system()) frame.push_back(a.position);
  frame[4] = {2.0, 11.0, 10.0};  // the far water's O moved next to the ligand
  EXPECT_EQ(around.select(near_face_system(), frame, cube20()), (V{2, 4, 5}));
  EXPECT_THROW(around.select(near_face_system(), std::vector<dcs::Vec3>(2), cube20()),
               dcs::InternalError);
  EXPECT_FALSE(around.is_per_atom());
  EXPECT_TRUE(around.uses_distances());
  EXPECT_THROW((void)around.matches(near_face_system()[0], 0), dcs::InternalError);
  const Selection byres("byres name O");
  EXPECT_FALSE(byres.is_per_atom());
  EXPECT_FALSE(byres.uses_distances());
  EXPECT_TRUE(Selection("name O or not index 3").is_per_atom());
  EXPECT_TRUE(Selection("not (byres name O) and sphzone 3 all").uses_distances());
}

std::string distance_error_of(const std::string& text) {
  try {
    Selection s(text);
  } catch (const dcs::UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(SelectionDistance, ErrorsNameThePosition) {
  EXPECT_EQ(distance_error_of("around name CA"),
            "--select \"around name CA\": at character 8: 'around' needs a distance in Å here "
            "('around R SELECTION')");
  EXPECT_EQ(distance_error_of("around 5"),
            "--select \"around 5\": at character 9: 'around' needs a selection after it");
  EXPECT_EQ(distance_error_of("name CA and around -1 protein"),
            "--select \"name CA and around -1 protein\": at character 20: '-1' is not a distance "
            "for 'around' (a finite number >= 0, in Å: 'around R SELECTION')");
  EXPECT_NE(distance_error_of("sphzone nan all").find("at character 9: 'nan' is not a distance"),
            std::string::npos);
  EXPECT_NE(distance_error_of("around 1e999 all").find("at character 8: '1e999' is not"),
            std::string::npos);
  EXPECT_NE(distance_error_of("around 5x all").find("at character 8: '5x' is not"),
            std::string::npos);
  EXPECT_EQ(distance_error_of("sphlayer 8 4 name CA"),
            "--select \"sphlayer 8 4 name CA\": at character 12: sphlayer's outer radius 4 is "
            "smaller than its inner radius 8");
  EXPECT_EQ(distance_error_of("sphlayer 8 name CA"),
            "--select \"sphlayer 8 name CA\": at character 12: 'sphlayer' needs an outer radius "
            "in Å here ('sphlayer INNER OUTER SELECTION')");
  EXPECT_EQ(distance_error_of("same resid as name CA"),
            "--select \"same resid as name CA\": at character 6: 'same' is supported as 'same "
            "residue as SELECTION' only (found 'resid')");
  EXPECT_EQ(distance_error_of("same residue name CA"),
            "--select \"same residue name CA\": at character 14: 'same residue' needs 'as' next "
            "('same residue as SELECTION')");
  EXPECT_EQ(distance_error_of("byres"),
            "--select \"byres\": at character 6: 'byres' needs a selection after it");
  EXPECT_EQ(distance_error_of("name around"),
            "--select \"name around\": at character 6: 'name' needs at least one value (found "
            "'around')");
  EXPECT_EQ(Selection("around +2.5e0 all").text(), "around +2.5e0 all");
  EXPECT_EQ(Selection("name \\around").select({near_atom("around", "X", 1, {})}), (V{0}));
}

}  // namespace
