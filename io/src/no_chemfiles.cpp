// Builds without the trajectory readers (DCS_WITH_CHEMFILES=OFF: the demo's build, which maps
// atom files only and so skips compiling chemfiles): PSF/TPR topologies and every trajectory are
// refused with a usage error that says how to get a build that reads them. PQR, XYZQ and
// AMBER PRMTOP topologies are read as in a full build.
#include <memory>
#include <string>
#include <vector>

#include "chemfiles_readers.hpp"
#include "dcs/error.hpp"
#include "dcs/io/trajectory.hpp"

namespace dcs::io {
namespace {

[[noreturn]] void refuse(const std::string& path, const char* what) {
  throw UsageError(path + ": reading " + what +
                   " needs the trajectory readers (chemfiles), which this build of dcs leaves "
                   "out (the demo's build, DCS_WITH_CHEMFILES=OFF); build the whole program "
                   "with `bash scripts/setup-build.sh` and run build/ci/bin/dcs (build/dev-cpu "
                   "without nvcc)");
}

}  // namespace

namespace detail {

System read_psf_or_tpr(const std::string& path, bool tpr) {
  refuse(path, tpr ? "a GROMACS TPR topology" : "a PSF topology");
}

}  // namespace detail

struct TrajectoryReader::Impl {
  std::vector<std::string> paths;
};

TrajectoryReader::TrajectoryReader(const std::vector<std::string>& paths, std::size_t,
                                   const std::string&) {
  if (paths.empty()) throw UsageError("no trajectory files given");
  refuse(paths.front(), "a trajectory");
}

TrajectoryReader::~TrajectoryReader() = default;
TrajectoryReader::TrajectoryReader(TrajectoryReader&&) noexcept = default;
TrajectoryReader& TrajectoryReader::operator=(TrajectoryReader&&) noexcept = default;

// Never reached: the constructor always throws, so no reader exists to ask.
std::int64_t TrajectoryReader::frames() const { return 0; }
std::size_t TrajectoryReader::atoms() const { return 0; }
const std::vector<std::string>& TrajectoryReader::paths() const { return impl_->paths; }
void TrajectoryReader::read(std::int64_t, TrajectoryFrame&) {
  throw UsageError("this build of dcs has no trajectory readers");
}
TrajectoryReader TrajectoryReader::another() const {
  throw UsageError("this build of dcs has no trajectory readers");
}

std::string trajectory_formats() {
  return "DCD (.dcd), XTC (.xtc), TRR (.trr), AMBER NetCDF (.nc, .ncdf), in builds with the "
         "trajectory readers (not this one)";
}

}  // namespace dcs::io
