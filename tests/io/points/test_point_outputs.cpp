// Colours, the point tables (CSV, HDF5) and atoms with values (PDB).
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../scratch_dir.hpp"
#include "dcs/error.hpp"
#include "dcs/io/atom_values.hpp"
#include "dcs/io/colour_map.hpp"
#include "dcs/io/point_table.hpp"
#ifdef DCS_HAVE_HDF5
#include <hdf5.h>
#endif

namespace {

using dcs::Vec3;
using dcs::io::Rgb;

TEST(ColourMap, RedWhiteBlueSymmetric) {
  const dcs::io::ColourMap map(10.0);
  EXPECT_EQ(map.colour(-10.0), (Rgb{255, 0, 0}));
  EXPECT_EQ(map.colour(-1e9), (Rgb{255, 0, 0}));
  EXPECT_EQ(map.colour(0.0), (Rgb{255, 255, 255}));
  EXPECT_EQ(map.colour(5.0), (Rgb{128, 128, 255}));
  EXPECT_EQ(map.colour(-5.0), (Rgb{255, 128, 128}));
  EXPECT_EQ(map.colour(12.0), (Rgb{0, 0, 255}));
  EXPECT_EQ(map.colour(std::nan("")), (Rgb{128, 128, 128}));
  EXPECT_THROW(dcs::io::ColourMap(0.0), dcs::UsageError);
  EXPECT_THROW(dcs::io::ColourMap(std::nan("")), dcs::UsageError);
}

TEST(ColourMap, SymmetricRangeIsAPercentileOfMagnitudes) {
  std::vector<float> values;
  for (int k = 1; k <= 100; ++k) values.push_back(static_cast<float>(k % 2 ? -k : k));
  EXPECT_NEAR(dcs::io::symmetric_range(values), 95.0, 0.1);
  EXPECT_NEAR(dcs::io::symmetric_range(values, 50.0), 50.0, 0.05);
  EXPECT_EQ(dcs::io::symmetric_range({0.0f, 0.0f}), 1.0);
  EXPECT_EQ(dcs::io::symmetric_range({}), 1.0);
}

dcs::io::PointTable table() {
  dcs::io::PointTable t;
  t.positions = {{1.0, 2.0, 3.0}, {-0.1, 1e-7, 12345.678901234}};
  t.values = {0.1f, -3.4028235e38f};
  t.normals = {{0, 0, 1}, {1, 0, 0}};
  t.surface_positions = {{1.0, 2.0, 1.6}, {-1.5, 1e-7, 12345.678901234}};
  t.unit = "kT/e";
  t.attributes = {{"physics", "coulomb, epsilon 1"}, {"offset", "1.4"}};
  return t;
}

TEST(PointTable, CsvRoundTripsEveryBit) {
  dcs::test::ScratchDir dir;
  dcs::io::write_point_csv(dir.file("p.csv"), table(), false);
  const std::string text = dcs::test::read_bytes(dir.file("p.csv"));
  EXPECT_EQ(text.substr(0, text.find("x,y,z")),
            "# dcs: electrostatic potential at points (x, y, z in angstrom)\n# unit: kT/e\n"
            "# physics: coulomb, epsilon 1\n# offset: 1.4\n");
  std::istringstream in(text.substr(text.find("x,y,z")));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "x,y,z,potential,nx,ny,nz,surface_x,surface_y,surface_z");
  const dcs::io::PointTable t = table();
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(std::getline(in, line));
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    ASSERT_EQ(cells.size(), 10u);
    for (std::size_t a = 0; a < 3; ++a) EXPECT_EQ(std::stod(cells[a]), t.positions[i][a]);
    EXPECT_EQ(std::strtof(cells[3].c_str(), nullptr), t.values[i]);
    EXPECT_EQ(std::stod(cells[9]), t.surface_positions[i][2]);
  }
  EXPECT_EQ(text.find("0.100000001"), std::string::npos);  // shortest, not %.9g noise
  dcs::io::PointTable bad = table();
  bad.values.pop_back();
  EXPECT_THROW(dcs::io::write_point_csv(dir.file("q.csv"), bad, false), dcs::InternalError);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"p.csv"}));
}

#ifdef DCS_HAVE_HDF5
TEST(PointTable, Hdf5DatasetsAndAttributes) {
  dcs::test::ScratchDir dir;
  dcs::io::write_point_hdf5(dir.file("p.h5"), table(), false);
  const hid_t file = H5Fopen(dir.file("p.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  std::vector<double> positions(6);
  std::vector<float> values(2);
  const hid_t position = H5Dopen2(file, "/points/position", H5P_DEFAULT);
  ASSERT_GE(H5Dread(position, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, positions.data()),
            0);
  const hid_t potential = H5Dopen2(file, "/points/potential", H5P_DEFAULT);
  ASSERT_GE(H5Dread(potential, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  EXPECT_EQ(positions[5], 12345.678901234);
  EXPECT_EQ(values, table().values);
  EXPECT_GT(H5Lexists(file, "/points/normal", H5P_DEFAULT), 0);
  EXPECT_GT(H5Lexists(file, "/points/surface_position", H5P_DEFAULT), 0);
  EXPECT_GT(H5Aexists(file, "physics"), 0);
  EXPECT_GT(H5Aexists(potential, "units"), 0);
  H5Dclose(position);
  H5Dclose(potential);
  H5Fclose(file);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"p.h5"}));
}
#endif

dcs::System atoms() {
  dcs::System system;
  const auto add = [&](long long serial, const char* name, const char* res, const char* chain,
                       long long res_seq, Vec3 p, bool het = false) {
    system.atoms.push_back({.position = p,
                            .serial = serial,
                            .name = name,
                            .res_name = res,
                            .chain = chain,
                            .segment = "",
                            .res_seq = res_seq,
                            .hetatm = het});
  };
  add(1, "N", "ALA", "A", 1, {1.0, 2.0, 3.0});
  add(2, "CA", "ALA", "A", 1, {-999.999, 9999.999, 0.5});
  add(100000, "HG21", "TIP3", "", 10000, {0, 0, 0}, true);
  add(3, "O", "HOH", "B", -5, {0, 0, 0});
  return system;
}

TEST(AtomValues, PdbColumnsAndClamping) {
  dcs::test::ScratchDir dir;
  dcs::io::AtomValuesMeta meta;
  meta.unit = "kT/e";
  meta.remarks = {"physics: coulomb"};
  meta.values_table = "atoms.csv";
  const std::vector<float> values = {1.234f, -12345.6f, 2e6f,
                                     std::numeric_limits<float>::quiet_NaN()};
  dcs::io::write_atoms_with_values(dir.file("a.pdb"), atoms(), values, meta);
  std::istringstream in(dcs::test::read_bytes(dir.file("a.pdb")));
  std::vector<std::string> records;
  std::string remarks;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("REMARK", 0) == 0) remarks += line + "\n";
    else records.push_back(line);
  }
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records[0],
            "ATOM      1  N   ALA A   1       1.000   2.000   3.000  1.00  1.23          ");
  EXPECT_EQ(records[1].substr(30, 36), "-999.9999999.999   0.500  1.00-12346");
  EXPECT_EQ(records[2].substr(0, 26), "HETATMA0000 HG21 TIP3 A000");
  EXPECT_EQ(records[2].substr(60, 6), "999999");
  EXPECT_EQ(records[3].substr(60, 6), "  0.00");
  EXPECT_EQ(records[3].substr(21, 5), "B  -5");
  EXPECT_EQ(records[4], "END");
  EXPECT_EQ(remarks.rfind("REMARK 250 dcs: electrostatic potential at each atom centre in the", 0),
            0u);
  EXPECT_NE(remarks.find("(kT/e)"), std::string::npos);
  EXPECT_NE(remarks.find("REMARK 250 physics: coulomb\n"), std::string::npos);
  EXPECT_NE(remarks.find("1 values shown with fewer than 2 decimals and 2 clamped"),
            std::string::npos);
  EXPECT_NE(remarks.find("atoms.csv"), std::string::npos);
  for (const std::string& line : (std::vector<std::string>{remarks}))
    for (std::size_t at = 0, next; (next = line.find('\n', at)) != std::string::npos; at = next + 1)
      EXPECT_LE(next - at, 80u);
}

TEST(AtomValues, RefusesPqrOtherNamesAndFarCoordinates) {
  dcs::test::ScratchDir dir;
  const dcs::io::AtomValuesMeta meta;
  const std::vector<float> values(4, 1.0f);
  try {
    dcs::io::write_atoms_with_values(dir.file("a.pqr"), atoms(), values, meta);
    ADD_FAILURE() << "a .pqr name was accepted";
  } catch (const dcs::UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("B-factor column"), std::string::npos);
  }
  EXPECT_THROW(dcs::io::write_atoms_with_values(dir.file("a.txt"), atoms(), values, meta),
               dcs::UsageError);
  dcs::System far = atoms();
  far.atoms[0].position[0] = 10000.0;
  EXPECT_THROW(dcs::io::write_atoms_with_values(dir.file("far.pdb"), far, values, meta),
               dcs::UsageError);
  EXPECT_THROW(dcs::io::write_atoms_with_values(dir.file("n.pdb"), atoms(), {1.0f}, meta),
               dcs::InternalError);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(AtomValues, BFactorFieldWidths) {
  int decimals = 0;
  EXPECT_EQ(dcs::io::b_factor_field(999.99, decimals), "999.99");
  EXPECT_EQ(decimals, 2);
  EXPECT_EQ(dcs::io::b_factor_field(-99.99, decimals), "-99.99");
  EXPECT_EQ(dcs::io::b_factor_field(-100.0, decimals), "-100.0");
  EXPECT_EQ(decimals, 1);
  EXPECT_EQ(dcs::io::b_factor_field(-1e9, decimals), "-99999");
  EXPECT_EQ(decimals, -1);
}

}  // namespace
