// Readers for the atom files dcs takes as input: PQR (written by pdb2pqr, read by APBS) and a
// plain "x y z q" text format, each optionally gzip-compressed. Positions and radii in Å,
// charges in e (dcs::Atom). Each call reads its input synchronously on the calling thread; calls
// share no state.
//
// Accepted
//   PQR: ATOM/HETATM records "serial name resName [chainID] resSeq x y z charge radius",
//   whitespace-delimited or in pdb2pqr's fixed columns (fused fields, long serial numbers,
//   insertion codes, CRLF/CR line endings, lower-case names: see pqr_record.cpp); the other PDB
//   records are skipped, unknown record types are counted in one warning each (32 types named,
//   the rest counted together). Models: MODEL ... ENDMDL (read_atoms: the first model;
//   read_models: every model, structure checked).
//   xyzq: "x y z q" per line, '#' comments, blank lines; radius 0, serial = atom index.
//   gzip: concatenated members; trailing zero bytes only warn.
//
// Refused, with dcs::InputError("<file>:<line>: <reason>", line 0 for the whole file)
//   A line longer than kMaxLineBytes (endless or binary input fails fast, in bounded memory).
//   A malformed ATOM/HETATM line (never skipped): a field that is not a number, NaN/inf, too few
//   (a missing column) or too many fields, a negative radius, a value beyond dcs/limits.hpp
//   (|x|,|y|,|z| <= 1e6 Å, |q| <= 1e6 e, radius <= 1e6 Å); a line that is not a PDB record; an
//   atom-like line with an unknown record name; an empty file or one without atoms; a missing or
//   unreadable file, an unknown extension (a PDB or mmCIF file is told to go through pdb2pqr
//   first); corrupt, truncated or trailing-garbage gzip data. A PDB file named .pqr, recognised
//   by occupancies read as charges and B-factors as radii (see pdb_check.cpp), unless
//   ReadOptions::charges_as_given.
//
// Files are opened once and read once (a FIFO works); the SHA-256 is of the bytes read. A
// regular uncompressed file is read whole into memory and parsed on several threads
// (ReadOptions::threads) while another thread hashes it; gzip files and FIFOs are streamed.
//
// Interruption: the readers poll dcs::interrupt_requested() (dcs/interrupt.hpp) every 128 KiB
// block, and after an open or read cut short by a signal (EINTR: a FIFO without writer), and
// throw dcs::InterruptedError when it is set.
#pragma once

#include <array>
#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/io/line_limit.hpp"
#include "dcs/types.hpp"

namespace dcs::io {

/// File-name endings read_atoms() understands (compared case-insensitively).
inline constexpr std::array<std::string_view, 4> kAtomFileExtensions = {".pqr", ".pqr.gz", ".xyzq",
                                                                        ".xyzq.gz"};

/// What read_atoms() and read_models() accept beyond the format.
struct ReadOptions {
  /// Take the charges as given, even when they look like a PDB file's occupancies
  /// (--charges-as-given).
  bool charges_as_given = false;
  /// Threads that parse a regular, uncompressed file (held whole in memory, cut at line
  /// boundaries, parsed in parallel: the same atoms and errors as the serial reader). 0: all
  /// hardware threads; 1: the serial reader. Gzip files and FIFOs are always read serially.
  unsigned threads = 0;
  /// Bytes per parallel chunk; 0: automatic. Tests set it small to move chunk boundaries.
  std::size_t chunk_bytes = 0;
};

/// Reads a molecule from `path`, choosing the format from the file name (kAtomFileExtensions;
/// ".gz" files are decompressed while streaming). A PQR file with several models gives its first
/// model and one warning that names what was ignored. Fills System::source_path (as given),
/// source_format ("pqr" or "xyzq") and source_sha256 (of the bytes as stored, see checksum.hpp).
/// Throws InputError (line 0) for a missing file, an unknown extension, an unreadable or empty
/// file and corrupt gzip data, and the format's errors listed above.
System read_atoms(const std::string& path, const ReadOptions& options = {});

/// Parses PQR text from a stream; `name` is used in error messages and as source_path.
/// source_sha256 stays empty.
System parse_pqr(std::istream& in, const std::string& name);

/// What read_models() requires of the models beyond a sound MODEL/ENDMDL structure.
enum class ModelCheck {
  kStructure,  ///< models may hold different atoms (--models each)
  kSameAtoms,  ///< every model repeats the first one's atoms, in order (--models average)
};

/// Every model of `path`, in file order; never empty. System::model is the number of its MODEL
/// record (or its 1-based ordinal), model_count the number of models; a file without MODEL
/// records (and an .xyzq file) is one model, number 1. Each System's source_* fields are those
/// read_atoms() fills (the SHA-256 is the whole file's). Holds all models in memory at once.
/// Throws as read_atoms() does, and InputError for a broken MODEL/ENDMDL structure (see
/// pqr_models.cpp) and, with kSameAtoms, the first atom that differs from the first model's.
std::vector<System> read_models(const std::string& path, ModelCheck check = ModelCheck::kStructure,
                                const ReadOptions& options = {});

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
