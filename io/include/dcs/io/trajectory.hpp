// Trajectories of MD systems: the positions of every atom, frame after frame, from DCD, XTC,
// TRR and AMBER NetCDF files (read by chemfiles). Charges and identities come from a topology
// (dcs/io/topology.hpp); the reader only checks that the atom counts agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dcs/types.hpp"

namespace dcs::io {

/// One frame of a trajectory.
struct TrajectoryFrame {
  std::int64_t index = 0;  ///< 0-based over the concatenated files
  double time_ps = std::numeric_limits<double>::quiet_NaN();  ///< where the file states it
  std::vector<Vec3> positions;                                ///< Å, one per atom, file order
  /// The frame's periodic cell as the file states it; infinite where the file has none (DCD
  /// without unit-cell records, zero boxes).
  UnitCell cell;
};

/// Several trajectory files read in order as one trajectory: DCD (.dcd), XTC (.xtc), TRR (.trr),
/// AMBER NetCDF (.nc, .ncdf; NetCDF-3 only), the format from each file's extension
/// (case-insensitive). Not thread-safe: one reader thread; reads block that thread (another()
/// gives each thread its own reader of the same files).
/// time_ps: XTC and TRR store it; AMBER NetCDF: NaN (chemfiles 0.10 does not read its "time"
/// variable); DCD from its
/// header's first step, step interval and time step (CHARMM's AKMA unit converted to ps), NaN
/// where the header has no time step.
class TrajectoryReader {
 public:
  /// Opens every file and counts its frames. Each file must have `atoms` atoms per frame (the
  /// topology's count), otherwise InputError "<file>: N atoms per frame, but the topology
  /// <topology_name> has M". Throws UsageError for an unknown extension or no paths, InputError
  /// for a missing or unreadable file, a file chemfiles cannot open, and an empty trajectory
  /// (0 frames in all).
  TrajectoryReader(const std::vector<std::string>& paths, std::size_t atoms,
                   const std::string& topology_name);
  ~TrajectoryReader();
  TrajectoryReader(TrajectoryReader&&) noexcept;
  TrajectoryReader& operator=(TrajectoryReader&&) noexcept;

  /// Another reader of the same files, for another thread: it shares nothing with this one and
  /// checks nothing again (the frame counts and XTC offsets are copied); no file is open yet.
  TrajectoryReader another() const;

  std::int64_t frames() const;  ///< total over all files
  std::size_t atoms() const;
  const std::vector<std::string>& paths() const;

  /// Reads frame `index` (0-based over all files) into `out`, reusing its storage. Sequential
  /// reads are fastest; any order works. Throws InputError "<file>: frame <0-based index in
  /// that file>: reason" for truncated or corrupt data, another atom count, and non-finite
  /// coordinates or coordinates beyond dcs::limits::kMaxCoordinate; UsageError for an index
  /// outside [0, frames()). After an exception `out` holds nothing meaningful.
  void read(std::int64_t index, TrajectoryFrame& out);

 private:
  struct Impl;
  explicit TrajectoryReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// "DCD (.dcd), XTC (.xtc), TRR (.trr), AMBER NetCDF (.nc, .ncdf)", for --help.
std::string trajectory_formats();

}  // namespace dcs::io
