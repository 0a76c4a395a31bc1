// The long-range solve on the device (device_lattice.hpp), step for step as LongRange::solve
// (libdcs/src/msm/lattice.cpp) does it on the CPU.
#include "device_lattice.hpp"

#include <array>
#include <climits>
#include <cmath>
#include <string>
#include <utility>

#include "atom_bins.hpp"
#include "dcs/error.hpp"
#include "lattice_kernels.hpp"

namespace dcs::cuda::detail {
namespace {

LatticeExtent to_device(const MsmExtent& e) {
  LatticeExtent d;
  for (int a = 0; a < 3; ++a) {
    const auto i = static_cast<std::size_t>(a);
    if (e.n[i] < 1 || e.n[i] > INT_MAX / 4 || e.lo[i] < INT_MIN / 4 || e.lo[i] > INT_MAX / 4)
      throw UsageError("CUDA msm: a lattice of " + std::to_string(e.n[i]) +
                       " points per axis is more than the kernels index");
    d.lo[a] = static_cast<int>(e.lo[i]);
    d.n[a] = static_cast<int>(e.n[i]);
  }
  return d;
}

template <class T>
DeviceBuffer<T> upload(const std::vector<T>& host, StreamView stream) {
  DeviceBuffer<T> d(host.size());
  d.upload(host.data(), host.size(), stream);
  return d;
}

DeviceBuffer<double> zeros(std::size_t n, StreamView stream) {
  DeviceBuffer<double> d(n);
  d.fill_zero(stream);
  return d;
}

/// The three one-axis passes of a grid transfer from `from` to `to`, along `axes` in order: each
/// pass takes its axis's lo and n from `to`, through two temporaries (zeroed where the passes
/// add into them: prolongation).
void transfer_by_axes(bool prolong, const std::array<int, 3>& axes, const TransferWeights& J,
                      const LatticeExtent& from, const double* d_from, const LatticeExtent& to,
                      double* d_to, StreamView stream) {
  LatticeExtent one = from;
  one.lo[axes[0]] = to.lo[axes[0]];
  one.n[axes[0]] = to.n[axes[0]];
  LatticeExtent two = one;
  two.lo[axes[1]] = to.lo[axes[1]];
  two.n[axes[1]] = to.n[axes[1]];
  DeviceBuffer<double> d_one =
      prolong ? zeros(one.points(), stream) : DeviceBuffer<double>(one.points());
  DeviceBuffer<double> d_two =
      prolong ? zeros(two.points(), stream) : DeviceBuffer<double>(two.points());
  launch_msm_transfer(prolong, axes[0], J, from, d_from, one, d_one.data(), stream);
  launch_msm_transfer(prolong, axes[1], J, one, d_one.data(), two, d_two.data(), stream);
  launch_msm_transfer(prolong, axes[2], J, two, d_two.data(), to, d_to, stream);
  stream.synchronize();  // before the temporaries are freed
}

/// coarse = fine restricted, x then y then z (restrict_to).
void restrict_to(const TransferWeights& J, const LatticeExtent& fine, const double* d_fine,
                 const LatticeExtent& coarse, double* d_coarse, StreamView stream) {
  transfer_by_axes(false, {0, 1, 2}, J, fine, d_fine, coarse, d_coarse, stream);
}

/// fine += coarse prolonged, z then y then x (prolong_into).
void prolong_into(const TransferWeights& J, const LatticeExtent& coarse, const double* d_coarse,
                  const LatticeExtent& fine, double* d_fine, StreamView stream) {
  transfer_by_axes(true, {2, 1, 0}, J, coarse, d_coarse, fine, d_fine, stream);
}

}  // namespace

void MsmStepTimer::begin(MsmStep step, StreamView stream) {
  marks_.push_back({step, Event(), Event()});
  marks_.back().start.record(stream);
}

void MsmStepTimer::end(StreamView stream) { marks_.back().stop.record(stream); }

std::vector<double> MsmStepTimer::seconds() const {
  std::vector<double> total(static_cast<std::size_t>(MsmStep::Count), 0.0);
  for (const Mark& m : marks_)
    total[static_cast<std::size_t>(m.step)] += 1e-3 * m.stop.elapsed_ms_since(m.start);
  return total;
}

void solve_lattice_on_device(const MsmLatticePlan& plan, DeviceBuffer<MsmAtom> atoms,
                             bool direct_sums, DeviceBuffer<double>& finest, StreamView stream,
                             MsmStepTimer& timer) {
  const int levels = static_cast<int>(plan.levels.size());
  if (levels < 1 || plan.reach > kMaxReach ||
      plan.two_scale.size() != static_cast<std::size_t>(2 * plan.reach + 1))
    throw InternalError("solve_lattice_on_device: malformed plan");
  std::vector<LatticeExtent> extent;
  for (const MsmExtent& e : plan.levels) extent.push_back(to_device(e));
  TransferWeights J;
  J.reach = plan.reach;
  for (std::size_t k = 0; k < plan.two_scale.size(); ++k) J.J[k] = plan.two_scale[k];

  // Level 0's charges: atoms sorted by lattice cell floor((x - origin) / h), which runs over
  // 0 .. n - order per axis (the finest range is cells 1 - s .. cells + s - 1).
  std::vector<DeviceBuffer<double>> charge;
  {
    BoxBins cells;
    int cell_count[3];
    for (int d = 0; d < 3; ++d) {
      cells.lower[d] = plan.origin[d];
      cell_count[d] = extent[0].n[d] - plan.order + 1;
      cells.n[d] = cell_count[d];
    }
    cells.side = plan.h;
    DeviceBuffer<MsmAtom> cell_atoms;
    DeviceBuffer<std::uint32_t> cell_start;
    timer.begin(MsmStep::Binning, stream);
    const std::size_t n = atoms.size();
    bin_atoms(atoms.data(), n, cells, cell_atoms, cell_start, stream);  // synchronizes
    atoms = DeviceBuffer<MsmAtom>();
    to_lattice_units(cell_atoms.data(), n, cells.lower, plan.h, stream);
    timer.end(stream);
    charge.emplace_back(extent[0].points());
    timer.begin(MsmStep::Anterpolation, stream);
    launch_msm_anterpolate(cell_atoms.data(), cell_start.data(), cell_count, extent[0], plan.order,
                           charge[0].data(), stream);
    timer.end(stream);
    stream.synchronize();  // before the sorted copy is freed
  }

  // Restriction down to the top level.
  for (int level = 1; level < levels; ++level) {
    charge.emplace_back(extent[static_cast<std::size_t>(level)].points());
    timer.begin(MsmStep::Restriction, stream);
    restrict_to(J, extent[static_cast<std::size_t>(level - 1)],
                charge[static_cast<std::size_t>(level - 1)].data(),
                extent[static_cast<std::size_t>(level)], charge.back().data(), stream);
    timer.end(stream);
  }

  // The kernels' tables.
  DeviceBuffer<double> d_top = upload(plan.top.by_d2, stream);
  DeviceBuffer<double> d_cutoff = upload(plan.cutoff.by_d2, stream);
  std::vector<int> span(plan.cutoff_span.begin(), plan.cutoff_span.end());
  DeviceBuffer<int> d_span = upload(span, stream);
  const int R = static_cast<int>(plan.cutoff.radius[0]);
  const bool tiled = !direct_sums && plan.cutoff.radius[1] == R && plan.cutoff.radius[2] == R &&
                     msm_tiled_sum_fits(R);
  const int cutoff_radius[3] = {R, R, R};

  // Top level: all pairs.
  const int top = levels - 1;
  DeviceBuffer<double> e(extent[static_cast<std::size_t>(top)].points());
  {
    const int radius[3] = {static_cast<int>(plan.top.radius[0]),
                           static_cast<int>(plan.top.radius[1]),
                           static_cast<int>(plan.top.radius[2])};
    timer.begin(MsmStep::LevelSums, stream);
    launch_msm_direct_sum(extent[static_cast<std::size_t>(top)],
                          charge[static_cast<std::size_t>(top)].data(), d_top.data(), radius,
                          std::ldexp(1.0, -top), e.data(), stream);
    timer.end(stream);
  }
  // Down the levels: this level's cutoff sum plus the coarser potential prolonged.
  for (int level = top - 1; level >= 0; --level) {
    const LatticeExtent& ext = extent[static_cast<std::size_t>(level)];
    DeviceBuffer<double> fine(ext.points());
    const double scale = std::ldexp(1.0, -level);
    timer.begin(MsmStep::LevelSums, stream);
    if (tiled)
      launch_msm_tiled_sum(ext, charge[static_cast<std::size_t>(level)].data(), d_cutoff.data(),
                           d_span.data(), R, scale, fine.data(), stream);
    else
      launch_msm_direct_sum(ext, charge[static_cast<std::size_t>(level)].data(), d_cutoff.data(),
                            cutoff_radius, scale, fine.data(), stream);
    timer.end(stream);
    stream.synchronize();
    // This level's charges are summed, and the coarser ones before.
    while (charge.size() > static_cast<std::size_t>(level)) charge.pop_back();
    timer.begin(MsmStep::Prolongation, stream);
    prolong_into(J, extent[static_cast<std::size_t>(level + 1)], e.data(), ext, fine.data(),
                 stream);
    timer.end(stream);
    e = std::move(fine);
  }
  stream.synchronize();
  finest = std::move(e);
}

}  // namespace dcs::cuda::detail
