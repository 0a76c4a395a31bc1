// Readers for the atom files dcs takes as input: PQR (written by pdb2pqr and read by APBS) and a
// plain "x y z q" text format, each optionally gzip-compressed. Units as read: positions and
// radii in Å, charges in e (dcs::Atom). All calls read the whole input synchronously on the
// calling thread; they share no state, so different files may be read from different threads.
//
// PQR records
//   Only ATOM and HETATM records carry atoms:
//     ATOM|HETATM serial name resName [chainID] resSeq x y z charge radius
//   The other records of the PDB format (REMARK, HEADER, CRYST1, TER, END, ..., and USER,
//   LINKR) and blank lines are ignored (MODEL and ENDMDL: see Models). A record of unknown
//   type is an error when the rest of its line parses as an atom record (a damaged "AT0M" or
//   "HETATN" would otherwise drop an atom silently); other unknown records are skipped and
//   reported once per type through dcs::log() ("ignored 3 record(s) of unknown type 'XYZ'").
//   Accepted variations, all seen in real files:
//   - whitespace-delimited fields (any mix of spaces and tabs) and pdb2pqr's fixed columns
//     (serial 7-11, name 13-16, resName 17-20, chain 22, resSeq 23-26, insertion code 27);
//   - no chain ID; insertion codes ("52A"); 4-letter residue names, also when fixed columns
//     fuse them with the atom name ("OH2TIP3"); a chain ID fused with the residue number
//     ("A1000");
//   - serial numbers of any size, also fused with the record name ("HETATM10000",
//     "ATOM100000") or shifted into the record's padding ("ATOM 100000  N");
//   - LF, CRLF and CR-only (classic Mac) line endings, lower-case record names ("atom");
//   - numbers fused by a minus sign ("-45.751-100.406": pdb2pqr's %8.3f leaves no blank for
//     values <= -100 Å; likewise charge and radius). "1e-5" is one number. A field of two
//     numbers fused without a sign ("0.500010.0000", a radius >= 10 Å in pdb2pqr's 7-column
//     field) is split so that both parts have the same number of decimals, since every known
//     writer prints adjacent fields of one kind with one format.
//   Charge and radius are the last two numbers of a record and x y z the three before them;
//   the identification fields before them are read from fixed columns when the line has
//   pdb2pqr's layout, otherwise as whitespace-delimited fields.
//
// Models
//   A PQR file normally holds one structure; NMR ensembles and MD snapshots hold several, each
//   between a MODEL record (its serial number in the first field after the name) and ENDMDL.
//   read_atoms() and parse_pqr() read only the first model: it ends at the first ENDMDL, or at
//   the first MODEL record, that follows an atom. ATOM/HETATM records after that are still
//   checked (a malformed one is an error) but not kept, and one warning through dcs::log() says
//   how many models and records were ignored. Summing the charges of all models would
//   silently multiply the molecule. This reading is lenient about the MODEL/ENDMDL structure,
//   as it always was.
//   read_models() and parse_pqr_models() return every model, in file order, each a System
//   whose `model` is the serial number of its MODEL record (or its 1-based ordinal when the
//   record has no number) and whose `model_count` is the number of models. A file without
//   MODEL records is one model (number 1). They check the structure and throw InputError naming
//   the line for: MODEL inside a model (ENDMDL missing), ENDMDL without MODEL, ATOM/HETATM
//   records between ENDMDL and the next MODEL or before the first MODEL, a model without atoms,
//   a model number used twice, a serial number that is not a non-negative integer, and a file
//   that ends inside a model. With ModelCheck::kSameAtoms every model must also repeat the first
//   one's atoms: the same count and, in order, the same name, resName and resSeq; the first
//   difference is reported at its line (what --models average needs: see average_models()).
//   Models may differ in coordinates and charges.
//
// xyzq
//   One atom per line: "x y z q" (Å, Å, Å, e), whitespace-delimited. '#' starts a comment that
//   runs to the end of the line; blank lines are allowed. Radius is 0 and serial is the 1-based
//   atom index; the identification fields stay empty.
//
// Errors
//   Every problem throws dcs::InputError(file, line, reason); line is 1-based, or 0 when the
//   problem concerns the whole file (missing, unreadable, empty, no atoms, unknown extension,
//   corrupt gzip data). The reason quotes the offending field. Errors: a field that is not a
//   number where one is expected, NaN or infinite values, too few (or, before the coordinates,
//   too many) fields, a negative radius, a value outside the limits of dcs/limits.hpp
//   (|x|, |y|, |z| <= 1e6 Å, |charge| <= 1e6 e, radius <= 1e6 Å: beyond them the float32
//   computation overflows or loses its meaning), a line that is not a PDB record, an empty
//   file, a file without ATOM/HETATM records. A malformed ATOM line is never skipped.
//
// gzip
//   Concatenated members are read in order; bytes after the last member that are not another
//   member are an error ("trailing garbage"), except trailing zero bytes (a warning). Truncated
//   and corrupt data (CRC, length) are errors.
//
// Interruption
//   The readers poll dcs::interrupt_requested() (dcs/interrupt.hpp) every 128 KiB block and
//   throw dcs::InterruptedError when it is set.
#pragma once

#include <array>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/types.hpp"

namespace dcs::io {

/// File-name endings read_atoms() understands (compared case-insensitively).
inline constexpr std::array<std::string_view, 4> kAtomFileExtensions = {".pqr", ".pqr.gz",
                                                                       ".xyzq", ".xyzq.gz"};

/// Reads a molecule from `path`, choosing the format from the file name (kAtomFileExtensions;
/// ".gz" files are decompressed while streaming). Fills System::source_path (as given),
/// source_format ("pqr" or "xyzq") and source_sha256 (of the bytes as stored, see checksum.hpp).
/// Throws InputError (line 0) for an unknown extension, a missing, unreadable or empty file and
/// corrupt gzip data, and the format's errors described above.
System read_atoms(const std::string& path);

/// Parses PQR text from a stream; `name` is used in error messages and as source_path.
/// source_sha256 stays empty.
System parse_pqr(std::istream& in, const std::string& name);

/// What read_models() requires of the models beyond a sound MODEL/ENDMDL structure.
enum class ModelCheck {
  kStructure,  ///< models may hold different atoms (--models each)
  kSameAtoms,  ///< every model repeats the first one's atoms, in order (--models average)
};

/// Every model of `path` (see Models above), in file order; never empty. Each System's
/// source_* fields are those read_atoms() fills (the SHA-256 is the whole file's). An .xyzq file
/// is one model. Holds all models in memory at once. Throws as read_atoms() does, and
/// InputError for the structural errors and atom differences described above.
std::vector<System> read_models(const std::string& path,
                                ModelCheck check = ModelCheck::kStructure);

/// parse_pqr()'s counterpart of read_models().
std::vector<System> parse_pqr_models(std::istream& in, const std::string& name,
                                     ModelCheck check = ModelCheck::kStructure);

/// One System whose potential is the mean of the models' potentials (--models average): the
/// atoms of every model in order, each charge divided by the model count in float64, so the
/// mean is one summation (sum_m sum_i q_mi / (M r) = (1/M) sum_m V_m). model = 0, model_count =
/// models.size(), source_* from the first model. `models` must not be empty.
System average_models(const std::vector<System>& models);

/// Parses "x y z q" text from a stream; `name` as for parse_pqr().
System parse_xyzq(std::istream& in, const std::string& name);

}  // namespace dcs::io
