// The periodic potential at map points and at arbitrary points (ewald_kernels.hpp).
//
// Maps: one block per 8 x 8 x 8 tile of points on a fixed global lattice of tiles (msm's slab
// kernel does the same). The block lists the bin rows (z, y) within the cutoff of its tile's box,
// each cut to the x-bins within reach, and stages their images in chunks in shared memory as float
// offsets from the tile's first point (computed in double). Each thread sums q erfc(βr)/r over
// them for its 4 points in global bin order (z, y, x; images in bin order) in float; a second
// kernel adds the PME mesh interpolated in double and the background, point by point. A bin left
// out is one whose every image is beyond the cutoff of every point of the tile, so it would add
// exactly +0: a point's value is the same bits whatever slab, tile row or device computes it. No
// atomics.
//
// Points: one thread per point, wrapped into the cell, the bins within the cutoff in the same
// global order; the skipped atom's home image left out.
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <string>

#include "cuda_check.hpp"
#include "dcs/error.hpp"
#include "ewald_device.cuh"
#include "ewald_kernels.hpp"
#include "launch.hpp"
#include "row_batch.cuh"

namespace dcs::cuda::detail {
namespace {

constexpr int kThreadsZ = 2;
constexpr int kPointsPerThread = kEwaldTileZ / kThreadsZ;
constexpr int kTileThreads = kEwaldTileX * kEwaldTileY * kThreadsZ;  // 128
constexpr int kRowsPerBatch = kTileThreads;
constexpr int kChunkAtoms = 256;
constexpr int kPointThreads = 128;

/// The distance from [lo, hi] to the bin interval [b0, b0 + side] (0 when they overlap).
__device__ inline double gap(double lo, double hi, double b0, double side) {
  if (b0 > hi) return b0 - hi;
  if (b0 + side < lo) return lo - (b0 + side);
  return 0.0;
}

__device__ inline int clamp_bin(double v, int n) {
  const double f = floor(v);
  return f < 0.0 ? 0 : f > n - 1 ? n - 1 : static_cast<int>(f);
}

/// erfc(x), x >= 0: exp(-x²) times a degree-16 polynomial fit of erfcx(x) = exp(x²) erfc(x) on
/// [0, 4.3] (scripts/fit-ewald-erfc.py): absolute error <= 1.0e-7 as evaluated here, against
/// erfcf's 4 ulp (2.4e-7 near 1), in about half of erfcf's instructions. The pair loop spends
/// most of its time here (a warp evaluates it whenever one of its points is inside the
/// cutoff). 4.3 covers β r up to the cutoff for every --ewald-error from 1e-8 (4.21); beyond
/// it (test accuracies only) erfcf.
__device__ __forceinline__ float ewald_erfc(float x) {
  constexpr float kEnd = 4.3f;
  constexpr float c[17] = {1.000000000e+00f, -1.128377676e+00f, 9.999715686e-01f, -7.520195246e-01f,
                           4.989348650e-01f, -2.978312075e-01f, 1.606286764e-01f, -7.741968334e-02f,
                           3.258405626e-02f, -1.162621938e-02f, 3.408950754e-03f, -7.959317882e-04f,
                           1.429847762e-04f, -1.892582259e-05f, 1.730409963e-06f, -9.729666317e-08f,
                           2.529429111e-09f};
  if (x >= kEnd) return erfcf(x);
  float p = c[16];
#pragma unroll
  for (int k = 15; k >= 0; --k) p = fmaf(p, x, c[k]);
  return p * expf(-x * x);
}

/// q erfc(β r) / r with r² clamped at min_r2 (> 0 for map points).
__device__ inline float pair_term(float r2, const RealTerm& t, float min_r2) {
  const float clamped = fmaxf(r2, min_r2);
  const float inverse = rsqrtf(clamped);
  return ewald_erfc(t.beta * clamped * inverse) * inverse;
}

/// Thread d < 3 of a tile: axis d of its first point (box[0]) and of its box's lower (box[1]) and
/// upper (box[2]) corners (whole tiles, also past the grid's edge).
__device__ inline void tile_box(const EwaldSlabLaunch& p, const int tile[3], int d,
                                double box[3][3]) {
  const double first =
      p.origin[d] + tile[0] * p.step[0][d] + tile[1] * p.step[1][d] + tile[2] * p.step[2][d];
  double lower = first, upper = first;
  for (int axis = 0; axis < 3; ++axis) {
    const int last = (axis == 0 ? kEwaldTileX : axis == 1 ? kEwaldTileY : kEwaldTileZ) - 1;
    const double e = last * p.step[axis][d];
    (e < 0.0 ? lower : upper) += e;
  }
  box[0][d] = first;
  box[1][d] = lower;
  box[2][d] = upper;
}

/// The images [begin, begin + count) of bin row (by, bz) in the x-bins within reach of the box
/// [lo, hi]; count 0 when the whole row is out of reach.
__device__ inline void row_span(const EwaldBins& b, const double* lo, const double* hi,
                                double reach, int by, int bz, unsigned& begin, unsigned& count) {
  const double side = b.side;
  const double dy = gap(lo[1], hi[1], b.lower[1] + by * side, side);
  const double dz = gap(lo[2], hi[2], b.lower[2] + bz * side, side);
  const double d2 = dy * dy + dz * dz;
  begin = count = 0;
  if (d2 >= reach * reach) return;
  const double rx = sqrt(reach * reach - d2);
  const int bx0 = clamp_bin((lo[0] - rx - b.lower[0]) / side, b.n[0]);
  const int bx1 = clamp_bin((hi[0] + rx - b.lower[0]) / side, b.n[0]);
  const long long row = (static_cast<long long>(bz) * b.n[1] + by) * b.n[0];
  begin = b.d_start[row + bx0];
  count = b.d_start[row + bx1 + 1] - begin;
}

/// The g-th image listed by a batch of rows (row_begin, inclusive prefix of their counts), as a
/// float offset from p0 and its charge.
__device__ inline float4 listed_image(const EwaldBins& b, const unsigned* row_begin,
                                      const unsigned* row_prefix, unsigned g, const double* p0) {
  const int row_lo = listed_row<kRowsPerBatch>(row_prefix, g);
  const EwaldAtom atom = b.d_atoms[row_begin[row_lo] + (g - row_prefix[row_lo])];
  return make_float4(static_cast<float>(atom.x - p0[0]), static_cast<float>(atom.y - p0[1]),
                     static_cast<float>(atom.z - p0[2]), atom.q);
}

__global__ void __launch_bounds__(kTileThreads, 4)  // 4 blocks: 72 registers, no spills
    ewald_slab_kernel(const EwaldSlabLaunch p, int tile_z_first) {
  __shared__ float4 sm_atoms[kChunkAtoms];
  __shared__ unsigned sm_row_begin[kRowsPerBatch];
  __shared__ unsigned sm_row_prefix[kRowsPerBatch + 1];

  __shared__ double sm_box[3][3];  // the tile's first point, its box's lower and upper corners

  const int thread = threadIdx.x + kEwaldTileX * (threadIdx.y + kEwaldTileY * threadIdx.z);
  const int tile[3] = {static_cast<int>(blockIdx.x) * kEwaldTileX,
                       static_cast<int>(blockIdx.y) * kEwaldTileY,
                       (tile_z_first + static_cast<int>(blockIdx.z)) * kEwaldTileZ};
  if (thread < 3) tile_box(p, tile, thread, sm_box);
  __syncthreads();
  const double* p0 = sm_box[0];
  const double* lo = sm_box[1];
  const double* hi = sm_box[2];
  // This thread's points, as float offsets from the tile's first point.
  float pt[kPointsPerThread][3];
  float acc[kPointsPerThread];
#pragma unroll
  for (int m = 0; m < kPointsPerThread; ++m) {
    const int lz = static_cast<int>(threadIdx.z) + kThreadsZ * m;
    for (int d = 0; d < 3; ++d)
      pt[m][d] = static_cast<float>(threadIdx.x * p.step[0][d] + threadIdx.y * p.step[1][d] +
                                    lz * p.step[2][d]);
    acc[m] = 0.0f;
  }
  const EwaldBins& b = p.bins;
  const double reach = p.term.cutoff * (1.0 + 1e-6) + 1e-3, side = b.side;
  const int by0 = clamp_bin((lo[1] - reach - b.lower[1]) / side, b.n[1]);
  const int by1 = clamp_bin((hi[1] + reach - b.lower[1]) / side, b.n[1]);
  const int bz0 = clamp_bin((lo[2] - reach - b.lower[2]) / side, b.n[2]);
  const int bz1 = clamp_bin((hi[2] + reach - b.lower[2]) / side, b.n[2]);
  const int rows_y = by1 - by0 + 1;
  const int rows = rows_y * (bz1 - bz0 + 1);
  const float cutoff2 = p.term.cutoff2, min_r2 = p.term.min_r2;

  for (int batch = 0; batch < rows; batch += kRowsPerBatch) {
    {  // Each thread lists one row: its images in the x-bins within reach.
      const int r = batch + thread;
      unsigned begin = 0, count = 0;
      if (r < rows) row_span(b, lo, hi, reach, by0 + r % rows_y, bz0 + r / rows_y, begin, count);
      sm_row_begin[thread] = begin;
      sm_row_prefix[thread + 1] = count;
    }
    const unsigned total = prefix_row_counts<kRowsPerBatch>(sm_row_prefix, thread);
    for (unsigned chunk = 0; chunk < total; chunk += kChunkAtoms) {
      const unsigned in_chunk = min(total - chunk, static_cast<unsigned>(kChunkAtoms));
      for (unsigned s = thread; s < in_chunk; s += kTileThreads)
        sm_atoms[s] = listed_image(b, sm_row_begin, sm_row_prefix, chunk + s, p0);
      __syncthreads();
      for (unsigned a = 0; a < in_chunk; ++a) {
        const float4 atom = sm_atoms[a];
#pragma unroll
        for (int m = 0; m < kPointsPerThread; ++m) {
          const float dx = atom.x - pt[m][0], dy = atom.y - pt[m][1], dz = atom.z - pt[m][2];
          const float r2 = fmaf(dz, dz, fmaf(dy, dy, dx * dx));
          // Beyond the cutoff nothing is added (erfc skipped): the same bits with or without
          // the image, so the tile's pruning never changes a value.
          if (r2 < cutoff2) acc[m] = fmaf(atom.w, pair_term(r2, p.term, min_r2), acc[m]);
        }
      }
      __syncthreads();
    }
    __syncthreads();
  }

  // The real-space sums, in float; reciprocal_kernel completes each point.
  const int gx = static_cast<int>(blockIdx.x) * kEwaldTileX + static_cast<int>(threadIdx.x);
  const int gy = static_cast<int>(blockIdx.y) * kEwaldTileY + static_cast<int>(threadIdx.y);
  if (gx >= p.nx || gy >= p.ny) return;
  const long long plane = static_cast<long long>(p.nx) * p.ny;
#pragma unroll
  for (int m = 0; m < kPointsPerThread; ++m) {
    const int gz = (tile_z_first + static_cast<int>(blockIdx.z)) * kEwaldTileZ +
                   static_cast<int>(threadIdx.z) + kThreadsZ * m;
    if (gz < p.z_begin || gz >= p.z_begin + p.z_count) continue;
    p.d_out[(gz - p.z_begin) * plane + static_cast<long long>(gy) * p.nx + gx] = acc[m];
  }
}

/// Each point of the slab: factor (real + reciprocal + background), the real-space float sum read
/// from d_out, the PME mesh interpolated and the rest added in double (one rounding to float).
template <int Order>
__global__ void __launch_bounds__(kPointThreads) reciprocal_kernel(const EwaldSlabLaunch p) {
  const long long plane = static_cast<long long>(p.nx) * p.ny;
  const long long n = plane * p.z_count;
  const long long index = blockIdx.x * static_cast<long long>(kPointThreads) + threadIdx.x;
  if (index >= n) return;
  const int gx = static_cast<int>(index % p.nx);
  const int gy = static_cast<int>((index / p.nx) % p.ny);
  const int gz = p.z_begin + static_cast<int>(index / plane);
  double r[3];
  for (int d = 0; d < 3; ++d)
    r[d] = p.origin[d] + gx * p.step[0][d] + gy * p.step[1][d] + gz * p.step[2][d];
  const double rec = pme_potential<Order>(p.pme, r[0], r[1], r[2]);
  p.d_out[index] =
      static_cast<float>(p.factor * (static_cast<double>(p.d_out[index]) + rec + p.background));
}

__global__ void __launch_bounds__(kPointThreads) ewald_points_kernel(const EwaldPointsLaunch p) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kPointThreads) + threadIdx.x;
  if (i >= p.n) return;
  const std::uint32_t skip = p.d_skip != nullptr ? p.d_skip[i] : kGhost;
  double s[3], h[3];
  wrapped_fractional(p.pme.cell, p.d_points[3 * i], p.d_points[3 * i + 1], p.d_points[3 * i + 2],
                     s);
  const int home[3] = {0, 0, 0};
  to_cartesian(p.pme.cell, s, home, h);
  const EwaldBins& b = p.bins;
  const double reach = p.term.cutoff * (1.0 + 1e-6) + 1e-3;
  int first[3], last[3];
  for (int d = 0; d < 3; ++d) {
    first[d] = clamp_bin((h[d] - reach - b.lower[d]) / b.side, b.n[d]);
    last[d] = clamp_bin((h[d] + reach - b.lower[d]) / b.side, b.n[d]);
  }
  const float min_r2 = skip == kGhost ? p.term.min_r2 : 0.0f;
  float acc = 0.0f;
  for (int bz = first[2]; bz <= last[2]; ++bz)
    for (int by = first[1]; by <= last[1]; ++by) {
      const long long row = (static_cast<long long>(bz) * b.n[1] + by) * b.n[0];
      const unsigned end = b.d_start[row + last[0] + 1];
      for (unsigned j = b.d_start[row + first[0]]; j < end; ++j) {
        const EwaldAtom atom = b.d_atoms[j];
        if (skip != kGhost && atom.own == skip) continue;
        const float dx = static_cast<float>(atom.x - h[0]);
        const float dy = static_cast<float>(atom.y - h[1]);
        const float dz = static_cast<float>(atom.z - h[2]);
        const float r2 = fmaf(dz, dz, fmaf(dy, dy, dx * dx));
        if (r2 < p.term.cutoff2) acc = fmaf(atom.q, pair_term(r2, p.term, min_r2), acc);
      }
    }
  p.d_out[i] = acc;
}

/// Each point: factor (real + reciprocal + background + self term at an atom), in double.
template <int Order>
__global__ void __launch_bounds__(kPointThreads)
    points_reciprocal_kernel(const EwaldPointsLaunch p) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kPointThreads) + threadIdx.x;
  if (i >= p.n) return;
  const std::uint32_t skip = p.d_skip != nullptr ? p.d_skip[i] : kGhost;
  double value =
      static_cast<double>(p.d_out[i]) +
      pme_potential<Order>(p.pme, p.d_points[3 * i], p.d_points[3 * i + 1], p.d_points[3 * i + 2]) +
      p.background;
  if (skip != kGhost) value += p.self * p.d_charges[skip];
  p.d_out[i] = static_cast<float>(p.factor * value);
}

}  // namespace

void launch_ewald_slab(const EwaldSlabLaunch& p, StreamView stream) {
  const TileGrid tiles =
      slab_tile_grid("launch_ewald_slab", "CUDA ewald", p.nx, p.ny, p.nz, p.z_begin, p.z_count,
                     dim3(kEwaldTileX, kEwaldTileY, kEwaldTileZ));
  ewald_slab_kernel<<<tiles.grid, dim3(kEwaldTileX, kEwaldTileY, kThreadsZ), 0, stream.get()>>>(
      p, tiles.tile_z_first);
  DCS_CUDA_CHECK_LAUNCH("ewald_slab", stream.get());
  const long long points = static_cast<long long>(p.nx) * p.ny * p.z_count;
  const auto blocks = static_cast<unsigned>((points + kPointThreads - 1) / kPointThreads);
  with_order(p.pme.order, [&]<int Order>() {
    reciprocal_kernel<Order><<<blocks, kPointThreads, 0, stream.get()>>>(p);
  });
  DCS_CUDA_CHECK_LAUNCH("ewald_reciprocal", stream.get());
}

void launch_ewald_points(const EwaldPointsLaunch& p, StreamView stream) {
  if (p.n == 0) return;
  const auto blocks = static_cast<unsigned>((p.n + kPointThreads - 1) / kPointThreads);
  ewald_points_kernel<<<blocks, kPointThreads, 0, stream.get()>>>(p);
  DCS_CUDA_CHECK_LAUNCH("ewald_points", stream.get());
  with_order(p.pme.order, [&]<int Order>() {
    points_reciprocal_kernel<Order><<<blocks, kPointThreads, 0, stream.get()>>>(p);
  });
  DCS_CUDA_CHECK_LAUNCH("ewald_points_reciprocal", stream.get());
}

}  // namespace dcs::cuda::detail
