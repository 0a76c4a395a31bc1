// The atoms of each frame (frame_source.hpp).
#include "frame_source.hpp"

#include <array>
#include <cmath>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/checksum.hpp"
#include "dcs/io/topology.hpp"
#include "dcs/log.hpp"

namespace dcs::pipeline {
namespace {

std::vector<std::size_t> all_indices(std::size_t n) {
  std::vector<std::size_t> list(n);
  for (std::size_t i = 0; i < n; ++i) list[i] = i;
  return list;
}

}  // namespace

FrameSource::FrameSource(const TrajectoryRequest& request) : request_(request) {
  topology_ = io::read_topology(request.topology);
  // Selections with distance keywords wait for the first frame; the others are judged now.
  const std::optional<Selection> select = parse(request.select, "--select");
  const std::optional<Selection> align = parse(request.align, "--align");
  const std::optional<Selection> center = parse(request.center, "--center-on");
  if (!select) selected_ = all_indices(topology_.size());
  if (select && !select->uses_distances()) resolve_select(*select, nullptr);
  if (align && !align->uses_distances()) resolve_align(*align, nullptr);
  if (center && !center->uses_distances()) resolve_center(*center, nullptr);
  if (request.pbc == TrajectoryRequest::Pbc::kWhole && !topology_.bonds.empty())
    graph_.emplace(topology_.size(), topology_.bonds);
  else if (request.pbc == TrajectoryRequest::Pbc::kWhole)
    log().info(
        "{} lists no bonds: molecules are taken as the frames hold them (--pbc whole "
        "needs a PSF, PRMTOP or TPR topology)",
        request.topology);
  reader_.emplace(request.files, topology_.size(), request.topology);
  own_.emplace(cursor());
  frames_ = frame_indices(request.frames, reader_->frames());

  // The input key: every file's checksum, in order, hashed together.
  file_sha256_.push_back(topology_.source_sha256);
  for (const std::string& file : request.files) file_sha256_.push_back(io::sha256_file(file));
  std::string joined;
  for (const std::string& sha : file_sha256_) joined += sha + "\n";
  inputs_sha256_ = io::sha256_hex(joined);

  reader_->read(frames_.front(), frame_);
  if (center && center->uses_distances()) resolve_center(*center, &frame_);  // as read
  if (graph_ && !cell_of(frame_).is_periodic() && !cell_of(frame_).why_unusable()) {
    log().info(
        "{}: frame {} has no cell and {} none: molecules are taken as the frames hold "
        "them",
        request.files.front(), frames_.front(), request.topology);
    graph_.reset();
  } else if (graph_) {
    log().info("molecules made whole across the cell boundary: {} molecules, {} bonds ({})",
               graph_->molecules(), graph_->bonds(), cell_of(frame_).describe());
  }
  FrameFacts facts;
  place(frame_, facts);
  if (select && select->uses_distances()) resolve_select(*select, &frame_);  // as placed
  if (align && align->uses_distances()) resolve_align(*align, &frame_);
  for (const std::size_t i : aligned_) reference_.push_back(frame_.positions[i]);
  if (!aligned_.empty() && on_one_line(reference_)) {
    const std::array<double, 3> spread = principal_spreads(reference_);
    throw UsageError(fmt::format(
        "--align \"{}\": its {} atoms lie on one line in frame {} (the reference), {:.3g} Å RMS "
        "from their best line along which they spread {:.3g} Å RMS, so the rotation about that "
        "line is undetermined; fit atoms must be at least {} Å and {:g} of their spread off one "
        "line",
        request.align, aligned_.size(), frames_.front(), std::hypot(spread[1], spread[2]),
        spread[0], kMinOffLineSpread, kMinOffLineRatio));
  }
  System fitted;  // the first frame as every frame is mapped (fitted onto itself)
  fill(frame_, fitted, facts);
  first_.atoms.reserve(selected_.size());
  for (std::size_t j = 0; j < selected_.size(); ++j) {
    Atom atom = topology_.atoms[selected_[j]];
    atom.position = fitted.atoms[j].position;
    first_.atoms.push_back(std::move(atom));
  }
  first_.source_path = request.files.front();
  first_.source_format = "trajectory";
  // The map's input is the first trajectory file (/provenance input_path): its own checksum,
  // as sha256sum gives it; the resume key holds every file's (trajectory_settings()).
  first_.source_sha256 = file_sha256_.at(1);
  first_.cell = cell_of(frame_);
  log().info("{}: {} atoms, total charge {:.4f} e; mapping {} of them ({}), {} of {} frames",
             request.topology, topology_.size(), topology_.total_charge(), selected_.size(),
             request.select.empty() ? "all" : "--select " + request.select, frames_.size(),
             reader_->frames());
}

std::optional<Selection> FrameSource::parse(const std::string& text, std::string_view option) {
  if (text.empty()) return std::nullopt;
  return Selection(text, option);
}

std::vector<std::size_t> FrameSource::judge(const Selection& selection, std::string_view option,
                                            const io::TrajectoryFrame* frame) const {
  if (!frame) return selection.select(topology_.atoms);
  // Distances: minimum image in the frame's cell (MDAnalysis's periodic=True), plain without
  // one; judged once, on the first listed frame: the map sums a fixed set of atoms.
  const UnitCell& cell = cell_of(*frame);
  if (cell.why_unusable())
    throw InputError(request_.files.front(), 0,
                     fmt::format("frame {} of the trajectory has an unusable cell: {} ({} \"{}\" "
                                 "measures distances in the frame's cell)",
                                 frame->index, *cell.why_unusable(), option, selection.text()));
  std::vector<std::size_t> out = selection.select(topology_.atoms, frame->positions, cell);
  log().info(
      "{} \"{}\" measures distances: judged once, on frame {} ({}), {} atoms; every frame uses "
      "these same atoms (MDAnalysis's select_atoms(..., updating=False))",
      option, selection.text(), frame->index,
      cell.is_periodic() ? "minimum image in its cell" : "no cell: plain distances", out.size());
  return out;
}

void FrameSource::resolve_select(const Selection& s, const io::TrajectoryFrame* frame) {
  selected_ = judge(s, "--select", frame);
  if (selected_.empty())
    throw UsageError(fmt::format("--select \"{}\" matches none of the {} atoms of {}{}", s.text(),
                                 topology_.size(), request_.topology, in_frame(frame)));
}

void FrameSource::resolve_align(const Selection& s, const io::TrajectoryFrame* frame) {
  aligned_ = judge(s, "--align", frame);
  if (aligned_.size() < 3)
    throw UsageError(fmt::format(
        "--align \"{}\" matches {} atom(s) of {}{}; fitting needs at least 3 (not on one line)",
        s.text(), aligned_.size(), request_.topology, in_frame(frame)));
}

void FrameSource::resolve_center(const Selection& s, const io::TrajectoryFrame* frame) {
  centred_ = judge(s, "--center-on", frame);
  if (centred_.empty())
    throw UsageError(fmt::format("--center-on \"{}\" matches none of the {} atoms of {}{}",
                                 s.text(), topology_.size(), request_.topology, in_frame(frame)));
}

std::string FrameSource::in_frame(const io::TrajectoryFrame* frame) {
  return frame ? fmt::format(" in frame {}", frame->index) : std::string();
}

const UnitCell& FrameSource::cell_of(const io::TrajectoryFrame& frame) const {
  return frame.cell.is_periodic() || frame.cell.why_unusable() ? frame.cell : topology_.cell;
}

void FrameSource::set_grid(const GridSpec& grid) {
  // A periodic map holds every atom's images: an atom outside the grid's box is not missing.
  if (request_.periodic) {
    follows_cell_ = tiles_cell(grid, first_.cell);
    return;
  }
  // The box of grid points, with half a spacing of slack for rounding.
  std::array<Vec3, 2> box{};
  for (int a = 0; a < 3; ++a) {
    box[0][a] = grid.origin[a] - 0.5 * grid.spacing[a];
    box[1][a] = grid.origin[a] + (static_cast<double>(grid.counts[a]) - 0.5) * grid.spacing[a];
  }
  grid_box_ = box;
}

GridSpec FrameSource::frame_grid(const GridSpec& grid, const UnitCell& cell) const {
  if (!follows_cell_ || cell == first_.cell) return grid;
  GridRequest request;
  request.counts = grid.counts;
  request.cell_box = true;
  request.map_axes = MapAxes::kCell;
  return make_cell_grid(cell, request);
}

/// Makes the frame's molecules whole and centres it, in place (before selecting and fitting).
void FrameSource::place(io::TrajectoryFrame& frame, FrameFacts& facts) const {
  const UnitCell& cell = cell_of(frame);
  if (cell.is_periodic())
    facts.dimensions = {cell.lengths()[0], cell.lengths()[1], cell.lengths()[2],
                        cell.angles()[0],  cell.angles()[1],  cell.angles()[2]};
  const bool needs_cell = graph_.has_value() || !centred_.empty() || request_.periodic;
  if (!needs_cell) return;
  if (!cell.is_periodic()) {
    // Periodic work on a frame without a usable cell: refused with the frame's number.
    throw InputError(
        request_.files.front(), 0,
        fmt::format("frame {} of the trajectory {} {}", frame.index,
                    cell.why_unusable() ? "has an unusable cell: " + *cell.why_unusable()
                                        : std::string("has no cell"),
                    request_.periodic ? "(--periodic needs every frame's cell)"
                    : graph_          ? "(--pbc whole makes molecules whole in the cell; "
                                        "--pbc none takes the positions as they are)"
                                      : "(--center-on needs the cell)"));
  }
  if (graph_)
    facts.long_bonds =
        static_cast<std::int64_t>(graph_->make_whole(cell, frame.positions).long_bonds);
  if (centred_.empty()) return;
  Vec3 centre{0.0, 0.0, 0.0};
  for (const std::size_t i : centred_)
    for (int a = 0; a < 3; ++a) centre[a] += frame.positions[i][a];
  const Vec3 middle = cell.to_cartesian({0.5, 0.5, 0.5});
  Vec3 move{};
  for (int a = 0; a < 3; ++a)
    move[a] = middle[a] - centre[a] / static_cast<double>(centred_.size());
  for (Vec3& p : frame.positions)
    for (int a = 0; a < 3; ++a) p[a] += move[a];
  if (graph_) graph_->wrap_molecules(cell, frame.positions);
}

void FrameSource::fill(io::TrajectoryFrame& frame, System& out, FrameFacts& facts) const {
  if (out.atoms.size() != selected_.size()) {
    out.atoms.assign(selected_.size(), Atom{});
    for (std::size_t j = 0; j < selected_.size(); ++j)
      out.atoms[j].charge = topology_.atoms[selected_[j]].charge;
  }
  facts.fit_rmsd = 0.0;
  std::optional<RigidFit> fit;
  if (!aligned_.empty()) {
    std::vector<Vec3> mobile;
    mobile.reserve(aligned_.size());
    for (const std::size_t i : aligned_) mobile.push_back(frame.positions[i]);
    fit = least_squares_fit(mobile, reference_);
    facts.fit_rmsd = fit->rmsd;
  }
  // One pass over the mapped atoms (an Atom is ~200 bytes: each pass costs a cache line an
  // atom): placed, boxed, and counted when off the grid.
  facts.outside_grid = 0;
  facts.box = AtomBox{};
  const Vec3 low = grid_box_ ? (*grid_box_)[0] : Vec3{};
  const Vec3 high = grid_box_ ? (*grid_box_)[1] : Vec3{};
  for (std::size_t j = 0; j < selected_.size(); ++j) {
    const Vec3& read = frame.positions[selected_[j]];
    const Vec3 p = fit ? fit->apply(read) : read;
    out.atoms[j].position = p;
    facts.box.include(p);
    if (grid_box_ && (p[0] < low[0] || p[0] > high[0] || p[1] < low[1] || p[1] > high[1] ||
                      p[2] < low[2] || p[2] > high[2]))
      ++facts.outside_grid;
  }
}

void FrameSource::read(Cursor& cursor, std::size_t k, System& out, FrameFacts& facts) const {
  io::TrajectoryFrame& frame = cursor.frame;
  cursor.reader.read(frames_.at(k), frame);
  facts = FrameFacts{};
  facts.time_ps = frame.time_ps;
  place(frame, facts);
  fill(frame, out, facts);
  out.cell = cell_of(frame);  // each frame's own cell (--periodic)
  out.source_path = first_.source_path;
  if (!request_.strict) return;
  if (facts.long_bonds > 0)
    throw InputError(request_.files.front(), 0,
                     fmt::format("frame {}: {} bond(s) still cross the cell boundary after making "
                                 "molecules whole (--strict)",
                                 frames_.at(k), facts.long_bonds));
  if (facts.outside_grid > 0)
    throw InputError(request_.files.front(), 0,
                     fmt::format("frame {}: {} mapped atom(s) outside the grid (--strict)",
                                 frames_.at(k), facts.outside_grid));
}

}  // namespace dcs::pipeline
