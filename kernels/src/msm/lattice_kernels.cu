// The MSM lattice kernels (lattice_kernels.hpp): anterpolation, the two-scale transfers and the
// lattice sums, in double. Each output value belongs to one thread, which sums its terms in an
// order fixed by the lattice geometry alone; no atomics, no shared partial sums.
#include <cuda_runtime.h>

#include <string>

#include "cuda_check.hpp"
#include "dcs/error.hpp"
#include "lattice_kernels.hpp"

namespace dcs::cuda::detail {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

/// The C1 basis Phi of order 4 or 6 (libdcs/src/msm/splitting.cpp Basis::phi, the same
/// polynomials; the divisions by 12 and 24 are multiplications here, ~1 ulp apart, so that the
/// kernel needs no division subroutine).
template <int Order>
__device__ inline double phi(double t) {
  t = fabs(t);
  if (Order == 4) {
    if (t <= 1.0) return (1.0 - t) * (1.0 + t - 1.5 * t * t);
    if (t <= 2.0) return -0.5 * (t - 1.0) * (2.0 - t) * (2.0 - t);
    return 0.0;
  }
  if (t <= 1.0) return (1.0 - t * t) * (2.0 - t) * (6.0 + 3.0 * t - 5.0 * t * t) * (1.0 / 12.0);
  if (t <= 2.0)
    return -(t - 1.0) * (2.0 - t) * (3.0 - t) * (4.0 + 9.0 * t - 5.0 * t * t) * (1.0 / 24.0);
  if (t <= 3.0) return (t - 1.0) * (t - 2.0) * (3.0 - t) * (3.0 - t) * (4.0 - t) * (1.0 / 24.0);
  return 0.0;
}

/// One thread per lattice point m: the atoms of cells c with m - s <= c <= m + s - 1 per axis
/// (those whose stencil floor(u) - s + 1 .. floor(u) + s holds m), rows (cz, cy) in order, each
/// row's cells contiguous in the sorted atoms.
template <int Order>
__global__ void __launch_bounds__(kThreads)
    anterpolate_kernel(const MsmAtom* __restrict__ atoms, const std::uint32_t* __restrict__ start,
                       int cells_x, int cells_y, int cells_z, LatticeExtent q,
                       double* __restrict__ out) {
  constexpr int s = Order / 2;
  const std::size_t index = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x;
  if (index >= q.points()) return;
  const int ix = static_cast<int>(index % q.n[0]);
  const int iy = static_cast<int>((index / q.n[0]) % q.n[1]);
  const int iz = static_cast<int>(index / (static_cast<std::size_t>(q.n[0]) * q.n[1]));
  const int mx = q.lo[0] + ix, my = q.lo[1] + iy, mz = q.lo[2] + iz;
  const int cx0 = max(0, mx - s), cx1 = min(cells_x - 1, mx + s - 1);
  const int cy0 = max(0, my - s), cy1 = min(cells_y - 1, my + s - 1);
  const int cz0 = max(0, mz - s), cz1 = min(cells_z - 1, mz + s - 1);
  double sum = 0.0;
  if (cx0 <= cx1) {
    for (int cz = cz0; cz <= cz1; ++cz)
      for (int cy = cy0; cy <= cy1; ++cy) {
        const long long row = (static_cast<long long>(cz) * cells_y + cy) * cells_x;
        const std::uint32_t end = start[row + cx1 + 1];
        for (std::uint32_t o = start[row + cx0]; o < end; ++o) {
          const MsmAtom a = atoms[o];
          // The CPU's product order: q Phi_z, then Phi_y, then Phi_x.
          const double qyz = a.q * phi<Order>(a.z - mz) * phi<Order>(a.y - my);
          sum = fma(qyz, phi<Order>(a.x - mx), sum);
        }
      }
  }
  out[index] = sum;
}

/// One thread per output point; the line along Axis as in the CPU's transfer_axis. Axis and
/// Reach are compile-time, so the loops unroll and J stays in registers. Prolongation visits
/// the coarse m in increasing order, as the CPU does: k = n - 2m from +Reach down to -Reach.
template <int Axis, int Reach, bool Prolong>
__global__ void __launch_bounds__(kThreads)
    transfer_kernel(TransferWeights w, LatticeExtent in, const double* __restrict__ d_in,
                    LatticeExtent out, double* __restrict__ d_out) {
  const std::size_t index = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x;
  if (index >= out.points()) return;
  const int x = static_cast<int>(index % out.n[0]);
  const int y = static_cast<int>((index / out.n[0]) % out.n[1]);
  const int z = static_cast<int>(index / (static_cast<std::size_t>(out.n[0]) * out.n[1]));
  // This line's first input point and the input's stride along the axis.
  const long long line = Axis == 0   ? (static_cast<long long>(z) * in.n[1] + y) * in.n[0]
                         : Axis == 1 ? static_cast<long long>(z) * in.n[1] * in.n[0] + x
                                     : static_cast<long long>(y) * in.n[0] + x;
  const long long stride = Axis == 0   ? 1
                           : Axis == 1 ? in.n[0]
                                       : static_cast<long long>(in.n[0]) * in.n[1];
  const int o = Axis == 0 ? x : Axis == 1 ? y : z;
  const int position = out.lo[Axis] + o;
  const int n_in = in.n[Axis], lo_in = in.lo[Axis];
  double sum = 0.0;
  if (!Prolong) {
#pragma unroll
    for (int k = -Reach; k <= Reach; ++k) {
      const int f = 2 * position + k - lo_in;
      if (f >= 0 && f < n_in) sum = fma(w.J[k + Reach], d_in[line + f * stride], sum);
    }
    d_out[index] = sum;
  } else {
#pragma unroll
    for (int k = Reach; k >= -Reach; --k) {
      if (((position - k) & 1) != 0) continue;
      const int ci = (position - k) / 2 - lo_in;  // exact: position - k is even
      if (ci >= 0 && ci < n_in) sum = fma(w.J[k + Reach], d_in[line + ci * stride], sum);
    }
    d_out[index] += sum;
  }
}

template <int Reach, bool Prolong>
void launch_transfer(int axis, const TransferWeights& w, const LatticeExtent& in,
                     const double* d_in, const LatticeExtent& out, double* d_out,
                     StreamView stream) {
  const unsigned blocks = blocks_for(out.points());
  if (axis == 0)
    transfer_kernel<0, Reach, Prolong>
        <<<blocks, kThreads, 0, stream.get()>>>(w, in, d_in, out, d_out);
  else if (axis == 1)
    transfer_kernel<1, Reach, Prolong>
        <<<blocks, kThreads, 0, stream.get()>>>(w, in, d_in, out, d_out);
  else
    transfer_kernel<2, Reach, Prolong>
        <<<blocks, kThreads, 0, stream.get()>>>(w, in, d_in, out, d_out);
}

/// One thread per output point, every tap of the stencil inside the lattice, (dz, dy, dx) order.
__global__ void __launch_bounds__(kThreads)
    direct_sum_kernel(LatticeExtent ext, const double* __restrict__ q,
                      const double* __restrict__ by_d2, int rx, int ry, int rz, double scale,
                      double* __restrict__ e) {
  const std::size_t index = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x;
  if (index >= ext.points()) return;
  const int nx = ext.n[0], ny = ext.n[1], nz = ext.n[2];
  const int x = static_cast<int>(index % nx);
  const int y = static_cast<int>((index / nx) % ny);
  const int z = static_cast<int>(index / (static_cast<std::size_t>(nx) * ny));
  double sum = 0.0;
  for (int dz = max(-rz, -z); dz <= min(rz, nz - 1 - z); ++dz)
    for (int dy = max(-ry, -y); dy <= min(ry, ny - 1 - y); ++dy) {
      const double* row = q + (static_cast<long long>(z + dz) * ny + (y + dy)) * nx + x;
      for (int dx = max(-rx, -x); dx <= min(rx, nx - 1 - x); ++dx)
        sum = fma(by_d2[dx * dx + dy * dy + dz * dz], row[dx], sum);
    }
  e[index] = scale * sum;
}

// The tiled sum's block: 64 x 8 output columns (32 x 8 threads, each x and x + 32) of 8 planes.
constexpr int kTileX = 64, kTileY = 8, kTileZ = 8, kThreadsX = 32;

std::size_t tiled_shared_bytes(int R) {
  const std::size_t patch = static_cast<std::size_t>(kTileX + 2 * R) * (kTileY + 2 * R);
  const std::size_t table = 3 * static_cast<std::size_t>(R) * R + 1;
  const std::size_t span = static_cast<std::size_t>(R + 1) * (R + 1);
  return (patch + table) * sizeof(double) + span * sizeof(int);
}

/// Marches the input planes zq that reach the block's 8 output planes: the plane's patch
/// (tile + R on each side in x and y, zeros outside the lattice) goes to shared memory, then
/// each thread adds K(dx, dy, zq - z) q(x + dx, y + dy, zq) to its 2 x 8 points, dy and dx in
/// increasing order. Per point the terms come in (dz, dy, dx) order, as in direct_sum_kernel;
/// the taps it leaves out are zeros of K (outside the plane's span for the block's nearest
/// output plane, MsmLatticePlan::cutoff_span) or zero charges, which add exactly +0.
__global__ void __launch_bounds__(kThreadsX* kTileY)
    tiled_sum_kernel(LatticeExtent ext, const double* __restrict__ q,
                     const double* __restrict__ by_d2, const int* __restrict__ span, int R,
                     double scale, double* __restrict__ e) {
  extern __shared__ double sm[];
  const int pw = kTileX + 2 * R, ph = kTileY + 2 * R;
  const int table = 3 * R * R + 1;
  double* sm_patch = sm;
  double* sm_kernel = sm + pw * ph;
  int* sm_span = reinterpret_cast<int*>(sm_kernel + table);
  const int thread = threadIdx.x + kThreadsX * threadIdx.y;
  constexpr int kBlock = kThreadsX * kTileY;
  for (int t = thread; t < table; t += kBlock) sm_kernel[t] = by_d2[t];
  for (int t = thread; t < (R + 1) * (R + 1); t += kBlock) sm_span[t] = span[t];

  const int nx = ext.n[0], ny = ext.n[1], nz = ext.n[2];
  const int i0 = blockIdx.x * kTileX, j0 = blockIdx.y * kTileY, k0 = blockIdx.z * kTileZ;
  const int tx = threadIdx.x, ty = threadIdx.y;
  double acc0[kTileZ], acc1[kTileZ];
#pragma unroll
  for (int k = 0; k < kTileZ; ++k) acc0[k] = acc1[k] = 0.0;

  const int zq_first = max(0, k0 - R), zq_last = min(nz - 1, k0 + kTileZ - 1 + R);
  for (int zq = zq_first; zq <= zq_last; ++zq) {
    __syncthreads();  // the previous plane's patch is no longer read (and the tables are in)
    const double* plane = q + static_cast<long long>(zq) * nx * ny;
    for (int p = thread; p < pw * ph; p += kBlock) {
      const int gx = i0 - R + p % pw, gy = j0 - R + p / pw;
      sm_patch[p] = gx >= 0 && gx < nx && gy >= 0 && gy < ny
                        ? plane[static_cast<long long>(gy) * nx + gx]
                        : 0.0;
    }
    __syncthreads();
    // The nearest of the block's output planes; rows beyond its span are zero for every plane.
    const int dz_min = zq < k0 ? k0 - zq : zq > k0 + kTileZ - 1 ? zq - (k0 + kTileZ - 1) : 0;
    const int* row_span = sm_span + dz_min * (R + 1);
    for (int dy = -R; dy <= R; ++dy) {
      const int ex = row_span[dy < 0 ? -dy : dy];
      if (ex < 0) continue;
      const double* row = sm_patch + (ty + dy + R) * pw + tx + R;
      for (int dx = -ex; dx <= ex; ++dx) {
        const double v0 = row[dx], v1 = row[dx + kThreadsX];
        const int d2xy = dx * dx + dy * dy;
#pragma unroll
        for (int k = 0; k < kTileZ; ++k) {
          const int dz = zq - k0 - k;
          if (dz >= -R && dz <= R) {
            const double kv = sm_kernel[d2xy + dz * dz];
            acc0[k] = fma(kv, v0, acc0[k]);
            acc1[k] = fma(kv, v1, acc1[k]);
          }
        }
      }
    }
  }
  const int y = j0 + ty;
  if (y >= ny) return;
#pragma unroll
  for (int k = 0; k < kTileZ; ++k) {
    const int z = k0 + k;
    if (z >= nz) break;
    double* out = e + (static_cast<long long>(z) * ny + y) * nx;
    if (i0 + tx < nx) out[i0 + tx] = scale * acc0[k];
    if (i0 + tx + kThreadsX < nx) out[i0 + tx + kThreadsX] = scale * acc1[k];
  }
}

}  // namespace

void launch_msm_anterpolate(const MsmAtom* d_cell_atoms, const std::uint32_t* d_cell_start,
                            const int cells[3], const LatticeExtent& q, int order, double* d_q,
                            StreamView stream) {
  if (q.points() == 0) return;
  if (order == 4)
    anterpolate_kernel<4><<<blocks_for(q.points()), kThreads, 0, stream.get()>>>(
        d_cell_atoms, d_cell_start, cells[0], cells[1], cells[2], q, d_q);
  else if (order == 6)
    anterpolate_kernel<6><<<blocks_for(q.points()), kThreads, 0, stream.get()>>>(
        d_cell_atoms, d_cell_start, cells[0], cells[1], cells[2], q, d_q);
  else throw InternalError("launch_msm_anterpolate: order " + std::to_string(order));
  DCS_CUDA_CHECK_LAUNCH("msm_anterpolate", stream.get());
}

void launch_msm_transfer(bool prolong, int axis, const TransferWeights& weights,
                         const LatticeExtent& in, const double* d_in, const LatticeExtent& out,
                         double* d_out, StreamView stream) {
  if (axis < 0 || axis > 2 || (weights.reach != 3 && weights.reach != 5))
    throw InternalError("launch_msm_transfer: axis or reach (3: cubic, 5: quintic) out of range");
  for (int d = 0; d < 3; ++d)
    if (d != axis && (in.n[d] != out.n[d] || in.lo[d] != out.lo[d]))
      throw InternalError("launch_msm_transfer: extents differ off the axis");
  if (out.points() == 0) return;
  if (weights.reach == 3) {
    if (prolong) launch_transfer<3, true>(axis, weights, in, d_in, out, d_out, stream);
    else launch_transfer<3, false>(axis, weights, in, d_in, out, d_out, stream);
  } else {
    if (prolong) launch_transfer<5, true>(axis, weights, in, d_in, out, d_out, stream);
    else launch_transfer<5, false>(axis, weights, in, d_in, out, d_out, stream);
  }
  DCS_CUDA_CHECK_LAUNCH(prolong ? "msm_prolong" : "msm_restrict", stream.get());
}

void launch_msm_direct_sum(const LatticeExtent& extent, const double* d_q, const double* d_by_d2,
                           const int radius[3], double scale, double* d_e, StreamView stream) {
  if (extent.points() == 0) return;
  direct_sum_kernel<<<blocks_for(extent.points()), kThreads, 0, stream.get()>>>(
      extent, d_q, d_by_d2, radius[0], radius[1], radius[2], scale, d_e);
  DCS_CUDA_CHECK_LAUNCH("msm_direct_sum", stream.get());
}

bool msm_tiled_sum_fits(int R) {
  if (R < 1 || R > kMaxTiledRadius) return false;
  int device = 0, optin = 0;
  DCS_CUDA_CHECK(cudaGetDevice(&device));
  DCS_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return tiled_shared_bytes(R) <= static_cast<std::size_t>(optin);
}

void launch_msm_tiled_sum(const LatticeExtent& extent, const double* d_q, const double* d_by_d2,
                          const int* d_span, int R, double scale, double* d_e, StreamView stream) {
  if (!msm_tiled_sum_fits(R))
    throw InternalError("launch_msm_tiled_sum: radius " + std::to_string(R) + " does not fit");
  if (extent.points() == 0) return;
  const std::size_t bytes = tiled_shared_bytes(R);
  DCS_CUDA_CHECK(cudaFuncSetAttribute(tiled_sum_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(bytes)));
  const dim3 grid((extent.n[0] + kTileX - 1) / kTileX, (extent.n[1] + kTileY - 1) / kTileY,
                  (extent.n[2] + kTileZ - 1) / kTileZ);
  if (grid.y > 65535u || grid.z > 65535u)
    throw UsageError("CUDA msm: a lattice of " + std::to_string(extent.n[1]) + " x " +
                     std::to_string(extent.n[2]) + " rows is more than one launch covers");
  tiled_sum_kernel<<<grid, dim3(kThreadsX, kTileY), bytes, stream.get()>>>(extent, d_q, d_by_d2,
                                                                           d_span, R, scale, d_e);
  DCS_CUDA_CHECK_LAUNCH("msm_tiled_sum", stream.get());
}

}  // namespace dcs::cuda::detail
