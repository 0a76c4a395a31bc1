// What one msm prepare() covers and how much memory it takes (dcs/msm_plan.hpp), computed from
// the levels' extents before anything is allocated, so that a box too large for the machine or
// --memory-limit is refused with the reason instead of running out of memory after gigabytes
// (issue 35: one far atom made the finest lattice (distance / h)^3 points).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "dcs/msm_plan.hpp"
#include "dcs/sysinfo.hpp"
#include "fft_convolution.hpp"

namespace dcs {
namespace {

/// Beyond this many bytes no machine computes the box, and sizes would near size_t's range.
constexpr double kAbsurdBytes = 0x1p60;

/// The extra memory of one lattice sum on a lattice of `n` points per axis with a kernel of
/// half-widths `r` (lattice.cpp's lattice_sum_auto): the FFT's arrays where it may take them,
/// else the direct sum's row spans and one accumulator row per thread; the larger of the two.
double lattice_sum_bytes(const std::array<long, 3>& n, const std::array<long, 3>& r,
                         unsigned threads) {
  const double rows = static_cast<double>(n[1]) * static_cast<double>(n[2]);
  const double stencil = static_cast<double>(2 * r[0] + 1) * static_cast<double>(2 * r[1] + 1) *
                         static_cast<double>(2 * r[2] + 1);
  const double direct = 16.0 * rows + 16.0 * stencil / static_cast<double>(2 * r[0] + 1) +
                        8.0 * static_cast<double>(threads) * static_cast<double>(n[0]);
  const msm::FftPlan fft = msm::fft_plan(n, r);
  const double by_fft = fft.bytes <= msm::kFftBytesLimit ? static_cast<double>(fft.bytes) : 0.0;
  return 8.0 * stencil + std::max(direct, by_fft);  // the stencil itself, then the sum's own
}

/// Points of a lattice with the x extent of `a`, the y of `b` and the z of `c`: the transfer
/// temporaries (restriction and prolongation go one axis at a time).
double mixed(const MsmExtent& a, const MsmExtent& b, const MsmExtent& c) {
  return static_cast<double>(a.n[0]) * static_cast<double>(b.n[1]) * static_cast<double>(c.n[2]);
}

}  // namespace

MsmBox msm_box(const System& system, const GridSpec& grid) {
  MsmBox box;
  box.lower = grid.origin;
  box.upper = grid.point(grid.nx() - 1, grid.ny() - 1, grid.nz() - 1);
  for (const Atom& atom : system.atoms) {
    if (atom.charge == 0.0) continue;
    if (box.charged++ == 0) box.atoms_lower = box.atoms_upper = atom.position;
    for (int d = 0; d < 3; ++d) {
      box.atoms_lower[d] = std::min(box.atoms_lower[d], atom.position[d]);
      box.atoms_upper[d] = std::max(box.atoms_upper[d], atom.position[d]);
    }
  }
  if (box.charged == 0) box.atoms_lower = box.atoms_upper = grid.origin;
  for (int d = 0; d < 3; ++d) {
    box.lower[d] = std::min(box.lower[d], box.atoms_lower[d]);
    box.upper[d] = std::max(box.upper[d], box.atoms_upper[d]);
  }
  return box;
}

MsmMemory msm_memory(const MsmParameters& parameters, const MsmBox& box, const GridSpec& grid,
                     unsigned threads) {
  MsmMemory m;
  const double atoms = static_cast<double>(std::max<std::size_t>(box.charged, 1));
  m.bins = 1.0;
  for (int d = 0; d < 3; ++d)
    m.bins *= std::floor((box.atoms_upper[d] - box.atoms_lower[d]) / (0.5 * parameters.cutoff)) + 1;
  double finest = 1.0;
  for (int d = 0; d < 3; ++d)
    finest *= std::floor((box.upper[d] - box.lower[d]) / parameters.spacing) + parameters.order;
  m.finest_points = m.lattice_points = finest;
  // An absurd box: the finest lattice alone says it (its extents would not fit a long's sums).
  if (8.0 * finest + 8.0 * m.bins > kAbsurdBytes) {
    m.host_peak = m.host_kept = m.device_peak = 8.0 * finest + 8.0 * m.bins;
    return m;
  }
  const std::vector<MsmExtent> levels = msm_level_extents(parameters, box.lower, box.upper);
  m.finest_points = levels[0].volume();
  m.lattice_points = 0.0;
  for (const MsmExtent& l : levels) m.lattice_points += l.volume();
  const std::size_t top = levels.size() - 1;
  const long R = static_cast<long>(std::ceil(2.0 * parameters.cutoff / parameters.spacing));
  // The atoms' copy (32 B each) lives through the solve; anterpolation's buckets add 16 B an
  // atom and two counts per plane.
  const double copy = 32.0 * atoms;
  double peak =
      copy + 16.0 * atoms + 16.0 * static_cast<double>(levels[0].n[2]) + 8.0 * levels[0].volume();
  // Restriction to each level: the finer levels' charges, this one and two temporaries.
  double charges = 8.0 * levels[0].volume();
  for (std::size_t l = 1; l < levels.size(); ++l) {
    const MsmExtent &fine = levels[l - 1], &coarse = levels[l];
    const double temps = 8.0 * (mixed(coarse, fine, fine) + mixed(coarse, coarse, fine));
    charges += 8.0 * coarse.volume();
    peak = std::max(peak, copy + charges + temps);
  }
  // The top level's all-pairs sum, then down the levels: the charges still held, the coarser
  // potential, this level's, the sum's own memory and the prolongation's two temporaries.
  const MsmExtent& t = levels[top];
  peak = std::max(peak, copy + charges + 8.0 * t.volume() +
                            lattice_sum_bytes(t.n, {t.n[0] - 1, t.n[1] - 1, t.n[2] - 1}, threads));
  for (std::size_t l = top; l-- > 0;) {
    const MsmExtent &fine = levels[l], &coarse = levels[l + 1];
    charges = 0.0;
    for (std::size_t k = 0; k <= l; ++k) charges += 8.0 * levels[k].volume();
    const double temps = 8.0 * (mixed(coarse, coarse, fine) + mixed(coarse, fine, fine));
    peak = std::max(peak, copy + charges + 8.0 * coarse.volume() + 8.0 * fine.volume() +
                              lattice_sum_bytes(fine.n, {R, R, R}, threads) + temps);
  }
  // The short-range bins (after the solve): sorted atoms, bin starts and fills, bin of each.
  double weights = 0.0;
  for (int d = 0; d < 3; ++d)
    weights += static_cast<double>(grid.counts[d]) * (8.0 + 8.0 * parameters.order);
  const double bins = 32.0 * atoms + 16.0 * m.bins + 8.0 * atoms;
  const double finest_bytes = 8.0 * levels[0].volume();
  const double rows = 8.0 * static_cast<double>(threads) * static_cast<double>(levels[0].n[0]);
  peak = std::max(peak, copy + finest_bytes + bins + weights);
  m.host_kept = finest_bytes + 32.0 * atoms + 8.0 * m.bins + weights + rows;
  m.host_peak = std::max(peak, m.host_kept);
  // The device (device_lattice.hpp): the cell sort's 112 B an atom, or the lattices' ~23 B a
  // finest point beside the binned atoms; 4 B a bin throughout.
  m.device_peak = std::max(112.0 * atoms + 4.0 * m.finest_points + 4.0 * m.bins,
                           32.0 * atoms + 4.0 * m.bins + 23.0 * m.finest_points);
  return m;
}

std::string msm_too_large(const MsmParameters& parameters, const MsmBox& box, double need,
                          const std::string& what, const std::string& have) {
  const auto bytes = [](double b) {
    return b >= 0x1p63 ? fmt::format("{:.2g} bytes", b) : format_bytes(static_cast<std::size_t>(b));
  };
  return fmt::format(
      "--method msm: {} would need {} ({}) for a lattice over the map and the charged atoms, a "
      "box of {:.4g} x {:.4g} x {:.4g} A (charged atoms from ({:.4g}, {:.4g}, {:.4g}) to "
      "({:.4g}, {:.4g}, {:.4g}) A), but {}; use --method exact (direct summation needs no "
      "lattice), or make the box smaller: a smaller grid, or remove charged atoms far from the "
      "rest (atoms of charge 0 do not count; --center/--spacing place the grid)",
      what, bytes(need), describe(parameters), box.upper[0] - box.lower[0],
      box.upper[1] - box.lower[1], box.upper[2] - box.lower[2], box.atoms_lower[0],
      box.atoms_lower[1], box.atoms_lower[2], box.atoms_upper[0], box.atoms_upper[1],
      box.atoms_upper[2], have);
}

void check_msm_host_memory(const MsmParameters& parameters, const MsmBox& box,
                           const MsmMemory& memory, std::size_t limit) {
  const double need = memory.host_peak;
  if (need > kAbsurdBytes)
    throw UsageError(
        msm_too_large(parameters, box, need, "the lattices", "no machine has that much memory"));
  // The tightest of --memory-limit's share, the memory available now and ulimit -v.
  std::size_t bound = 0;
  std::string have;
  const auto consider = [&](std::size_t bytes, const std::string& text) {
    if (bytes > 0 && (bound == 0 || bytes < bound)) {
      bound = bytes;
      have = text;
    }
  };
  consider(limit, fmt::format("--memory-limit allows {} for this worker", format_bytes(limit)));
  const std::size_t available = available_memory_bytes();
  consider(available, fmt::format("only {} of memory is available now", format_bytes(available)));
  const std::size_t address_space = address_space_left_bytes();
  consider(address_space, fmt::format("the address-space limit (ulimit -v) leaves {}",
                                      format_bytes(address_space)));
  if (bound > 0 && need > static_cast<double>(bound))
    throw UsageError(msm_too_large(parameters, box, need, "the lattices", have));
  log().debug("msm: {:.4g} lattice points ({:.4g} finest), {:.4g} bins: {} at the peak, {} kept",
              memory.lattice_points, memory.finest_points, memory.bins,
              format_bytes(static_cast<std::size_t>(need)),
              format_bytes(static_cast<std::size_t>(memory.host_kept)));
}

}  // namespace dcs
