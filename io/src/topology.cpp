// read_topology(): the format from the file name, then PSF and TPR through chemfiles
// (topology_chemfiles.cpp), PRMTOP through prmtop.cpp, PQR through read_atoms(). Every result is
// checked against dcs/limits.hpp.
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "chemfiles_readers.hpp"
#include "dcs/atom_checks.hpp"
#include "dcs/error.hpp"
#include "dcs/io/checksum.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/io/topology.hpp"
#include "dcs/log.hpp"
#include "input_path.hpp"
#include "line_source.hpp"
#include "prmtop_lines.hpp"

namespace dcs::io {
namespace {

enum class Kind { kPsf, kPrmtop, kTpr, kPqr };

/// Whether the name ends in .gz: the text formats (PSF, PRMTOP, PQR) are read through gzip.
Kind topology_kind_of(const std::string& path) {
  std::string name = detail::lower_file_name(path);
  const bool gz = name.ends_with(".gz");
  if (gz) name.resize(name.size() - 3);
  const auto ends = [&](std::string_view suffix) {
    return name.size() > suffix.size() && name.ends_with(suffix);
  };
  if (ends(".psf")) return Kind::kPsf;
  if (ends(".prmtop") || ends(".parm7")) return Kind::kPrmtop;
  if (ends(".tpr") && !gz) return Kind::kTpr;  // binary: GROMACS never compresses it
  if (ends(".pqr")) return Kind::kPqr;
  throw UsageError(path +
                   ": unknown topology format; the name must end in one of: " + topology_formats());
}

}  // namespace

std::string topology_formats() {
  return "PSF (.psf), AMBER PRMTOP (.prmtop, .parm7), GROMACS TPR (.tpr), PQR (.pqr); the text "
         "formats also gzipped (.psf.gz, .prmtop.gz, .parm7.gz, .pqr.gz)";
}

System read_topology(const std::string& path) {
  const Kind kind = topology_kind_of(path);
  if (kind == Kind::kPqr) return read_atoms(path);
  System system;
  if (kind == Kind::kPrmtop) {
    detail::check_readable(path);
    detail::InputFile file(path);
    if (detail::gzipped_name(path)) {
      detail::GzLineSource source(file, path);
      system = detail::parse_prmtop_lines(source, path);
    } else {
      detail::FileLineSource source(file, path);
      system = detail::parse_prmtop_lines(source, path);
    }
    system.source_sha256 = file.finish_sha256();
  } else {
    system = detail::read_psf_or_tpr(path, kind == Kind::kTpr);
    system.source_format = kind == Kind::kPsf ? "psf" : "tpr";
    system.source_sha256 = sha256_file(path);
  }
  system.source_path = path;
  check_atoms(system, path);
  log().debug("read {} atoms ({}) from {}", system.size(), system.source_format, printable(path));
  return system;
}

}  // namespace dcs::io
