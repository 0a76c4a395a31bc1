// The atoms of each frame as the potential sees them: the topology's charges, the trajectory's
// positions with molecules made whole across the cell boundary (--pbc whole) and optionally
// centred (--center), the --select atoms only, fitted (least squares) onto the first listed
// frame's --align atoms. What must never pass silently is counted per frame (FrameFacts).
// A selection with distance keywords (around, sphzone, sphlayer) is judged once, on the first
// listed frame (--center-on as read, --select and --align as made whole and centred), and its
// atoms are kept for every frame: the map is the potential of one fixed set of atoms.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../inputs.hpp"
#include "dcs/grid.hpp"
#include "dcs/io/trajectory.hpp"
#include "dcs/periodic/whole.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/selection.hpp"
#include "dcs/superpose.hpp"
#include "dcs/types.hpp"

namespace dcs::pipeline {

/// What reading one listed frame found, beside its atoms.
struct FrameFacts {
  double time_ps = std::numeric_limits<double>::quiet_NaN();  ///< NaN where the file has none
  double fit_rmsd = 0.0;                                      ///< Å; 0 without --align
  /// The cell as MDAnalysis reports `dimensions`: a, b, c (Å), α, β, γ (°); zeros: no cell.
  std::array<double, 6> dimensions{};
  std::int64_t long_bonds = 0;    ///< bonds still across the boundary after making whole
  std::int64_t outside_grid = 0;  ///< mapped atoms outside the grid's box (after fitting)
  AtomBox box;                    ///< of the mapped atoms (after fitting)
};

class FrameSource {
 public:
  /// Reads the topology, resolves the selections and the frame list, opens the trajectory and
  /// reads the first listed frame (the fitting reference, and where selections with distance
  /// keywords are judged). Throws what the readers throw, and UsageError for a selection that
  /// matches no atom.
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

  /// Whether molecules are made whole (--pbc whole, bonds in the topology, a cell in the frames
  /// or the topology), and how many molecules and bonds that concerns.
  bool makes_whole() const noexcept { return graph_.has_value(); }
  const std::optional<MoleculeGraph>& molecules() const noexcept { return graph_; }

  /// The grid the frames are mapped on: atoms outside its box are counted from now on (open
  /// boundaries). A periodic map whose grid spans the first frame's cell along its vectors
  /// (tiles_cell) follows each frame's cell (frame_grid()).
  void set_grid(const GridSpec& grid);
  /// Whether each frame is sampled at the grid's fractional coordinates of its own cell.
  bool grid_follows_cell() const noexcept { return follows_cell_; }
  /// The points of `grid` for a frame in `cell`: the same fractional coordinates of that cell
  /// (make_cell_grid() with the grid's counts) where the grid follows the cell and the frame's
  /// cell differs from the first frame's; `grid` itself otherwise (fixed points in Å).
  GridSpec frame_grid(const GridSpec& grid, const UnitCell& cell) const;

  /// One decoding thread's own reader of the trajectory files and frame storage (chemfiles
  /// objects are not shared between threads).
  struct Cursor {
    io::TrajectoryReader reader;
    io::TrajectoryFrame frame;
  };
  /// A cursor for another decoding thread.
  Cursor cursor() const { return Cursor{reader_->another(), {}}; }

  /// Listed frame k: the mapped atoms' positions (made whole, centred, fitted) and charges into
  /// `out` (positions and charges only: no identities; an `out` of the last frame's is reused
  /// without allocating), and what was found (FrameFacts). Throws InputError naming the file's
  /// frame for a cell that periodic work needs but that is missing or unusable, and under
  /// --strict for a frame with long bonds or atoms outside the grid. Threads may read at once,
  /// each through its own cursor; the frame's result does not depend on the cursor.
  void read(Cursor& cursor, std::size_t k, System& out, FrameFacts& facts) const;
  /// The same through this source's own cursor (one thread).
  void read(std::size_t k, System& out, FrameFacts& facts) { read(*own_, k, out, facts); }

 private:
  void fill(io::TrajectoryFrame& frame, System& out, FrameFacts& facts) const;
  /// A selection option's text parsed (none for an empty text).
  static std::optional<Selection> parse(const std::string& text, std::string_view option);
  /// The atoms a selection picks: on the topology (frame null), or, for one with distance
  /// keywords, on the frame's positions and cell (logged: judged once, kept for every frame).
  std::vector<std::size_t> judge(const Selection& selection, std::string_view option,
                                 const io::TrajectoryFrame* frame) const;
  /// --select, --align, --center-on judged, with their checks (UsageError: none, < 3 atoms).
  void resolve_select(const Selection& s, const io::TrajectoryFrame* frame);
  void resolve_align(const Selection& s, const io::TrajectoryFrame* frame);
  void resolve_center(const Selection& s, const io::TrajectoryFrame* frame);
  static std::string in_frame(const io::TrajectoryFrame* frame);
  /// The cell of the frame (the file's, else the topology's).
  const UnitCell& cell_of(const io::TrajectoryFrame& frame) const;
  void place(io::TrajectoryFrame& frame, FrameFacts& facts) const;

  TrajectoryRequest request_;
  System topology_;
  std::vector<std::size_t> selected_;            ///< topology indices of the mapped atoms
  std::vector<std::size_t> aligned_;             ///< topology indices of the --align atoms
  std::vector<std::size_t> centred_;             ///< topology indices of the --center atoms
  std::vector<Vec3> reference_;                  ///< the first frame's --align positions
  std::optional<MoleculeGraph> graph_;           ///< --pbc whole with bonds
  std::optional<std::array<Vec3, 2>> grid_box_;  ///< set_grid(): lowest and highest corner
  bool follows_cell_ = false;                    ///< set_grid(): frame_grid() scales
  std::optional<io::TrajectoryReader> reader_;
  std::vector<std::int64_t> frames_;
  io::TrajectoryFrame frame_;  ///< the first listed frame as read (construction only)
  std::optional<Cursor> own_;  ///< read(k, ...)'s
  System first_;
  std::string inputs_sha256_;
  std::vector<std::string> file_sha256_;
};

}  // namespace dcs::pipeline
