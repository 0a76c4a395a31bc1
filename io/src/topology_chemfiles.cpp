// PSF and TPR topologies through chemfiles (chemfiles_readers.hpp): names, residues, charges,
// bonds, and for TPR the positions and the cell. Left out of builds without the trajectory
// readers (DCS_WITH_CHEMFILES=OFF, no_chemfiles.cpp).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <chemfiles/Error.hpp>
#include <chemfiles/Frame.hpp>
#include <chemfiles/Trajectory.hpp>

#include "chemfiles_readers.hpp"
#include "chemfiles_support.hpp"
#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "input_path.hpp"
#include "line_source.hpp"

namespace dcs::io::detail {
namespace {

/// A gzipped PSF decompressed into a temporary file: chemfiles reads PSF through VMD's molfile
/// plugin, which takes only plain files. Removed when this goes.
class PlainCopy {
 public:
  explicit PlainCopy(const std::string& gz_path) {
    std::string name =
        (std::filesystem::temp_directory_path() / "dcs-topology-XXXXXX.psf").string();
    const int fd = ::mkstemps(name.data(), 4);
    if (fd < 0)
      throw IoError(fmt::format("cannot make a temporary file to decompress {} in {}: {}",
                                printable(gz_path), name, std::strerror(errno)));
    ::close(fd);
    path_ = name;
    InputFile file(gz_path);
    GzLineSource source(file, gz_path);
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    std::string line;
    while (source.next(line) && out) out << line << '\n';
    out.close();
    if (!out)
      throw IoError(fmt::format("cannot write {} (decompressing {}): the disk may be full", path_,
                                printable(gz_path)));
  }
  ~PlainCopy() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  PlainCopy(const PlainCopy&) = delete;
  PlainCopy& operator=(const PlainCopy&) = delete;
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

}  // namespace

/// PSF or TPR through chemfiles: names, residues (name, number, PSF segment), charges, and for
/// TPR the positions it stores. A .psf.gz is read from a plain copy; errors name `path`.
System read_psf_or_tpr(const std::string& path, bool tpr) {
  route_chemfiles_warnings();
  check_readable(path);
  System system;
  try {
    std::optional<PlainCopy> plain;
    if (gzipped_name(path)) plain.emplace(path);
    chemfiles::Trajectory file(plain ? plain->path() : path, 'r', tpr ? "TPR" : "PSF");
    const chemfiles::Frame frame = file.read();
    const chemfiles::Topology& topology = frame.topology();
    const auto positions = frame.positions();
    system.atoms.resize(frame.size());
    for (std::size_t i = 0; i < frame.size(); ++i) {
      Atom& atom = system.atoms[i];
      atom.serial = static_cast<long long>(i) + 1;
      atom.name = frame[i].name();
      atom.charge = frame[i].charge();
      if (tpr) atom.position = {positions[i][0], positions[i][1], positions[i][2]};
      if (const auto residue = topology.residue_for_atom(i)) {
        atom.res_name = residue->name();
        // TPR residue numbers restart in every molecule (each water is residue 1); the
        // residue's ordinal over the system is what GROMACS' .gro output and MDAnalysis use.
        atom.res_seq = tpr ? static_cast<long long>(&*residue - topology.residues().data()) + 1
                           : residue->id().value_or(0);
        if (const auto segname = residue->get("segname");
            segname && segname->kind() == chemfiles::Property::STRING)
          atom.segment = segname->as_string();
        if (const auto chain = residue->get("chainid");
            chain && chain->kind() == chemfiles::Property::STRING)
          atom.chain = chain->as_string();
      }
    }
    system.bonds.reserve(topology.bonds().size());
    for (const chemfiles::Bond& bond : topology.bonds()) system.bonds.push_back({bond[0], bond[1]});
    if (tpr && frame.cell().shape() != chemfiles::UnitCell::INFINITE) {
      const chemfiles::Vector3D lengths = frame.cell().lengths(), angles = frame.cell().angles();
      system.cell = UnitCell::from_lengths_angles({lengths[0], lengths[1], lengths[2]},
                                                  {angles[0], angles[1], angles[2]});
    }
  } catch (const chemfiles::Error& error) {
    throw InputError(path, 0,
                     std::string("cannot read as ") + (tpr ? "GROMACS TPR" : "PSF") + ": " +
                         printable(error.what()));
  } catch (const std::bad_alloc&) {
    // chemfiles' TPR reader trusts the sizes in the file (a string table of 8e18 bytes, found by
    // fuzzing): a damaged file, not a lack of memory.
    throw InputError(path, 0,
                     std::string("cannot read as ") + (tpr ? "GROMACS TPR" : "PSF") +
                         ": the file is damaged (it declares a size no real file has)");
  } catch (const std::length_error&) {
    throw InputError(path, 0,
                     std::string("cannot read as ") + (tpr ? "GROMACS TPR" : "PSF") +
                         ": the file is damaged (it declares a size no real file has)");
  }
  return system;
}

}  // namespace dcs::io::detail
