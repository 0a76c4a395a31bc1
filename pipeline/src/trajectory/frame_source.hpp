// The atoms of each frame as the potential sees them: the topology's charges, the trajectory's
// positions, the --select atoms only, fitted (least squares) onto the first listed frame's
// --align atoms.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dcs/io/trajectory.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/selection.hpp"
#include "dcs/superpose.hpp"
#include "dcs/types.hpp"

namespace dcs::pipeline {

class FrameSource {
 public:
  /// Reads the topology, resolves the selections and the frame list, opens the trajectory and
  /// reads the first listed frame (the fitting reference). Throws what the readers throw, and
  /// UsageError for a selection that matches no atom.
  explicit FrameSource(const TrajectoryRequest& request);

  /// The frames mapped: indices into the trajectory files, in increasing order.
  const std::vector<std::int64_t>& frames() const noexcept { return frames_; }
  /// Atoms in the trajectory (the topology's count) and mapped (--select).
  std::size_t topology_atoms() const noexcept { return topology_.size(); }
  std::size_t selected_atoms() const noexcept { return selected_.size(); }
  /// The first listed frame's mapped atoms with their identities (for the file's /atoms).
  const System& first() const noexcept { return first_; }
  /// The topology file's and every trajectory file's SHA-256, combined: the run's input key.
  const std::string& inputs_sha256() const noexcept { return inputs_sha256_; }
  const std::vector<std::string>& file_sha256() const noexcept { return file_sha256_; }
  const System& topology() const noexcept { return topology_; }

  /// Listed frame k: the mapped atoms' positions (fitted) and charges into `out` (positions
  /// and charges only: no identities), its time (ps; NaN where the file has none) and the RMSD
  /// of the fit (0 without --align). Not thread-safe.
  void read(std::size_t k, System& out, double* time_ps, double* fit_rmsd);

 private:
  void fill(const io::TrajectoryFrame& frame, System& out, double* fit_rmsd) const;

  TrajectoryRequest request_;
  System topology_;
  std::vector<std::size_t> selected_;  ///< topology indices of the mapped atoms
  std::vector<std::size_t> aligned_;   ///< topology indices of the --align atoms
  std::vector<Vec3> reference_;        ///< the first frame's --align positions
  std::optional<io::TrajectoryReader> reader_;
  std::vector<std::int64_t> frames_;
  io::TrajectoryFrame frame_;
  System first_;
  std::string inputs_sha256_;
  std::vector<std::string> file_sha256_;
};

}  // namespace dcs::pipeline
