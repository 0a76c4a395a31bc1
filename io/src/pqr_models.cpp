// PQR files as a sequence of records: ATOM/HETATM records grouped into models by MODEL and
// ENDMDL, the other PDB records skipped, unknown ones counted.
//
// First model only (read_atoms, parse_pqr): the model ends at the first ENDMDL, or the first
// MODEL record, after an atom. Later ATOM/HETATM records are still checked (a malformed one is an
// error) but not kept, and one warning says how many models and records were ignored: summing
// the charges of all models would silently multiply the molecule. Lenient about the structure.
// Every model (read_models, parse_pqr_models): errors name the line of a MODEL inside a model
// (ENDMDL missing), ENDMDL without MODEL, ATOM/HETATM records between ENDMDL and the next MODEL
// or before the first MODEL, a model without atoms, a model number used twice, a MODEL serial
// that is not a non-negative integer, and a file that ends inside a model. kSameAtoms: every
// model repeats the first one's atoms (count; in order name, resName, resSeq).
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "atom_parsers.hpp"
#include "atom_text.hpp"
#include "dcs/error.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/log.hpp"
#include "dcs/parallel.hpp"
#include "pqr_record.hpp"

namespace dcs::io {
namespace detail {
namespace {

/// "'CA ALA 12'": an atom as the model comparison names it.
std::string atom_identity(const Atom& atom) {
  return quote(atom.name + " " + atom.res_name + " " + std::to_string(atom.res_seq));
}

/// The serial number of a MODEL record (the first field after the record name); nullopt when
/// the record has none. `rest` is the line after the record name.
std::optional<long long> model_number(std::string_view rest, const std::string& name,
                                      std::uint64_t line) {
  rest = trim(rest);
  if (rest.empty()) return std::nullopt;
  std::size_t end = 0;
  while (end < rest.size() && !is_blank(rest[end])) ++end;
  long long number = 0;
  if (!parse_integer(rest.substr(0, end), number) || number < 0)
    throw InputError(
        name, line,
        "MODEL serial number " + quote(rest.substr(0, end)) + " is not a non-negative integer");
  return number;
}

// Unknown record types named one by one in the warnings; the rest are counted together. A
// name is kept as long as quote() shows it (40 characters, and one more for its "...").
constexpr std::size_t kMaxUnknownTypes = 32;
constexpr std::size_t kMaxShownName = 41;

/// The end of the word (up to the next blank) that starts at `begin`.
std::size_t word_end(std::string_view text, std::size_t begin) {
  std::size_t end = begin;
  while (end < text.size() && !is_blank(text[end])) ++end;
  return end;
}

// One line on its own, as far as it can be read without the lines before it: blank, a known
// record, an atom (parsed and checked), MODEL (the rest of the line kept), ENDMDL, or an unknown
// record (its name as counted). Throws the errors a line has whatever precedes it.
PqrLine::Kind classify_pqr_line(std::string_view text, std::uint64_t line_number,
                                const std::string& name, PqrLineParser& parser, PqrLine& out) {
  std::size_t begin = 0;
  while (begin < text.size() && is_blank(text[begin])) ++begin;
  if (begin == text.size()) return PqrLine::Kind::kBlank;
  std::size_t end = begin;
  while (end < text.size() && is_alpha(text[end])) ++end;
  if (end == begin)
    throw InputError(name, line_number,
                     "not a PDB record: the line starts with " +
                         quote(text.substr(begin, word_end(text, begin) - begin)) +
                         " instead of a record name such as ATOM, HETATM or REMARK");
  const std::string record = upper(text.substr(begin, end - begin));
  if (record == "ATOM" || record == "HETATM") {
    out.atom = parser.parse(text, begin, end, line_number, record == "HETATM");
    return PqrLine::Kind::kAtom;
  }
  if (record == "MODEL") {
    out.text.assign(text.substr(end));
    return PqrLine::Kind::kModel;
  }
  if (record == "ENDMDL") return PqrLine::Kind::kEndmdl;
  if (is_known_record(record)) return PqrLine::Kind::kRecord;
  // A damaged ATOM/HETATM name ("AT0M", "HETATN") must not drop an atom silently: a record of
  // unknown type whose fields parse as an atom is an error; others are counted.
  const std::size_t word = word_end(text, begin);
  bool atom_like = false;
  try {
    parser.parse(text, begin, word, line_number, false);
    atom_like = true;
  } catch (const InputError&) {
  }
  if (atom_like)
    throw InputError(name, line_number,
                     "unknown record name " + quote(text.substr(begin, word - begin)) +
                         " on a line with the fields of an atom record (" + kPqrFields +
                         "); a damaged ATOM or HETATM?");
  out.text = upper(text.substr(begin, std::min(word - begin, kMaxShownName)));
  return PqrLine::Kind::kUnknown;
}

// The state of one pass over a PQR file. With how.all every model is kept and the MODEL/ENDMDL
// pairing is checked; otherwise only the first model is kept and later ones are counted.
class PqrFileParser {
 public:
  PqrFileParser(const std::string& name, const ModelRead& how)
      : name_(name), how_(how), parser_(name) {
    models_.push_back(empty_model());
  }

  std::vector<System> parse(LineSource& source) {
    std::string line;
    while (source.next(line)) on_line(line, source.line_number());
    return finish();
  }

 private:
  System empty_model() const {
    System system;
    system.source_path = name_;
    system.source_format = "pqr";
    return system;
  }

  void on_line(std::string_view text, std::uint64_t line_number) {
    line_.kind = classify_pqr_line(text, line_number, name_, parser_, line_);
    apply(line_, line_number);
  }

 public:
  /// The file's state after one classified line (the serial reader and the replay of chunks
  /// read in parallel both come here, so both give the same models and the same errors).
  void apply(PqrLine& line, std::uint64_t line_number) {
    switch (line.kind) {
      case PqrLine::Kind::kBlank: return;
      case PqrLine::Kind::kRecord: any_content_ = true; return;
      case PqrLine::Kind::kAtom: apply_atom(std::move(line.atom), line_number); return;
      case PqrLine::Kind::kModel:
        any_content_ = true;
        if (how_.all) {
          on_model(line.text, line_number);
        } else {
          on_first_only_model(line.text, line_number);
        }
        return;
      case PqrLine::Kind::kEndmdl:
        any_content_ = true;
        if (how_.all) {
          on_endmdl(line_number);
        } else if (first_atoms_ != 0) {
          first_model_closed_ = true;
        }
        return;
      case PqrLine::Kind::kUnknown: any_content_ = true; count_unknown(std::move(line.text));
    }
  }

  void apply_atom(Atom&& atom, std::uint64_t line_number) {
    any_content_ = true;
    if (how_.all) {
      const std::string record = atom.hetatm ? "HETATM" : "ATOM";
      on_atom(std::move(atom), record, line_number);
    } else if (first_model_closed_) {
      ++ignored_records_;
    } else {
      models_.front().atoms.push_back(std::move(atom));
      ++first_atoms_;
    }
  }

  /// First model only: `count` atoms in a row, kept or ignored as apply_atom() would take
  /// them; their offset in the first model, or nullopt when ignored. The caller puts the kept
  /// atoms in place (put_first_model()) before finish().
  std::optional<std::size_t> take_atoms(std::size_t count) {
    any_content_ = any_content_ || count > 0;
    if (first_model_closed_) {
      ignored_records_ += count;
      return std::nullopt;
    }
    first_atoms_ += count;
    return first_atoms_ - count;
  }

  void put_first_model(std::vector<Atom>&& atoms) { models_.front().atoms = std::move(atoms); }

  /// A line that is not blank was read (a replayed chunk's known records leave no trace).
  void note_content() { any_content_ = true; }

  /// Room for `atoms` more atoms in the model being read (the replay knows the count).
  void reserve(std::size_t atoms) { models_.back().atoms.reserve(atoms); }

  std::vector<System> finish() {
    for (const auto& [word, count] : unknown_records_)
      log().warn("{}: ignored {} record(s) of unknown type {}", name_, count, quote(word));
    if (other_unknown_records_ > 0)
      log().warn("{}: ignored {} record(s) of further unknown types", name_,
                 other_unknown_records_);
    if (!any_content_) throw InputError(name_, 0, "empty file");
    if (in_model_)
      throw InputError(name_, model_line_,
                       "model " + std::to_string(models_.back().model) +
                           " has no ENDMDL: the file ends inside it (truncated?)");
    if (models_.front().atoms.empty()) throw InputError(name_, 0, "no ATOM or HETATM records");
    if (how_.all) {
      for (System& model : models_) model.model_count = models_.size();
      return std::move(models_);
    }
    System& system = models_.front();
    system.model = first_number_;
    const bool more = ignored_records_ > 0 || ignored_models_ > 0;
    system.model_count = more ? 1 + std::max<std::size_t>(ignored_models_, 1) : 1;
    if (more)
      log().warn(
          "{}: read only the first model ({} atoms); ignored {} ATOM/HETATM record(s) in "
          "{} later model(s) (--models each or --models average reads every model)",
          name_, system.atoms.size(), ignored_records_,
          std::max<std::uint64_t>(ignored_models_, 1));
    return std::move(models_);
  }

 private:
  void on_atom(Atom atom, const std::string& record, std::uint64_t line_number) {
    if (!in_model_) {
      if (any_model_record_)
        throw InputError(name_, line_number,
                         record + " record between ENDMDL (line " + std::to_string(endmdl_line_) +
                             ") and the next MODEL: in a file with MODEL records every atom "
                             "must lie inside MODEL ... ENDMDL");
      if (outside_line_ == 0) outside_line_ = line_number;
    }
    System& model = models_.back();
    if (how_.same_atoms && models_.size() > 1) check_same_atom(atom, line_number);
    if (how_.same_atoms && models_.size() == 1) first_model_atom_lines_.push_back(line_number);
    model.atoms.push_back(std::move(atom));
  }

  // --models average: the next atom of a later model repeats the first model's atom.
  void check_same_atom(const Atom& atom, std::uint64_t line_number) const {
    const System& model = models_.back();
    const System& first = models_.front();
    const std::size_t index = model.atoms.size();
    if (index >= first.atoms.size())
      throw InputError(name_, line_number,
                       "model " + std::to_string(model.model) + " has more atoms than model " +
                           std::to_string(first.model) + " (" + std::to_string(first.atoms.size()) +
                           "): --models average needs every model to hold the same atoms "
                           "in the same order");
    const Atom& expected = first.atoms[index];
    if (atom.name != expected.name || atom.res_name != expected.res_name ||
        atom.res_seq != expected.res_seq)
      throw InputError(
          name_, line_number,
          "atom " + std::to_string(index + 1) + " of model " + std::to_string(model.model) +
              " is " + atom_identity(atom) + " but atom " + std::to_string(index + 1) +
              " of model " + std::to_string(first.model) + " (line " +
              std::to_string(first_model_atom_lines_[index]) + ") is " + atom_identity(expected) +
              ": --models average needs every model to hold the same atoms "
              "(name, residue name, residue number) in the same order");
  }

  // The first model only: a MODEL record after an atom closes it; the one before the first
  // atom gives its number (a bad number is not fatal there).
  void on_first_only_model(std::string_view rest, std::uint64_t line_number) {
    if (first_atoms_ != 0) {
      first_model_closed_ = true;
      ++ignored_models_;
    } else if (!first_model_closed_) {
      try {
        first_number_ = model_number(rest, name_, line_number).value_or(1);
      } catch (const InputError&) {
        first_number_ = 1;
      }
    }
  }

  void on_model(std::string_view rest, std::uint64_t line_number) {
    if (in_model_)
      throw InputError(name_, line_number,
                       "MODEL record inside model " + std::to_string(models_.back().model) +
                           " (MODEL at line " + std::to_string(model_line_) +
                           "): its ENDMDL is missing");
    if (outside_line_ != 0)
      throw InputError(name_, outside_line_,
                       "ATOM/HETATM record before the first MODEL (line " +
                           std::to_string(line_number) +
                           "): in a file with MODEL records every atom must lie inside "
                           "MODEL ... ENDMDL");
    if (any_model_record_) models_.push_back(empty_model());
    const long long number =
        model_number(rest, name_, line_number).value_or(static_cast<long long>(models_.size()));
    const auto [where, inserted] = model_lines_.emplace(number, line_number);
    if (!inserted)
      throw InputError(name_, line_number,
                       "model " + std::to_string(number) + " appears twice (MODEL at line " +
                           std::to_string(where->second) + " and here)");
    models_.back().model = number;
    in_model_ = true;
    any_model_record_ = true;
    model_line_ = line_number;
  }

  void on_endmdl(std::uint64_t line_number) {
    if (!in_model_)
      throw InputError(name_, line_number,
                       any_model_record_
                           ? "ENDMDL without MODEL (the previous model ended at line " +
                                 std::to_string(endmdl_line_) + ")"
                           : std::string("ENDMDL without MODEL"));
    const System& model = models_.back();
    if (model.atoms.empty())
      throw InputError(name_, line_number,
                       "model " + std::to_string(model.model) + " (MODEL at line " +
                           std::to_string(model_line_) + ") has no ATOM or HETATM records");
    if (how_.same_atoms && models_.size() > 1 && model.atoms.size() < models_.front().atoms.size())
      throw InputError(name_, line_number,
                       "model " + std::to_string(model.model) + " ends after " +
                           std::to_string(model.atoms.size()) + " atoms but model " +
                           std::to_string(models_.front().model) + " has " +
                           std::to_string(models_.front().atoms.size()) +
                           ": --models average needs every model to hold the same atoms in "
                           "the same order");
    in_model_ = false;
    endmdl_line_ = line_number;
  }

  // Bounded: a file of endless distinct names must not grow the table with it.
  void count_unknown(std::string word) {
    if (unknown_records_.size() < kMaxUnknownTypes || unknown_records_.contains(word)) {
      ++unknown_records_[std::move(word)];
    } else {
      ++other_unknown_records_;
    }
  }

  const std::string& name_;
  const ModelRead how_;
  PqrLineParser parser_;
  std::vector<System> models_;
  PqrLine line_;  // the serial reader's current line
  bool any_content_ = false;
  std::map<std::string, std::uint64_t> unknown_records_;  // at most kMaxUnknownTypes
  std::uint64_t other_unknown_records_ = 0;
  // The first model only (how.all false): later models are checked but not kept.
  bool first_model_closed_ = false;
  std::size_t first_atoms_ = 0;  // kept in the first model
  std::uint64_t ignored_records_ = 0;
  std::uint64_t ignored_models_ = 0;
  long long first_number_ = 1;  // of the MODEL record before the first atom, if any
  // Every model (how.all): the pairing state.
  bool in_model_ = false;  // between MODEL and ENDMDL
  bool any_model_record_ = false;
  std::uint64_t model_line_ = 0;    // of the open (or last) MODEL record
  std::uint64_t endmdl_line_ = 0;   // of the last ENDMDL
  std::uint64_t outside_line_ = 0;  // of the first atom read outside MODEL ... ENDMDL
  std::map<long long, std::uint64_t> model_lines_;     // number -> line of its MODEL record
  std::vector<std::uint64_t> first_model_atom_lines_;  // how.same_atoms: for the messages
};

}  // namespace

std::vector<System> parse_pqr_lines(LineSource& source, const std::string& name,
                                    const ModelRead& how) {
  return PqrFileParser(name, how).parse(source);
}

void read_pqr_chunk(LineSource& source, const std::string& name, PqrChunk& chunk) {
  try {
    PqrLineParser parser(name);
    PqrLine line;
    std::string text;
    while (source.next(text)) {
      line.kind = classify_pqr_line(text, source.line_number(), name, parser, line);
      if (line.kind == PqrLine::Kind::kBlank) continue;
      chunk.any_content = true;
      if (line.kind == PqrLine::Kind::kAtom) {
        chunk.atoms.push_back(std::move(line.atom));
        chunk.atom_lines.push_back(source.line_number());
      } else if (line.kind != PqrLine::Kind::kRecord) {
        chunk.records.push_back(PqrChunk::Record{line.kind, source.line_number(),
                                                 chunk.atoms.size(), std::move(line.text)});
      }
    }
  } catch (...) {
    chunk.error = std::current_exception();
  }
}

namespace {

/// One chunk through the file's parser in file order: each run of atoms between two records
/// goes to atoms(begin, end) (indices into chunk.atoms), each record to the parser; the chunk's
/// error is rethrown after every line before it.
template <class Atoms>
void replay_chunk(PqrChunk& chunk, PqrFileParser& parser, PqrLine& line, Atoms&& atoms) {
  std::size_t next_atom = 0;
  for (PqrChunk::Record& record : chunk.records) {
    atoms(next_atom, record.atoms_before);
    next_atom = record.atoms_before;
    line.kind = record.kind;
    line.text = std::move(record.text);
    parser.apply(line, record.line);
  }
  atoms(next_atom, chunk.atoms.size());
  if (chunk.any_content) parser.note_content();
  if (chunk.error) std::rethrow_exception(chunk.error);
}

}  // namespace

std::vector<System> replay_pqr_chunks(std::vector<PqrChunk>& chunks, const std::string& name,
                                      const ModelRead& how, unsigned threads,
                                      std::vector<Atom>&& room) {
  PqrFileParser parser(name, how);
  PqrLine line;
  if (how.all) {  // every atom passes the model checks one by one
    std::size_t atoms = 0;
    for (const PqrChunk& chunk : chunks) atoms += chunk.atoms.size();
    parser.reserve(atoms);
    for (PqrChunk& chunk : chunks) {
      replay_chunk(chunk, parser, line, [&](std::size_t begin, std::size_t end) {
        for (std::size_t a = begin; a < end; ++a)
          parser.apply_atom(std::move(chunk.atoms[a]), chunk.atom_lines[a]);
      });
      chunk = PqrChunk{};  // the atoms moved on: free the rest early
    }
    return parser.finish();
  }
  // The first model only: the records decide which runs of atoms are kept; the kept runs are
  // then moved into the model in parallel (a million atoms are ~200 MB to move).
  struct Run {
    PqrChunk* chunk;
    std::size_t begin, end, to;
  };
  std::vector<Run> runs;
  for (PqrChunk& chunk : chunks)
    replay_chunk(chunk, parser, line, [&](std::size_t begin, std::size_t end) {
      if (const std::optional<std::size_t> to = parser.take_atoms(end - begin); to && end > begin)
        runs.push_back(Run{&chunk, begin, end, *to});
    });
  std::size_t kept = 0;
  for (const Run& run : runs) kept = std::max(kept, run.to + (run.end - run.begin));
  std::vector<Atom> atoms = std::move(room);  // constructed while the chunks were read
  if (atoms.size() < kept) atoms.resize(kept);
  parallel_for(runs.size(), threads, [&](std::size_t first, std::size_t last) {
    for (std::size_t r = first; r < last; ++r)
      std::move(runs[r].chunk->atoms.begin() + static_cast<std::ptrdiff_t>(runs[r].begin),
                runs[r].chunk->atoms.begin() + static_cast<std::ptrdiff_t>(runs[r].end),
                atoms.begin() + static_cast<std::ptrdiff_t>(runs[r].to));
  });
  atoms.resize(kept);
  parallel_for(chunks.size(), threads, [&](std::size_t first, std::size_t last) {
    for (std::size_t c = first; c < last; ++c) chunks[c] = PqrChunk{};
  });
  parser.put_first_model(std::move(atoms));
  return parser.finish();
}

}  // namespace detail

System average_models(const std::vector<System>& models) {
  if (models.empty()) throw InternalError("average_models() of no models");
  System merged;
  merged.source_path = models.front().source_path;
  merged.source_format = models.front().source_format;
  merged.source_sha256 = models.front().source_sha256;
  merged.model = 0;
  merged.model_count = models.size();
  std::size_t total = 0;
  for (const System& model : models) total += model.size();
  merged.atoms.reserve(total);
  const auto count = static_cast<double>(models.size());
  for (const System& model : models) {
    for (const Atom& atom : model.atoms) {
      merged.atoms.push_back(atom);
      merged.atoms.back().charge = atom.charge / count;
    }
  }
  return merged;
}

}  // namespace dcs::io
