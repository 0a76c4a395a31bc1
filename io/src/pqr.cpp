#include "dcs/io/pqr.hpp"

#include <exception>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "atom_parsers.hpp"
#include "atom_text.hpp"
#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "dcs/parallel.hpp"
#include "input_path.hpp"
#include "line_source.hpp"
#include "parallel_read.hpp"

namespace dcs::io {
namespace {

using detail::LineSource;
using detail::ModelRead;
using detail::StreamLineSource;

enum class Format { kPqr, kXyzq };

struct FileKind {
  Format format;
  bool gzip;
};

std::optional<FileKind> file_kind(const std::string& path) {
  const std::string name = detail::upper(std::filesystem::path(path).filename().string());
  const auto ends_with = [&](std::string_view suffix) {
    return name.size() > suffix.size() && std::string_view(name).ends_with(suffix);
  };
  if (ends_with(".PQR")) return FileKind{Format::kPqr, false};
  if (ends_with(".PQR.GZ")) return FileKind{Format::kPqr, true};
  if (ends_with(".XYZQ")) return FileKind{Format::kXyzq, false};
  if (ends_with(".XYZQ.GZ")) return FileKind{Format::kXyzq, true};
  return std::nullopt;
}

std::vector<System> parse_lines(Format format, LineSource& source, const std::string& name,
                                const ModelRead& how) {
  if (format == Format::kPqr) return detail::parse_pqr_lines(source, name, how);
  return {detail::parse_xyzq_lines(source, name)};
}

std::string supported_extensions() {
  std::string supported;
  for (std::string_view extension : kAtomFileExtensions) {
    supported += supported.empty() ? "" : ", ";
    supported += extension;
  }
  return supported;
}

/// A structure file without charges (PDB, mmCIF), by its name; newcomers try these first.
bool is_structure_file(const std::string& path) {
  std::string name = detail::upper(std::filesystem::path(path).filename().string());
  if (name.ends_with(".GZ")) name.resize(name.size() - 3);
  for (std::string_view suffix : {".PDB", ".ENT", ".CIF", ".MMCIF"})
    if (name.size() > suffix.size() && name.ends_with(suffix)) return true;
  return false;
}

FileKind checked_kind(const std::string& path) {
  const std::optional<FileKind> kind = file_kind(path);
  if (kind) return *kind;
  if (is_structure_file(path))
    throw InputError(path, 0,
                     "a PDB or mmCIF structure file has no atomic charges and radii, which dcs "
                     "needs: make a PQR file first, e.g. pdb2pqr --ff=AMBER in.pdb out.pqr (dcs "
                     "reads " +
                         supported_extensions() + ")");
  throw InputError(path, 0,
                   "unknown atom file type; the name must end in one of " + supported_extensions());
}

/// The models of a regular file's bytes held in memory, parsed in parallel while another thread
/// hashes them. Memory: the file's bytes plus the atoms (each chunk's atoms are moved into the
/// models and freed as the chunks are joined).
std::vector<System> parse_whole(Format format, const std::vector<char>& bytes,
                                const std::string& path, const ModelRead& how,
                                const ReadOptions& options, std::string& sha256) {
  Sha256 sha;
  std::exception_ptr hash_error;
  std::thread hasher = start_thread([&] {
    try {
      sha.update(bytes.data(), bytes.size());
    } catch (...) {
      hash_error = std::current_exception();
    }
  });
  struct Join {  // also when parsing throws: the thread reads `bytes`
    std::thread& thread;
    ~Join() {
      if (thread.joinable()) thread.join();
    }
  } join{hasher};
  const detail::ParallelRead parallel{options.threads, options.chunk_bytes};
  std::vector<System> models;
  if (format == Format::kPqr) {
    models = detail::parse_pqr_bytes(bytes, path, how, parallel);
  } else {
    models.push_back(detail::parse_xyzq_bytes(bytes, path, parallel));
  }
  hasher.join();
  if (hash_error) std::rethrow_exception(hash_error);
  sha256 = sha.hex();
  return models;
}

/// Reads every model (or the first) of an atom file: the shared body of read_atoms and
/// read_models. The file is opened and read once; its SHA-256 comes from the same pass.
std::vector<System> read_file(const std::string& path, const ModelRead& how,
                              const ReadOptions& options) {
  detail::check_input_exists(path, "an atom file");
  const FileKind kind = checked_kind(path);
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size == 0) throw InputError(path, 0, "empty file");
  detail::InputFile file(path);
  std::vector<System> models;
  std::string sha256;  // set by the parallel reader
  if (kind.gzip) {
    detail::GzLineSource source(file, path);
    try {
      models = parse_lines(kind.format, source, path, how);
    } catch (const detail::LineTooLong&) {
      throw;  // endless input: reading on would not end either
    } catch (const InputError& parse_error) {
      // Corrupt deflate data can decode to plausible bytes that only the CRC at the end
      // exposes; a parse error in them is a symptom, the corruption the cause.
      if (parse_error.line() > 0) source.drain();
      throw;
    }
  } else if (std::vector<char> bytes; options.threads != 1 && file.read_whole_regular(bytes)) {
    models = parse_whole(kind.format, bytes, path, how, options, sha256);
  } else {
    detail::FileLineSource source(file, path);
    models = parse_lines(kind.format, source, path, how);
  }
  if (kind.format == Format::kPqr && !options.charges_as_given) {
    if (const std::string reason = detail::pdb_like(models.front()); !reason.empty())
      throw InputError(path, 0, reason);
  }
  if (sha256.empty()) sha256 = file.finish_sha256();
  for (System& model : models) model.source_sha256 = sha256;
  return models;
}

}  // namespace

System parse_pqr(std::istream& in, const std::string& name) {
  StreamLineSource source(in, name);
  return std::move(detail::parse_pqr_lines(source, name, ModelRead{}).front());
}

std::vector<System> parse_pqr_models(std::istream& in, const std::string& name, ModelCheck check) {
  StreamLineSource source(in, name);
  return detail::parse_pqr_lines(
      source, name, ModelRead{.all = true, .same_atoms = check == ModelCheck::kSameAtoms});
}

System parse_xyzq(std::istream& in, const std::string& name) {
  StreamLineSource source(in, name);
  return detail::parse_xyzq_lines(source, name);
}

System read_atoms(const std::string& path, const ReadOptions& options) {
  System system = std::move(read_file(path, ModelRead{}, options).front());
  log().debug("read {} atoms ({}) from {}", system.size(), system.source_format, path);
  return system;
}

std::vector<System> read_models(const std::string& path, ModelCheck check,
                                const ReadOptions& options) {
  std::vector<System> models = read_file(
      path, ModelRead{.all = true, .same_atoms = check == ModelCheck::kSameAtoms}, options);
  log().debug("read {} model(s) of {} atoms ({}) from {}", models.size(), models.front().size(),
              models.front().source_format, path);
  return models;
}

}  // namespace dcs::io
