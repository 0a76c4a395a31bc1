// The parsers behind read_atoms(), read_models(), parse_pqr*() and parse_xyzq(): each reads the
// lines of one LineSource.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/types.hpp"
#include "line_source.hpp"

namespace dcs::io::detail {

/// How a PQR file's models are read.
struct ModelRead {
  bool all = false;         ///< every model, MODEL/ENDMDL pairing checked; else the first only
  bool same_atoms = false;  ///< all: every model must repeat the first one's atoms
};

/// The models of PQR text (one System when !how.all). See pqr.hpp, Models.
std::vector<System> parse_pqr_lines(LineSource& source, const std::string& name,
                                    const ModelRead& how);

/// One PQR line read on its own (before MODEL/ENDMDL structure applies).
struct PqrLine {
  enum class Kind : std::uint8_t { kBlank, kRecord, kAtom, kModel, kEndmdl, kUnknown };
  Kind kind = Kind::kBlank;
  Atom atom;         ///< kAtom
  std::string text;  ///< kModel: the line after "MODEL"; kUnknown: the record name as counted
};

/// The lines of one chunk of a PQR file, read without the chunks before it (parallel reader):
/// the atoms, and the MODEL/ENDMDL/unknown records between them, with their line numbers. The
/// chunk's first error ends it; replay_pqr_chunks() throws it after the lines before it.
struct PqrChunk {
  struct Record {
    PqrLine::Kind kind;
    std::uint64_t line;
    std::size_t atoms_before;  ///< atoms of this chunk that precede the record
    std::string text;
  };
  std::vector<Atom> atoms;
  std::vector<std::uint64_t> atom_lines;
  std::vector<Record> records;
  bool any_content = false;  ///< a non-blank line
  std::exception_ptr error;
};

void read_pqr_chunk(LineSource& source, const std::string& name, PqrChunk& chunk);

/// The models of chunks read by read_pqr_chunk(), in order: what parse_pqr_lines() gives for
/// the same lines, and the same first error. Moves the atoms out of the chunks (on `threads`),
/// for the first model into `room` (default atoms made beforehand, trimmed to size).
std::vector<System> replay_pqr_chunks(std::vector<PqrChunk>& chunks, const std::string& name,
                                      const ModelRead& how, unsigned threads,
                                      std::vector<Atom>&& room);

/// The atoms of one chunk of an xyzq file (serial numbers are set when the chunks are joined).
struct XyzqChunk {
  std::vector<Atom> atoms;
  bool any_content = false;
  std::exception_ptr error;
};

void read_xyzq_chunk(LineSource& source, const std::string& name, XyzqChunk& chunk);

/// The System of chunks read by read_xyzq_chunk(), in order; throws the first chunk's error.
System join_xyzq_chunks(std::vector<XyzqChunk>& chunks, const std::string& name);

/// Why `system`, read from a .pqr file, is evidently a PDB file (occupancies as charges,
/// B-factors as radii); "" when it may be a PQR file. See pdb_check.cpp.
std::string pdb_like(const System& system);

/// Why the ATOM/HETATM `line`, which does not parse as PQR, is evidently a PDB record (PDB's
/// fixed columns: coordinates 31-54, occupancy 55-60, B-factor 61-66, an element symbol in
/// 77-78); "" otherwise. See pdb_check.cpp.
std::string pdb_atom_record(std::string_view line);

/// "x y z q" text.
System parse_xyzq_lines(LineSource& source, const std::string& name);

}  // namespace dcs::io::detail
