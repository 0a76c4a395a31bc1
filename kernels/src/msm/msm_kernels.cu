// The MSM slab kernel (the cutcp idea): one block per 8 x 8 x 8 tile of map points. The block
// lists the bin rows (z, y) within a of its tile, each row cut to the x-bins within a (whole
// bins only: a bin is skipped only when every atom in it is beyond a of every point of the
// tile, so it would add exactly +0), and stages their atoms in chunks into shared memory as
// float offsets from the tile's first point (computed in double, so they are exact to float
// rounding whatever the box size). Each thread sums the short-range term of its 4 points over
// the atoms in global bin order (bins (z, y, x), atoms in bin order), then adds the finest
// lattice interpolated in double. A point's nonzero terms come in the same order whatever tile,
// slab or device computes it, and tiles sit on a fixed global lattice, so its value is the same
// bits for any slab split and any number of GPUs. No atomics.
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <string>

#include "cuda_check.hpp"
#include "dcs/error.hpp"
#include "launch.hpp"
#include "msm_kernels.hpp"
#include "row_batch.cuh"

namespace dcs::cuda::detail {
namespace {

constexpr int kRowsPerBatch = kMsmThreads;  // bin rows listed per pass, one per thread

/// The distance from [lo, hi] to the bin interval [b0, b0 + side] (0 when they overlap).
__device__ inline double gap(double lo, double hi, double b0, double side) {
  if (b0 > hi) return b0 - hi;
  if (b0 + side < lo) return lo - (b0 + side);
  return 0.0;
}

__device__ inline int clamp_int(long long v, int lo, int hi) {
  return static_cast<int>(v < lo ? lo : v > hi ? hi : v);
}

/// The tile's first point (double) and its box's extent: whole tiles, also past the grid's
/// edge, so the same box for every slab.
struct TileBox {
  double x0, y0, z0;
  double ext_x, ext_y, ext_z;
};

/// The bin rows (z, y) within reach of the tile: y from by0 (rows_y of them), z from bz0, rows
/// in all.
struct BinRows {
  int by0, bz0, rows_y, rows;
};

/// The bin rows within reach of the tile's box, clamped to the bins.
__device__ __forceinline__ BinRows bin_rows(const MsmSlabLaunch& p, const TileBox& box,
                                            double reach, double side) {
  const int by0 = clamp_int(static_cast<long long>(floor((box.y0 - reach - p.bin_lower[1]) / side)),
                            0, p.bins[1] - 1);
  const int by1 =
      clamp_int(static_cast<long long>(floor((box.y0 + box.ext_y + reach - p.bin_lower[1]) / side)),
                0, p.bins[1] - 1);
  const int bz0 = clamp_int(static_cast<long long>(floor((box.z0 - reach - p.bin_lower[2]) / side)),
                            0, p.bins[2] - 1);
  const int bz1 =
      clamp_int(static_cast<long long>(floor((box.z0 + box.ext_z + reach - p.bin_lower[2]) / side)),
                0, p.bins[2] - 1);
  const int rows_y = by1 - by0 + 1;
  return {by0, bz0, rows_y, rows_y * (bz1 - bz0 + 1)};
}

/// Row r's atoms [begin, begin + count) in its x-bins within reach of the tile (left as they
/// are when the row is out of reach).
__device__ __forceinline__ void list_row(const MsmSlabLaunch& p, const TileBox& box,
                                         const BinRows& bins, int r, double reach, double side,
                                         unsigned& begin, unsigned& count) {
  const int by = bins.by0 + r % bins.rows_y, bz = bins.bz0 + r / bins.rows_y;
  const double dy = gap(box.y0, box.y0 + box.ext_y, p.bin_lower[1] + by * side, side);
  const double dz = gap(box.z0, box.z0 + box.ext_z, p.bin_lower[2] + bz * side, side);
  const double d2 = dy * dy + dz * dz;
  if (d2 < reach * reach) {
    const double rx = sqrt(reach * reach - d2);
    const int bx0 = clamp_int(static_cast<long long>(floor((box.x0 - rx - p.bin_lower[0]) / side)),
                              0, p.bins[0] - 1);
    const int bx1 =
        clamp_int(static_cast<long long>(floor((box.x0 + box.ext_x + rx - p.bin_lower[0]) / side)),
                  0, p.bins[0] - 1);
    const long long row = (static_cast<long long>(bz) * p.bins[1] + by) * p.bins[0];
    begin = p.d_bin_start[row + bx0];
    count = p.d_bin_start[row + bx1 + 1] - begin;
  }
}

/// Stages the listed atoms [chunk, chunk + in_chunk) as float offsets from the tile's first
/// point (with their charges) into sm_atoms.
__device__ __forceinline__ void stage_chunk(const MsmSlabLaunch& p, const TileBox& box, int thread,
                                            unsigned chunk, unsigned in_chunk,
                                            const unsigned* sm_row_begin,
                                            const unsigned* sm_row_prefix, float4* sm_atoms) {
  for (unsigned s = thread; s < in_chunk; s += kMsmThreads) {
    const unsigned g = chunk + s;
    const int lo = listed_row<kRowsPerBatch>(sm_row_prefix, g);
    const MsmAtom atom = p.d_atoms[sm_row_begin[lo] + (g - sm_row_prefix[lo])];
    sm_atoms[s] =
        make_float4(static_cast<float>(atom.x - box.x0), static_cast<float>(atom.y - box.y0),
                    static_cast<float>(atom.z - box.z0), static_cast<float>(atom.q));
  }
}

/// This thread's points (offsets px, py, pz[m] from the tile's first point) and what their
/// short-range terms read: the splitting polynomial, a^2, 1/a^2, the clamp. The arrays are the
/// kernel's own (named, not copied: the code ptxas is given stays as it was).
template <int Split>
struct ShortRange {
  float px, py;
  const float (&pz)[kMsmPointsPerThread];
  const float (&poly)[Split + 1];
  float a2, inv_a2, min_r2;
};

/// Adds the short-range terms of the staged atoms [0, in_chunk) to acc, atom by atom.
template <int Split>
__device__ __forceinline__ void add_chunk(float (&acc)[kMsmPointsPerThread],
                                          const ShortRange<Split>& sr, const float4* sm_atoms,
                                          unsigned in_chunk) {
  for (unsigned n = 0; n < in_chunk; ++n) {
    const float4 atom = sm_atoms[n];
    const float dx = atom.x - sr.px, dy = atom.y - sr.py;
    const float dxy2 = fmaf(dx, dx, dy * dy);
#pragma unroll
    for (int m = 0; m < kMsmPointsPerThread; ++m) {
      const float dz = atom.z - sr.pz[m];
      const float r2 = fmaf(dz, dz, dxy2);
      const float t = fmaf(r2, sr.inv_a2, -1.0f);
      float g = sr.poly[Split];
#pragma unroll
      for (int k = Split - 1; k >= 0; --k) g = fmaf(g, t, sr.poly[k]);
      const float term = rsqrtf(fmaxf(r2, sr.min_r2)) - g;
      // Beyond a the term adds +0: the sum is the same bits with or without the atom.
      acc[m] = fmaf(r2 < sr.a2 ? atom.w : 0.0f, term, acc[m]);
    }
  }
}

/// The long range: the finest lattice interpolated in double at this thread's points of the
/// slab, added to their short-range sums acc, times the unit's factor, stored.
__device__ __forceinline__ void store_with_long_range(const MsmSlabLaunch& p, int grid_x,
                                                      int grid_y, int tile_z0,
                                                      const float (&acc)[kMsmPointsPerThread]) {
  const int order = p.order;
  const int bx = p.d_base[0][grid_x], by = p.d_base[1][grid_y];
  const double* wx = p.d_weights[0] + static_cast<long long>(grid_x) * order;
  const double* wy = p.d_weights[1] + static_cast<long long>(grid_y) * order;
  const long long plane = static_cast<long long>(p.nx) * p.ny;
  const long long lattice_plane = static_cast<long long>(p.lattice_n[0]) * p.lattice_n[1];
#pragma unroll
  for (int m = 0; m < kMsmPointsPerThread; ++m) {
    const int grid_z = tile_z0 + static_cast<int>(threadIdx.z) + kMsmThreadsZ * m;
    if (grid_z < p.z_begin || grid_z >= p.z_begin + p.z_count) continue;
    const int bz = p.d_base[2][grid_z];
    const double* wz = p.d_weights[2] + static_cast<long long>(grid_z) * order;
    double lr = 0.0;
    for (int kk = 0; kk < order; ++kk) {
      double plane_sum = 0.0;
      for (int jj = 0; jj < order; ++jj) {
        const double* row = p.d_lattice + (bz + kk) * lattice_plane +
                            static_cast<long long>(by + jj) * p.lattice_n[0] + bx;
        double line = 0.0;
        for (int ii = 0; ii < order; ++ii) line = fma(wx[ii], row[ii], line);
        plane_sum = fma(wy[jj], line, plane_sum);
      }
      lr = fma(wz[kk], plane_sum, lr);
    }
    p.d_out[(grid_z - p.z_begin) * plane + static_cast<long long>(grid_y) * p.nx + grid_x] =
        static_cast<float>(p.factor * (static_cast<double>(acc[m]) + lr));
  }
}

template <int Split>
__global__ void __launch_bounds__(kMsmThreads)
    msm_slab_kernel(const MsmSlabLaunch p, int tile_z_first) {
  __shared__ float4 sm_atoms[kMsmChunkAtoms];
  __shared__ unsigned sm_row_begin[kRowsPerBatch];
  __shared__ unsigned sm_row_prefix[kRowsPerBatch + 1];

  const int thread = threadIdx.x + kMsmTileX * (threadIdx.y + kMsmTileY * threadIdx.z);
  // The tile on the global lattice of tiles and its first point (double).
  const int tile_x0 = blockIdx.x * kMsmTileX;
  const int tile_y0 = blockIdx.y * kMsmTileY;
  const int tile_z0 = (tile_z_first + static_cast<int>(blockIdx.z)) * kMsmTileZ;
  const TileBox box{p.origin[0] + tile_x0 * p.spacing[0], p.origin[1] + tile_y0 * p.spacing[1],
                    p.origin[2] + tile_z0 * p.spacing[2], (kMsmTileX - 1) * p.spacing[0],
                    (kMsmTileY - 1) * p.spacing[1],       (kMsmTileZ - 1) * p.spacing[2]};

  // This thread's points, relative to the tile's first point.
  const int local_x = threadIdx.x, local_y = threadIdx.y;
  const float px = static_cast<float>(local_x * p.spacing[0]);
  const float py = static_cast<float>(local_y * p.spacing[1]);
  float pz[kMsmPointsPerThread];
  float acc[kMsmPointsPerThread];
#pragma unroll
  for (int m = 0; m < kMsmPointsPerThread; ++m) {
    pz[m] = static_cast<float>((threadIdx.z + kMsmThreadsZ * m) * p.spacing[2]);
    acc[m] = 0.0f;
  }
  float poly[Split + 1];
#pragma unroll
  for (int n = 0; n <= Split; ++n) poly[n] = p.poly[n];
  const ShortRange<Split> sr{px, py, pz, poly, p.a2, p.inv_a2, p.min_r2};

  // Bin rows within a of the tile (a small margin keeps the pruning conservative).
  const double a = p.cutoff, side = p.bin_side;
  const double reach = a * (1.0 + 1e-6) + 1e-3;
  const BinRows bins = bin_rows(p, box, reach, side);

  for (int batch = 0; batch < bins.rows; batch += kRowsPerBatch) {
    // Each thread lists one row: its atoms [begin, begin + count) in the x-bins within a.
    const int r = batch + thread;
    unsigned begin = 0, count = 0;
    if (r < bins.rows) list_row(p, box, bins, r, reach, side, begin, count);
    if (thread < kRowsPerBatch) {
      sm_row_begin[thread] = begin;
      sm_row_prefix[thread + 1] = count;
    }
    const unsigned total = prefix_row_counts<kRowsPerBatch>(sm_row_prefix, thread);

    for (unsigned chunk = 0; chunk < total; chunk += kMsmChunkAtoms) {
      const unsigned in_chunk = min(total - chunk, static_cast<unsigned>(kMsmChunkAtoms));
      stage_chunk(p, box, thread, chunk, in_chunk, sm_row_begin, sm_row_prefix, sm_atoms);
      __syncthreads();
      add_chunk(acc, sr, sm_atoms, in_chunk);
      __syncthreads();  // before the next chunk overwrites sm_atoms
    }
    __syncthreads();  // every thread has read `total` before the next batch's rows overwrite it
  }

  const int grid_x = tile_x0 + local_x, grid_y = tile_y0 + local_y;
  if (grid_x >= p.nx || grid_y >= p.ny) return;
  store_with_long_range(p, grid_x, grid_y, tile_z0, acc);
}

template <int Split>
void launch_split(const MsmSlabLaunch& p, dim3 grid, int tile_z_first, StreamView stream) {
  msm_slab_kernel<Split>
      <<<grid, dim3(kMsmTileX, kMsmTileY, kMsmThreadsZ), 0, stream.get()>>>(p, tile_z_first);
}

}  // namespace

void launch_msm_slab(const MsmSlabLaunch& p, StreamView stream) {
  const TileGrid tiles = slab_tile_grid("launch_msm_slab", "CUDA msm", p.nx, p.ny, p.nz, p.z_begin,
                                        p.z_count, dim3(kMsmTileX, kMsmTileY, kMsmTileZ));
  if (p.split < 1 || p.split > 6)
    throw InternalError("launch_msm_slab: splitting degree " + std::to_string(p.split));
  const dim3 grid = tiles.grid;
  const int tile_z_first = tiles.tile_z_first;
  switch (p.split) {  // the polynomial's degree, a compile-time loop bound
    case 1: launch_split<1>(p, grid, tile_z_first, stream); break;
    case 2: launch_split<2>(p, grid, tile_z_first, stream); break;
    case 3: launch_split<3>(p, grid, tile_z_first, stream); break;
    case 4: launch_split<4>(p, grid, tile_z_first, stream); break;
    case 5: launch_split<5>(p, grid, tile_z_first, stream); break;
    default: launch_split<6>(p, grid, tile_z_first, stream); break;
  }
  DCS_CUDA_CHECK_LAUNCH("msm_slab", stream.get());
}

}  // namespace dcs::cuda::detail
