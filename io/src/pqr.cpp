#include "dcs/io/pqr.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#include "atom_parsers.hpp"
#include "atom_text.hpp"
#include "dcs/error.hpp"
#include "dcs/io/checksum.hpp"
#include "dcs/log.hpp"
#include "line_source.hpp"

namespace dcs::io {
namespace {

using detail::GzLineSource;
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

/// Reads every model (or the first) of an atom file: the shared body of read_atoms and
/// read_models.
std::vector<System> read_file(const std::string& path, const ModelRead& how) {
  const std::optional<FileKind> kind = file_kind(path);
  if (!kind) {
    std::string supported;
    for (std::string_view extension : kAtomFileExtensions) {
      supported += supported.empty() ? "" : ", ";
      supported += extension;
    }
    throw InputError(path, 0, "unknown atom file type; the name must end in one of " + supported);
  }

  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) {
    throw InputError(path, 0,
                     error && error != std::errc::no_such_file_or_directory
                         ? "cannot access the file: " + error.message()
                         : "no such file");
  }
  if (fs::is_directory(status)) throw InputError(path, 0, "is a directory, not an atom file");
  const std::uintmax_t size = fs::file_size(path, error);
  if (!error && size == 0) throw InputError(path, 0, "empty file");

  std::vector<System> models;
  if (kind->gzip) {
    GzLineSource source(path);
    try {
      models = parse_lines(kind->format, source, path, how);
    } catch (const InputError& parse_error) {
      // Corrupt deflate data can decode to plausible bytes that only the CRC at the end
      // exposes; a parse error in them is a symptom, the corruption the cause.
      if (parse_error.line() > 0) source.drain();
      throw;
    }
  } else {
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      throw InputError(path, 0,
                       std::string("cannot open: ") +
                           (errno != 0 ? std::strerror(errno) : "unknown error"));
    }
    StreamLineSource source(in, path);
    models = parse_lines(kind->format, source, path, how);
  }
  const std::string sha256 = sha256_file(path);
  for (System& model : models) model.source_sha256 = sha256;
  return models;
}

}  // namespace

System parse_pqr(std::istream& in, const std::string& name) {
  StreamLineSource source(in, name);
  return std::move(detail::parse_pqr_lines(source, name, ModelRead{}).front());
}

std::vector<System> parse_pqr_models(std::istream& in, const std::string& name,
                                     ModelCheck check) {
  StreamLineSource source(in, name);
  return detail::parse_pqr_lines(source, name,
                         ModelRead{.all = true, .same_atoms = check == ModelCheck::kSameAtoms});
}

System parse_xyzq(std::istream& in, const std::string& name) {
  StreamLineSource source(in, name);
  return detail::parse_xyzq_lines(source, name);
}

System read_atoms(const std::string& path) {
  System system = std::move(read_file(path, ModelRead{}).front());
  log().debug("read {} atoms ({}) from {}", system.size(), system.source_format, path);
  return system;
}

std::vector<System> read_models(const std::string& path, ModelCheck check) {
  std::vector<System> models =
      read_file(path, ModelRead{.all = true, .same_atoms = check == ModelCheck::kSameAtoms});
  log().debug("read {} model(s) of {} atoms ({}) from {}", models.size(),
              models.front().size(), models.front().source_format, path);
  return models;
}

}  // namespace dcs::io
