// TrajectoryReader over chemfiles: every file is opened once at construction to count its
// frames and check its atom count, then closed; read() keeps the file of the last frame read
// open, so a sequential pass opens each file twice in all. read() drives chemfiles' format
// object directly into one chemfiles::Frame kept per open file, instead of
// chemfiles::Trajectory::read_step, which builds a new Frame a read (a topology of N
// chemfiles::Atom, each looked up in chemfiles' global Configuration under its lock): at 1e6
// atoms that was ~160 MB of fresh pages and 1e6 lock calls a frame, and decoding threads
// contended on both (0.9 s of host time a frame over 8 threads on the GPU host). Before a file
// reaches chemfiles, trajectory_guard.cpp checks what chemfiles would otherwise trust (the atom
// count in the header sizes its buffers), so corrupt headers are refused without huge allocations,
// and xtc_check.cpp walks each XTC frame's compressed data before chemfiles decodes it.
#include "dcs/io/trajectory.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include <chemfiles/Error.hpp>
#include <chemfiles/File.hpp>
#include <chemfiles/Format.hpp>
#include <chemfiles/FormatFactory.hpp>
#include <chemfiles/Frame.hpp>
#include <chemfiles/Trajectory.hpp>

#include "chemfiles_support.hpp"
#include "dcs/error.hpp"
#include "dcs/limits.hpp"
#include "dcs/log.hpp"
#include "input_path.hpp"
#include "trajectory_guard.hpp"

namespace dcs::io {
namespace {

using detail::TrajectoryKind;

/// chemfiles gives a DCD frame's time in the header's unit, CHARMM's AKMA time unit
/// (sqrt(Å² amu / (kcal/mol)) = 48.88821 fs), as MDAnalysis converts it too.
constexpr double kAkmaTimePs = 0.04888821;

std::optional<TrajectoryKind> trajectory_kind_of(const std::string& path) {
  const std::string name = detail::lower_file_name(path);
  const auto ends = [&](std::string_view suffix) {
    return name.size() > suffix.size() && name.ends_with(suffix);
  };
  if (ends(".dcd")) return TrajectoryKind::kDcd;
  if (ends(".xtc")) return TrajectoryKind::kXtc;
  if (ends(".trr")) return TrajectoryKind::kTrr;
  if (ends(".nc") || ends(".ncdf")) return TrajectoryKind::kNetcdf;
  return std::nullopt;
}

const char* chemfiles_format(TrajectoryKind kind) {
  switch (kind) {
    case TrajectoryKind::kDcd: return "DCD";
    case TrajectoryKind::kXtc: return "XTC";
    case TrajectoryKind::kTrr: return "TRR";
    case TrajectoryKind::kNetcdf: return "Amber NetCDF";
  }
  return "";
}

}  // namespace

// Named, not anonymous: TrajectoryReader::Impl holds them, and GCC flags a member of anonymous
// type in a class of wider linkage (-Wsubobject-linkage) once this file is in a unity batch.
namespace trajectory_detail {

struct FileInfo {
  std::string path;
  TrajectoryKind kind;
  std::int64_t first = 0;   ///< index of its first frame over all files
  std::int64_t frames = 0;  ///< frames in this file
  detail::XtcFrames xtc;    ///< XTC: frame offsets for detail::check_xtc_frame
};

/// The file of the last frame read: chemfiles' format object and the one Frame it reads into.
/// Reusing the Frame keeps its topology (N default atoms) and positions allocated across
/// reads; a new file gets a new Frame, so nothing a file sets outlives it.
struct OpenFile {
  OpenFile(const std::string& path, const char* name)
      : format(chemfiles::FormatFactory::get().by_name(name).creator(path, chemfiles::File::READ,
                                                                     chemfiles::File::DEFAULT)) {}
  std::unique_ptr<chemfiles::Format> format;
  chemfiles::Frame frame;
};

}  // namespace trajectory_detail

using trajectory_detail::FileInfo;
using trajectory_detail::OpenFile;

struct TrajectoryReader::Impl {
  std::vector<std::string> paths;
  std::vector<FileInfo> files;
  std::size_t atoms = 0;
  std::int64_t frames = 0;
  std::optional<OpenFile> open;  ///< the file of the last frame read
  std::size_t open_file = 0;
};

TrajectoryReader::TrajectoryReader(const std::vector<std::string>& paths, std::size_t atoms,
                                   const std::string& topology_name)
    : impl_(std::make_unique<Impl>()) {
  detail::route_chemfiles_warnings();
  if (paths.empty()) throw UsageError("no trajectory files given");
  impl_->paths = paths;
  impl_->atoms = atoms;
  for (const std::string& path : paths) {
    const std::optional<TrajectoryKind> kind = trajectory_kind_of(path);
    if (!kind)
      throw UsageError(path + ": unknown trajectory format; the name must end in one of: " +
                       trajectory_formats());
    detail::check_readable(path);
    const std::string mismatch =
        " atoms per frame, but the topology " + topology_name + " has " + std::to_string(atoms);
    FileInfo info{path, *kind, impl_->frames, 0, {}};
    info.xtc = detail::guard_trajectory_file(path, *kind, atoms, mismatch);
    try {
      chemfiles::Trajectory file(path, 'r', chemfiles_format(*kind));
      info.frames = static_cast<std::int64_t>(file.nsteps());
      if (info.frames > 0) {
        // The atom count is per frame in XTC/TRR; the first frame stands for the file here,
        // and read() checks every frame.
        if (info.kind == TrajectoryKind::kXtc) detail::check_xtc_frame(path, info.xtc, 0, atoms);
        const chemfiles::Frame frame = file.read_step(0);
        if (frame.size() != atoms)
          throw InputError(path, 0, std::to_string(frame.size()) + mismatch);
      }
    } catch (const chemfiles::Error& error) {
      throw InputError(path, 0,
                       std::string("cannot read as ") + chemfiles_format(*kind) + ": " +
                           printable(error.what()));
    }
    impl_->frames += info.frames;
    impl_->files.push_back(std::move(info));
  }
  if (impl_->frames == 0)
    throw InputError(paths.size() == 1 ? paths.front() : paths.front() + " (and the others)", 0,
                     "the trajectory holds no frames");
  log().debug("trajectory: {} frames of {} atoms in {} file(s)", impl_->frames, atoms,
              paths.size());
}

TrajectoryReader::~TrajectoryReader() = default;
TrajectoryReader::TrajectoryReader(TrajectoryReader&&) noexcept = default;
TrajectoryReader& TrajectoryReader::operator=(TrajectoryReader&&) noexcept = default;

TrajectoryReader::TrajectoryReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

TrajectoryReader TrajectoryReader::another() const {
  auto copy = std::make_unique<Impl>();
  copy->paths = impl_->paths;
  copy->files = impl_->files;
  copy->atoms = impl_->atoms;
  copy->frames = impl_->frames;
  return TrajectoryReader(std::move(copy));
}

std::int64_t TrajectoryReader::frames() const { return impl_->frames; }
std::size_t TrajectoryReader::atoms() const { return impl_->atoms; }
const std::vector<std::string>& TrajectoryReader::paths() const { return impl_->paths; }

void TrajectoryReader::read(std::int64_t index, TrajectoryFrame& out) {
  Impl& s = *impl_;
  if (index < 0 || index >= s.frames)
    throw UsageError("trajectory frame " + std::to_string(index) + " does not exist: there are " +
                     std::to_string(s.frames) + " (0 to " + std::to_string(s.frames - 1) + ")");
  std::size_t f = 0;
  while (index >= s.files[f].first + s.files[f].frames) ++f;
  const FileInfo& file = s.files[f];
  const std::int64_t local = index - file.first;
  const std::string where = "frame " + std::to_string(local) + ": ";
  try {
    if (!s.open || s.open_file != f) {
      s.open.reset();
      s.open.emplace(file.path, chemfiles_format(file.kind));
      s.open_file = f;
    }
    if (file.kind == TrajectoryKind::kXtc)
      detail::check_xtc_frame(file.path, file.xtc, static_cast<std::size_t>(local), s.atoms);
    // A format sets the cell only where the frame has one (TRR): none until it says so.
    chemfiles::Frame& frame = s.open->frame;
    frame.set_cell(chemfiles::UnitCell());
    s.open->format->read_step(static_cast<std::size_t>(local), frame);
    if (frame.size() != s.atoms)
      throw InputError(file.path, 0,
                       where + std::to_string(frame.size()) + " atoms, but the topology has " +
                           std::to_string(s.atoms));
    if (const auto has = frame.get("has_positions");
        has && has->kind() == chemfiles::Property::BOOL && !has->as_bool())
      throw InputError(file.path, 0, where + "no positions (a TRR frame of velocities or forces)");
    const auto& positions = frame.positions();
    out.positions.resize(s.atoms);
    for (std::size_t i = 0; i < s.atoms; ++i) {
      for (std::size_t a = 0; a < 3; ++a) {
        const double c = positions[i][a];
        if (!std::isfinite(c) || std::fabs(c) > limits::kMaxCoordinate)
          throw InputError(file.path, 0,
                           where + "atom " + std::to_string(i + 1) + ": coordinate " +
                               fmt::format("{}", c) +
                               " is not finite or beyond the limit of 1e6 Å");
        out.positions[i][a] = c;
      }
    }
    out.cell = UnitCell();
    if (const chemfiles::UnitCell& cell = frame.cell();
        cell.shape() != chemfiles::UnitCell::INFINITE) {
      const chemfiles::Vector3D lengths = cell.lengths(), angles = cell.angles();
      out.cell = UnitCell::from_lengths_angles({lengths[0], lengths[1], lengths[2]},
                                               {angles[0], angles[1], angles[2]});
    }
    out.index = index;
    out.time_ps = std::numeric_limits<double>::quiet_NaN();
    if (const auto time = frame.get("time"); time && time->kind() == chemfiles::Property::DOUBLE)
      out.time_ps = time->as_double() * (file.kind == TrajectoryKind::kDcd ? kAkmaTimePs : 1.0);
  } catch (const chemfiles::Error& error) {
    s.open.reset();  // its position is unknown after a failed read
    throw InputError(file.path, 0, where + printable(error.what()));
  }
}

std::string trajectory_formats() {
  return "DCD (.dcd), XTC (.xtc), TRR (.trr), AMBER NetCDF (.nc, .ncdf)";
}

}  // namespace dcs::io
