// The float64 reference at points on a device (reference_kernel.hpp).
//
// One block of kReferenceThreads threads per kReferencePoints consecutive points. Thread t sums,
// for each of the block's points, the atoms t, t + T, t + 2T, ... (T = kReferenceThreads) in
// that order into its own double; the block then adds the T partial sums of each point in a
// fixed binary tree in shared memory (partial[t] += partial[t + s] for s = T/2, ..., 1) and
// multiplies by the factor. No atomics and nothing that depends on the device, the grid of
// blocks or the other points of a call: a value is the same bits on every run, for any split of
// the points into calls, and on every GPU this binary runs on (IEEE double arithmetic; exp2 is
// libdevice's, the same code everywhere).
//
// The pair term is dcs::add_coulomb_term in double, the one the CPU reference calls: r^2 clamped
// at min_distance^2 exactly as there (NaN in, NaN out), 1/sqrt as 1.0 / sqrt(x) with IEEE sqrt
// and division (double precision has no approximate forms), exp(-kappa r) as exp2. This file is
// compiled with -fmad=false (sources.cmake), so that r^2 and q/r + sum round as on an x86 CPU
// (no FMA there): each term is the CPU's to the bit (to exp2's last ulp for Debye-Hueckel),
// a point on or near an atom is clamped exactly when the CPU clamps it, and the two results
// differ only by the order of the additions.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda_check.hpp"
#include "dcs/parallel.hpp"
#include "device_buffer.hpp"
#include "reference/reference_kernel.hpp"

namespace dcs::cuda::detail {
namespace {

/// Points per launch: bounds the device memory of a call with very many points (--validate on
/// a small system compares every grid point); a multiple of kReferencePoints, and values do not
/// depend on it.
constexpr std::size_t kPointsPerLaunch = std::size_t{1} << 22;
static_assert(kPointsPerLaunch % kReferencePoints == 0);

template <class Model>
__global__ void __launch_bounds__(kReferenceThreads)
    reference_kernel(const ReferenceAtom* __restrict__ atoms, std::size_t atom_count,
                     const double* __restrict__ points, std::size_t n, double min_r2, double factor,
                     Model model, double* __restrict__ out) {
  __shared__ double partial[kReferencePoints][kReferenceThreads];
  const int t = static_cast<int>(threadIdx.x);
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kReferencePoints;
  double px[kReferencePoints], py[kReferencePoints], pz[kReferencePoints];
  double sum[kReferencePoints];
#pragma unroll
  for (int p = 0; p < kReferencePoints; ++p) {
    // The last block's missing points repeat its last point (computed, never written).
    const std::size_t mine = first + static_cast<std::size_t>(p);
    const std::size_t i = mine < n ? mine : n - 1;
    px[p] = points[3 * i];
    py[p] = points[3 * i + 1];
    pz[p] = points[3 * i + 2];
    sum[p] = 0.0;
  }
  for (std::size_t a = static_cast<std::size_t>(t); a < atom_count; a += kReferenceThreads) {
    const ReferenceAtom atom = atoms[a];
#pragma unroll
    for (int p = 0; p < kReferencePoints; ++p) {
      // point - atom, squared and added left to right: the CPU reference's expression.
      const double dx = px[p] - atom.x;
      const double dy = py[p] - atom.y;
      const double dz = pz[p] - atom.z;
      sum[p] = add_coulomb_term(sum[p], atom.q, dx * dx + dy * dy + dz * dz, min_r2,
                                HardwareRsqrt{}, model);
    }
  }
#pragma unroll
  for (int p = 0; p < kReferencePoints; ++p) partial[p][t] = sum[p];
  __syncthreads();
#pragma unroll
  for (int s = kReferenceThreads / 2; s > 0; s /= 2) {
    if (t < s) {
#pragma unroll
      for (int p = 0; p < kReferencePoints; ++p) partial[p][t] += partial[p][t + s];
    }
    __syncthreads();
  }
  if (t < kReferencePoints && first + static_cast<std::size_t>(t) < n)
    out[first + static_cast<std::size_t>(t)] = factor * partial[t][0];
}

struct Launch {
  const ReferenceAtom* atoms;
  std::size_t atom_count;
  const double* points;
  std::size_t n;
  double min_r2;
  double factor;
  double* out;
};

template <class Model>
void enqueue(const Launch& l, Model model, StreamView stream) {
  const auto blocks = static_cast<unsigned>((l.n + kReferencePoints - 1) /
                                            static_cast<std::size_t>(kReferencePoints));
  reference_kernel<Model><<<blocks, kReferenceThreads, 0, stream.get()>>>(
      l.atoms, l.atom_count, l.points, l.n, l.min_r2, l.factor, model, l.out);
  DCS_CUDA_CHECK_LAUNCH("reference", stream.get());
}

}  // namespace

void reference_points_on_device(const System& system, const Physics& physics, const Vec3* points,
                                std::size_t n, double* out, StreamView stream) {
  if (n == 0) return;
  static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 is three packed doubles");
  std::vector<ReferenceAtom> atoms(system.atoms.size());
  parallel_for(atoms.size(), 0, [&](std::size_t begin, std::size_t end) {
    for (std::size_t a = begin; a < end; ++a) {
      const Atom& atom = system.atoms[a];
      atoms[a] = {atom.position[0], atom.position[1], atom.position[2], atom.charge};
    }
  });
  DeviceBuffer<ReferenceAtom> d_atoms(atoms.size());
  d_atoms.upload(atoms.data(), atoms.size(), stream);
  const std::size_t per_launch = std::min(n, kPointsPerLaunch);
  DeviceBuffer<double> d_points(3 * per_launch);
  DeviceBuffer<double> d_out(per_launch);

  Launch launch{d_atoms.data(), atoms.size(), d_points.data(), 0, 0.0, 0.0, d_out.data()};
  launch.min_r2 = physics.min_distance * physics.min_distance;
  launch.factor = coulomb_factor(physics);
  const PairTerm term = pair_term(physics);
  for (std::size_t begin = 0; begin < n; begin += per_launch) {
    launch.n = std::min(per_launch, n - begin);
    d_points.upload(points[begin].data(), 3 * launch.n, stream);
    switch (term.kind) {
      case PairKind::kCoulomb: enqueue(launch, CoulombPair{}, stream); break;
      case PairKind::kInverseSquare: enqueue(launch, InverseSquarePair{}, stream); break;
      case PairKind::kScreened:
        enqueue(launch, ScreenedPair<double>{screened_exponent_scale(term.kappa)}, stream);
        break;
    }
    d_out.download(out + begin, launch.n, stream);
    stream.synchronize();  // the pageable copies are done; the buffers are reused
  }
}

}  // namespace dcs::cuda::detail
