// The atoms of each frame (frame_source.hpp).
#include "frame_source.hpp"

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
  if (request.select.empty()) {
    selected_ = all_indices(topology_.size());
  } else {
    selected_ = Selection(request.select, "--select").select(topology_.atoms);
    if (selected_.empty())
      throw UsageError(fmt::format("--select \"{}\" matches none of the {} atoms of {}",
                                   request.select, topology_.size(), request.topology));
  }
  if (!request.align.empty()) {
    aligned_ = Selection(request.align, "--align").select(topology_.atoms);
    if (aligned_.size() < 3)
      throw UsageError(fmt::format(
          "--align \"{}\" matches {} atom(s) of {}; fitting needs at least 3 (not on one line)",
          request.align, aligned_.size(), request.topology));
  }
  reader_.emplace(request.files, topology_.size(), request.topology);
  frames_ = frame_indices(request.frames, reader_->frames());

  // The input key: every file's checksum, in order, hashed together.
  file_sha256_.push_back(topology_.source_sha256);
  for (const std::string& file : request.files) file_sha256_.push_back(io::sha256_file(file));
  std::string joined;
  for (const std::string& sha : file_sha256_) joined += sha + "\n";
  inputs_sha256_ = io::sha256_hex(joined);

  reader_->read(frames_.front(), frame_);
  for (const std::size_t i : aligned_) reference_.push_back(frame_.positions[i]);
  System fitted;  // the first frame as every frame is mapped (fitted onto itself)
  double rmsd = 0.0;
  fill(frame_, fitted, &rmsd);
  first_.atoms.reserve(selected_.size());
  for (std::size_t j = 0; j < selected_.size(); ++j) {
    Atom atom = topology_.atoms[selected_[j]];
    atom.position = fitted.atoms[j].position;
    first_.atoms.push_back(std::move(atom));
  }
  first_.source_path = request.files.front();
  first_.source_format = "trajectory";
  first_.source_sha256 = inputs_sha256_;
  log().info("{}: {} atoms, total charge {:.4f} e; mapping {} of them ({}), {} of {} frames",
             request.topology, topology_.size(), topology_.total_charge(), selected_.size(),
             request.select.empty() ? "all" : "--select " + request.select, frames_.size(),
             reader_->frames());
}

void FrameSource::fill(const io::TrajectoryFrame& frame, System& out, double* fit_rmsd) const {
  if (out.atoms.size() != selected_.size()) {
    out.atoms.assign(selected_.size(), Atom{});
    for (std::size_t j = 0; j < selected_.size(); ++j)
      out.atoms[j].charge = topology_.atoms[selected_[j]].charge;
  }
  *fit_rmsd = 0.0;
  if (aligned_.empty()) {
    for (std::size_t j = 0; j < selected_.size(); ++j)
      out.atoms[j].position = frame.positions[selected_[j]];
    return;
  }
  std::vector<Vec3> mobile;
  mobile.reserve(aligned_.size());
  for (const std::size_t i : aligned_) mobile.push_back(frame.positions[i]);
  const RigidFit fit = least_squares_fit(mobile, reference_);
  *fit_rmsd = fit.rmsd;
  for (std::size_t j = 0; j < selected_.size(); ++j)
    out.atoms[j].position = fit.apply(frame.positions[selected_[j]]);
}

void FrameSource::read(std::size_t k, System& out, double* time_ps, double* fit_rmsd) {
  reader_->read(frames_.at(k), frame_);
  *time_ps = frame_.time_ps;
  fill(frame_, out, fit_rmsd);
  out.source_path = first_.source_path;
}

}  // namespace dcs::pipeline
