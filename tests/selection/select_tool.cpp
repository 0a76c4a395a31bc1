// select_tool: dcs::Selection and dcs::least_squares_fit on plain tables, for the MDAnalysis
// cross-check (selection_check.py).
//
//   select_tool select TABLE [A B C ALPHA BETA GAMMA]
//                                reads selections from stdin, one a line; for each prints one
//                                line: the selected indices (space-separated, possibly none),
//                                or "error: MESSAGE" for a UsageError; distances minimum-image
//                                in the cell given (lengths in Å, angles in degrees), plain
//                                without one
//   select_tool fit MOBILE REF   prints the rotation (9 numbers, row-major), then the rmsd,
//                                then from_centre and to_centre (3 numbers each), one a line
//
// TABLE: tab-separated lines "index name resname resid segid chain x y z" ('#' lines skipped);
// the index column must count 0, 1, 2, ...
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/selection.hpp"
#include "dcs/superpose.hpp"
#include "dcs/unit_cell.hpp"

namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    fields.push_back(
        line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

std::vector<dcs::Atom> read_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<dcs::Atom> atoms;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = split_tabs(line);
    if (f.size() != 9 || std::stoull(f[0]) != atoms.size())
      throw std::runtime_error(path + ": bad line: " + line);
    dcs::Atom a;
    a.name = f[1];
    a.res_name = f[2];
    a.res_seq = std::stoll(f[3]);
    a.segment = f[4];
    a.chain = f[5];
    a.position = {std::stod(f[6]), std::stod(f[7]), std::stod(f[8])};
    a.serial = static_cast<long long>(atoms.size()) + 1;
    atoms.push_back(std::move(a));
  }
  return atoms;
}

std::vector<dcs::Vec3> positions(const std::vector<dcs::Atom>& atoms) {
  std::vector<dcs::Vec3> out;
  for (const dcs::Atom& a : atoms) out.push_back(a.position);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "select" && (argc == 3 || argc == 9)) {
      const std::vector<dcs::Atom> atoms = read_table(argv[2]);
      dcs::UnitCell cell;
      if (argc == 9) {
        cell = dcs::UnitCell::from_lengths_angles(
            {std::stod(argv[3]), std::stod(argv[4]), std::stod(argv[5])},
            {std::stod(argv[6]), std::stod(argv[7]), std::stod(argv[8])});
        if (!cell.is_periodic()) throw std::runtime_error("the cell given is not periodic");
      }
      std::string text;
      while (std::getline(std::cin, text)) {
        try {
          const dcs::Selection selection(text);
          std::string out;
          for (std::size_t i : selection.select(atoms, cell)) {
            if (!out.empty()) out += ' ';
            out += std::to_string(i);
          }
          std::cout << out << '\n';
        } catch (const dcs::UsageError& e) {
          std::cout << "error: " << e.what() << '\n';
        }
      }
      return 0;
    }
    if (mode == "fit" && argc == 4) {
      const dcs::RigidFit fit =
          dcs::least_squares_fit(positions(read_table(argv[2])), positions(read_table(argv[3])));
      for (const auto& row : fit.rotation)
        for (double v : row) std::printf("%.17g\n", v);
      std::printf("%.17g\n", fit.rmsd);
      for (double v : fit.from_centre) std::printf("%.17g\n", v);
      for (double v : fit.to_centre) std::printf("%.17g\n", v);
      return 0;
    }
    std::cerr << "usage: select_tool select TABLE [A B C ALPHA BETA GAMMA] < selections | "
                 "select_tool fit MOBILE REF\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "select_tool: " << e.what() << '\n';
    return 1;
  }
}
