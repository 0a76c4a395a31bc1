// The fast CPU backend's kernels timed alone, to find where a CPU loses to its
// port limit: the row sweep (row_kernel.hpp's sweep_row) at several block widths (vectors of
// x-points held in registers per block) and the packed row tail (sweep_tail) on its own, on
// staged synthetic atoms, one thread, thread CPU time. Written once as templates on the vector
// type and instantiated by kernel_probe_<isa>.cpp, compiled for that instruction set; the block
// widths the product uses are fast_kernels_<isa>.cpp's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dcs/physics.hpp"
#include "fast_kernels.hpp"
#include "port_limit_kernel.hpp"
#include "row_kernel.hpp"

namespace dcs::bench {

/// r_min^2 in grid units (0.1 Å at a 0.5 Å spacing).
inline constexpr float kProbeMinR2 = 0.04f;

/// Staged atoms of one chunk, as fast_backend.cpp stages them (grid units, charges scaled).
struct ProbeAtoms {
  std::vector<float> ia, neg_fx, q, yz2, iy, neg_fy, iz, neg_fz;
  std::vector<std::uint32_t> near;  ///< atoms with yz2 < the probe's min_r2 (kProbeMinR2)
  cpu_fast::ChunkView view() const { return {ia.data(), neg_fx.data(), q.data(), ia.size()}; }
};

struct ProbeResult {
  std::string what;                 ///< "row, 4 vectors", "tail"
  std::int64_t nx = 0;              ///< row length swept (0 for the tail)
  double pairs = 0.0;               ///< atom-point pairs per second (tail: lanes x atoms per call)
  double ns_per_atom_vector = 0.0;  ///< thread time per atom and vector of pairs
  /// Median over the runs of pairs/s against the per-pair mix (port_limit_kernel.hpp) measured
  /// on this thread just before and just after the run, averaged.
  double share_of_mix = 0.0;
};

/// Runs `run(calls)` (calls repetitions of one kernel call of `pairs_per_call` pairs) 5 times
/// after a calibration to about `seconds` each, the mix measured around each run.
template <class Vec, class Run>
void time_interleaved(Run run, double pairs_per_call, double seconds, ProbeResult& r) {
  long calls = 4;
  std::vector<double> shares;
  for (int pass = 0; pass < 6; ++pass) {
    const double mix_before = pass ? mix_rate<Vec, kMixChainsOf<Vec>>(0.01) : 0.0;
    const double t0 = thread_seconds();
    run(calls);
    const double elapsed = thread_seconds() - t0;
    if (pass == 0) {
      calls = std::max<long>(
          calls, static_cast<long>(static_cast<double>(calls) * seconds / std::max(elapsed, 1e-6)));
      continue;
    }
    const double pairs = static_cast<double>(calls) * pairs_per_call / elapsed;
    r.pairs = std::max(r.pairs, pairs);
    shares.push_back(pairs / (0.5 * (mix_before + mix_rate<Vec, kMixChainsOf<Vec>>(0.01))));
  }
  std::sort(shares.begin(), shares.end());
  r.share_of_mix = shares[shares.size() / 2];
  r.ns_per_atom_vector = 1e9 * Vec::kLanes / r.pairs;
}

/// Pairs/s of sweep_row<Vec, Vectors> over rows of nx points (best of 5 runs of ~seconds).
template <class Vec, int Vectors>
ProbeResult probe_row(const ProbeAtoms& atoms, std::int64_t nx, double seconds) {
  std::vector<float> out(static_cast<std::size_t>(nx), 0.0f);
  cpu_fast::RowArgs args;
  args.atoms = atoms.view();
  args.yz2 = atoms.yz2.data();
  args.near = atoms.near.data();
  args.near_count = atoms.near.size();
  args.nx = nx;
  args.min_r2 = kProbeMinR2;
  args.out_row = out.data();
  ProbeResult r;
  r.what = "row, " + std::to_string(Vectors) + " vectors per block";
  r.nx = nx;
  time_interleaved<Vec>(
      [&](long calls) {
        for (long c = 0; c < calls; ++c) cpu_fast::sweep_row<Vec, Vectors, NewtonRsqrt>(args);
      },
      static_cast<double>(nx) * static_cast<double>(atoms.ia.size()), seconds, r);
  return r;
}

/// Pairs/s of sweep_tail<Vec>: every lane in use, a point from a different row each.
template <class Vec>
ProbeResult probe_tail(const ProbeAtoms& atoms, double seconds) {
  cpu_fast::TailArgs t;
  t.atoms = atoms.view();
  t.iy = atoms.iy.data();
  t.neg_fy = atoms.neg_fy.data();
  t.iz = atoms.iz.data();
  t.neg_fz = atoms.neg_fz.data();
  t.min_r2 = kProbeMinR2;
  float sink[cpu_fast::kMaxLanes] = {};
  for (int lane = 0; lane < Vec::kLanes; ++lane) {
    t.x[lane] = 128.0f;
    t.y[lane] = static_cast<float>(3 + lane);
    t.z[lane] = 40.0f;
    t.out[lane] = &sink[lane];
  }
  t.lanes = Vec::kLanes;
  ProbeResult r;
  r.what = "tail (sweep_tail, all lanes)";
  time_interleaved<Vec>(
      [&](long calls) {
        for (long c = 0; c < calls; ++c) cpu_fast::sweep_tail<Vec, NewtonRsqrt>(t);
      },
      static_cast<double>(Vec::kLanes) * static_cast<double>(atoms.ia.size()), seconds, r);
  return r;
}

using ProbeResults = std::vector<ProbeResult>;

/// The row probes at rows of nx with each of `Widths` vectors per block, in that order, and the
/// tail's where `tail` (it does not depend on nx).
template <class Vec, int... Widths>
ProbeResults probe_kernels(const ProbeAtoms& atoms, std::int64_t nx, double seconds, bool tail) {
  ProbeResults results{probe_row<Vec, Widths>(atoms, nx, seconds)...};
  if (tail) results.push_back(probe_tail<Vec>(atoms, seconds));
  return results;
}

/// probe_kernels on one instruction set at the widths worth probing there: defined in
/// kernel_probe_<isa>.cpp.
ProbeResults probe_kernels_avx2(const ProbeAtoms& atoms, std::int64_t nx, double s, bool tail);
ProbeResults probe_kernels_avx512(const ProbeAtoms& atoms, std::int64_t nx, double s, bool tail);

}  // namespace dcs::bench
