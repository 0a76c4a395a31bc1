// The molecule as dcs sees it: atom centres in Å, charges in e, radii in Å.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "dcs/unit_cell.hpp"
#include "dcs/vec3.hpp"

namespace dcs {

/// One atom as read from the input. Identification fields are kept so that the HDF5 output
/// can store the atoms that were used; they play no part in the physics.
struct Atom {
  Vec3 position{};      ///< Å
  double charge = 0.0;  ///< e
  double radius = 0.0;  ///< Å (PQR radius; 0 for formats without one)
  long long serial = 0;
  std::string name;      ///< atom name, e.g. "CA"
  std::string res_name;  ///< residue name, e.g. "ALA"
  std::string chain;     ///< chain ID, empty when absent
  std::string segment;   ///< segment ID (PSF segid, TPR molecule block), empty when absent
  long long res_seq = 0;
  bool hetatm = false;
};

/// A molecule: the atoms and where they came from.
struct System {
  std::vector<Atom> atoms;
  std::string source_path;    ///< file the atoms were read from
  std::string source_format;  ///< "pqr", "xyzq"
  std::string source_sha256;  ///< checksum of the file's bytes as stored (compressed if .gz)
  /// The model these atoms are: the serial number of its MODEL record, or its 1-based ordinal
  /// when the record has no number or the file has no MODEL records; 0 when the atoms of
  /// several models are merged (--models average).
  long long model = 1;
  std::size_t model_count = 1;  ///< models in the source file (a file without MODEL records: 1)
  /// The periodic cell the atoms sit in (a CRYST1 record, a topology's or a frame's box);
  /// infinite when the input has none.
  UnitCell cell;
  /// Covalent bonds as pairs of 0-based atom indices (first < second), from a topology that
  /// lists them (PSF, PRMTOP, TPR); empty otherwise. Molecules are made whole across the cell
  /// boundary along them (dcs/periodic/whole.hpp).
  std::vector<std::array<std::size_t, 2>> bonds;

  std::size_t size() const noexcept { return atoms.size(); }
  /// Residues: runs of consecutive atoms of the same segment, chain, number and name; 0 when
  /// the format names none (XYZQ). With hetatm_count(), what the summary states, so that a metal
  /// or ligand that pdb2pqr dropped shows as "0 HETATM".
  std::size_t residue_count() const {
    std::size_t count = 0;
    for (std::size_t i = 0; i < atoms.size(); ++i) {
      const Atom& a = atoms[i];
      if (a.res_name.empty()) continue;
      const Atom* b = i > 0 ? &atoms[i - 1] : nullptr;
      if (b == nullptr || a.res_seq != b->res_seq || a.res_name != b->res_name ||
          a.chain != b->chain || a.segment != b->segment)
        ++count;
    }
    return count;
  }
  std::size_t hetatm_count() const noexcept {
    std::size_t count = 0;
    for (const Atom& atom : atoms) count += atom.hetatm ? 1 : 0;
    return count;
  }
  double total_charge() const noexcept {
    double sum = 0.0;
    for (const Atom& atom : atoms) sum += atom.charge;
    return sum;
  }
};

}  // namespace dcs
