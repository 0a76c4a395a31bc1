// The unit cell of a PQR (or PDB) file: its CRYST1 record, a b c (Å) α β γ (degrees) in
// columns 7-54 (PDB format v3.3), read for --periodic where --box does not give the cell.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dcs/unit_cell.hpp"

namespace dcs::io {

/// The cell of one CRYST1 line ("CRYST1   40.000   40.000   40.000  90.00  90.00  90.00 P 1");
/// nullopt for the placeholder 1 x 1 x 1 Å cell that NMR and model files carry. InputError
/// (file, line) when the six numbers are not there or form no usable cell.
std::optional<UnitCell> parse_cryst1(std::string_view line, const std::string& path,
                                     std::uint64_t line_number);

/// The first CRYST1 record of a .pqr or .pqr.gz file before its first atom (nullopt when there
/// is none, or for a file that is not a regular .pqr file: a FIFO cannot be read twice). The
/// lines are read again, up to the first ATOM, HETATM or MODEL record.
std::optional<UnitCell> read_cryst1(const std::string& path);

}  // namespace dcs::io
