// The fast CPU backend's kernels timed alone (issue 12 item 2), to find where a CPU loses to its
// port limit: the row sweep (row_kernel.hpp's sweep_row) at several block widths (vectors of
// x-points held in registers per block) and the packed row tail (sweep_tail) on its own, on
// staged synthetic atoms, one thread, thread CPU time. Written once as templates on the vector
// type and instantiated by kernel_probe_<isa>.cpp, compiled for that instruction set; the block
// widths the product uses are fast_kernels_<isa>.cpp's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dcs/physics.hpp"
#include "fast_kernels.hpp"
#include "port_limit_kernel.hpp"
#include "row_kernel.hpp"

namespace dcs::bench {

/// Staged atoms of one chunk, as fast_backend.cpp stages them (grid units, charges scaled).
struct ProbeAtoms {
  std::vector<float> ia, neg_fx, q, yz2, iy, neg_fy, iz, neg_fz;
  cpu_fast::ChunkView view() const { return {ia.data(), neg_fx.data(), q.data(), ia.size()}; }
};

struct ProbeResult {
  std::string what;      ///< "row, 4 vectors", "tail"
  std::int64_t nx = 0;   ///< row length swept (0 for the tail)
  double pairs = 0.0;    ///< atom-point pairs per second (tail: lanes x atoms per call)
  double ns_per_atom_vector = 0.0;  ///< thread time per atom and vector of pairs
};

/// Pairs/s of sweep_row<Vec, Vectors> over rows of nx points (best of 5 runs of ~seconds).
template <class Vec, int Vectors>
ProbeResult probe_row(const ProbeAtoms& atoms, std::int64_t nx, double seconds) {
  std::vector<float> out(static_cast<std::size_t>(nx), 0.0f);
  cpu_fast::RowArgs args;
  args.atoms = atoms.view();
  args.yz2 = atoms.yz2.data();
  args.nx = nx;
  args.min_r2 = 0.04f;
  args.out_row = out.data();
  double best = 0.0;
  long calls = 4;
  for (int run = 0; run < 6; ++run) {
    const double t0 = thread_seconds();
    for (long c = 0; c < calls; ++c) cpu_fast::sweep_row<Vec, Vectors, NewtonRsqrt>(args);
    const double elapsed = thread_seconds() - t0;
    if (run == 0) {
      calls = std::max<long>(calls, static_cast<long>(static_cast<double>(calls) * seconds / std::max(elapsed, 1e-6)));
      continue;
    }
    best = std::max(best, static_cast<double>(calls) * static_cast<double>(nx) *
                              static_cast<double>(atoms.ia.size()) / elapsed);
  }
  ProbeResult r;
  r.what = "row, " + std::to_string(Vectors) + " vectors per block";
  r.nx = nx;
  r.pairs = best;
  r.ns_per_atom_vector = 1e9 * Vec::kLanes / best;
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
  t.min_r2 = 0.04f;
  float sink[cpu_fast::kMaxLanes] = {};
  for (int lane = 0; lane < Vec::kLanes; ++lane) {
    t.x[lane] = 128.0f;
    t.y[lane] = static_cast<float>(3 + lane);
    t.z[lane] = 40.0f;
    t.out[lane] = &sink[lane];
  }
  t.lanes = Vec::kLanes;
  double best = 0.0;
  long calls = 4;
  for (int run = 0; run < 6; ++run) {
    const double t0 = thread_seconds();
    for (long c = 0; c < calls; ++c) cpu_fast::sweep_tail<Vec, NewtonRsqrt>(t);
    const double elapsed = thread_seconds() - t0;
    if (run == 0) {
      calls = std::max<long>(calls, static_cast<long>(static_cast<double>(calls) * seconds / std::max(elapsed, 1e-6)));
      continue;
    }
    best = std::max(best, static_cast<double>(calls) * Vec::kLanes *
                              static_cast<double>(atoms.ia.size()) / elapsed);
  }
  ProbeResult r;
  r.what = "tail (sweep_tail, all lanes)";
  r.pairs = best;
  r.ns_per_atom_vector = 1e9 * Vec::kLanes / best;
  return r;
}

/// Every probe of one instruction set (defined in kernel_probe_<isa>.cpp).
std::vector<ProbeResult> probe_kernels_avx2(const ProbeAtoms& atoms, std::int64_t nx, double seconds);
std::vector<ProbeResult> probe_kernels_avx512(const ProbeAtoms& atoms, std::int64_t nx, double seconds);

}  // namespace dcs::bench
