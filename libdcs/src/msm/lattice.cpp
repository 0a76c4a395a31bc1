// The lattice steps of the long-range part (lattice.hpp). Separable steps (restriction,
// prolongation) run one axis at a time; the lattice sums run over rows of the output, each
// point summed over the stencil in (dz, dy, dx) order.
#include "lattice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "dcs/error.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/msm_plan.hpp"
#include "fft_convolution.hpp"

namespace dcs::msm {
namespace {

/// floor(x / 2) and ceil(x / 2) for integers of either sign.
long floor_half(long x) { return x >= 0 ? x / 2 : -((1 - x) / 2); }
long ceil_half(long x) { return -floor_half(-x); }

/// Anterpolation: q0_m = sum_i q_i Phi(u_i - m) per axis. Atoms are bucketed by their
/// stencil's first z index; each z-plane gathers from the 2s buckets that reach it, buckets in
/// order and atoms in input order, so the sums do not depend on how planes are shared out.
void anterpolate(const std::vector<PointCharge>& atoms, const Vec3& origin, double h,
                 const Basis& basis, Lattice& q, ThreadPool& pool) {
  const int p = basis.order;
  const std::size_t count = atoms.size();
  // Only the first z index of each atom's stencil is kept (the weights are recomputed where
  // they are used: 16 bytes an atom, however many atoms).
  auto lattice_coordinate = [&](const PointCharge& atom, int d) {
    const double x = d == 0 ? atom.x : d == 1 ? atom.y : atom.z;
    return (x - origin[static_cast<std::size_t>(d)]) / h;
  };
  std::vector<long> base_z(count);
  for (std::size_t i = 0; i < count; ++i)
    base_z[i] = static_cast<long>(std::floor(lattice_coordinate(atoms[i], 2))) - basis.half() + 1;
  // Buckets by base z (counting sort, stable).
  const long nz = q.n[2];
  std::vector<std::size_t> start(static_cast<std::size_t>(nz) + 1, 0), order(count);
  for (std::size_t i = 0; i < count; ++i)
    ++start[static_cast<std::size_t>(base_z[i] - q.lo[2]) + 1];
  for (long b = 0; b < nz; ++b)
    start[static_cast<std::size_t>(b) + 1] += start[static_cast<std::size_t>(b)];
  {
    std::vector<std::size_t> fill(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < count; ++i)
      order[fill[static_cast<std::size_t>(base_z[i] - q.lo[2])]++] = i;
  }
  base_z = {};
  std::fill(q.v.begin(), q.v.end(), 0.0);
  pool.parallel_for(static_cast<std::size_t>(nz), [&](std::size_t begin, std::size_t end) {
    double wx[8], wy[8];
    for (std::size_t plane = begin; plane < end; ++plane) {
      stop_if_interrupted();
      const long z = q.lo[2] + static_cast<long>(plane);
      for (long bz = std::max(q.lo[2], z - p + 1); bz <= z; ++bz) {
        const auto bucket = static_cast<std::size_t>(bz - q.lo[2]);
        for (std::size_t o = start[bucket]; o < start[bucket + 1]; ++o) {
          const PointCharge& atom = atoms[order[o]];
          const long bx = basis.weights(lattice_coordinate(atom, 0), wx);
          const long by = basis.weights(lattice_coordinate(atom, 1), wy);
          const double qz =
              atom.q * basis.phi(lattice_coordinate(atom, 2) - static_cast<double>(z));
          for (int jj = 0; jj < p; ++jj) {
            const double qyz = qz * wy[jj];
            double* row = &q.v[q.offset(bx, by + jj, z)];
            for (int ii = 0; ii < p; ++ii) row[ii] += qyz * wx[ii];
          }
        }
      }
    }
  });
}

/// One axis of the two-scale transfer between a fine lattice F and a coarse one C (index m of
/// C sits on index 2m of F). restrict: C_m = sum_k J_k F_{2m+k}; prolong: F_n += sum_m
/// J_{n-2m} C_m. `in` and `out` have the same extents on the other two axes.
enum class Transfer { Restrict, Prolong };

void transfer_axis(const MsmLatticePlan& plan, Transfer kind, int axis, const Lattice& in,
                   Lattice& out, ThreadPool& pool) {
  const int reach = plan.reach;
  const std::vector<double>& J = plan.two_scale;  // J[k + reach] = J_k
  // Lines along `axis`: their count and the stride between neighbours on the axis.
  const long n_out = out.n[axis], n_in = in.n[axis];
  const long lo_out = out.lo[axis], lo_in = in.lo[axis];
  std::size_t stride_in = 1, stride_out = 1;
  for (int d = 0; d < axis; ++d) {
    stride_in *= static_cast<std::size_t>(in.n[d]);
    stride_out *= static_cast<std::size_t>(out.n[d]);
  }
  const std::size_t lines = out.points() / static_cast<std::size_t>(n_out);
  pool.parallel_for(lines, [&](std::size_t begin, std::size_t end) {
    for (std::size_t line = begin; line < end; ++line) {
      if (line % 64 == 0) stop_if_interrupted();
      // line -> (inner index below the axis, outer index above it); the other axes agree.
      const std::size_t inner = line % stride_out, outer = line / stride_out;
      const double* src = in.v.data() + inner + outer * stride_in * static_cast<std::size_t>(n_in);
      double* dst = out.v.data() + inner + outer * stride_out * static_cast<std::size_t>(n_out);
      for (long o = 0; o < n_out; ++o) {
        const long index = lo_out + o;
        double sum = 0.0;
        if (kind == Transfer::Restrict) {
          for (int k = -reach; k <= reach; ++k) {
            const long f = 2 * index + k - lo_in;
            if (f >= 0 && f < n_in)
              sum += J[static_cast<std::size_t>(k + reach)] *
                     src[static_cast<std::size_t>(f) * stride_in];
          }
          dst[static_cast<std::size_t>(o) * stride_out] = sum;
        } else {
          // coarse m with |index - 2m| <= reach, in increasing m
          const long m_lo = ceil_half(index - reach);
          const long m_hi = floor_half(index + reach);
          for (long m = m_lo; m <= m_hi; ++m) {
            const long c = m - lo_in;
            if (c >= 0 && c < n_in)
              sum += J[static_cast<std::size_t>(index - 2 * m + reach)] *
                     src[static_cast<std::size_t>(c) * stride_in];
          }
          dst[static_cast<std::size_t>(o) * stride_out] += sum;
        }
      }
    }
  });
}

/// out = (fine restricted onto coarse's range), one axis after the other.
void restrict_to(const MsmLatticePlan& plan, const Lattice& fine, Lattice& coarse,
                 ThreadPool& pool) {
  Lattice x, xy;
  x.resize({coarse.lo[0], fine.lo[1], fine.lo[2]}, {coarse.n[0], fine.n[1], fine.n[2]});
  transfer_axis(plan, Transfer::Restrict, 0, fine, x, pool);
  xy.resize({coarse.lo[0], coarse.lo[1], fine.lo[2]}, {coarse.n[0], coarse.n[1], fine.n[2]});
  transfer_axis(plan, Transfer::Restrict, 1, x, xy, pool);
  transfer_axis(plan, Transfer::Restrict, 2, xy, coarse, pool);
}

/// fine += coarse prolonged, one axis after the other (z, then y, then x).
void prolong_into(const MsmLatticePlan& plan, const Lattice& coarse, Lattice& fine,
                  ThreadPool& pool) {
  Lattice z, zy;
  z.resize({coarse.lo[0], coarse.lo[1], fine.lo[2]}, {coarse.n[0], coarse.n[1], fine.n[2]});
  std::fill(z.v.begin(), z.v.end(), 0.0);
  transfer_axis(plan, Transfer::Prolong, 2, coarse, z, pool);
  zy.resize({coarse.lo[0], fine.lo[1], fine.lo[2]}, {coarse.n[0], fine.n[1], fine.n[2]});
  std::fill(zy.v.begin(), zy.v.end(), 0.0);
  transfer_axis(plan, Transfer::Prolong, 1, z, zy, pool);
  transfer_axis(plan, Transfer::Prolong, 0, zy, fine, pool);
}

/// acc[i] += k * q[i] for i < n: the lattice sums' inner loop, cloned for AVX-512 and AVX2
/// (chosen once by the loader for this CPU, so every row of a run takes the same clone).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void add_scaled(double* __restrict acc, const double* __restrict q, double k, long n) {
  for (long i = 0; i < n; ++i) acc[i] += k * q[i];
}

/// e_n = sum_d K(d) q_{n+d} over the stencil (the kernel is even, so this is the convolution),
/// each point in (dz, dy, dx) order. Zeros are skipped, which changes no sum: the stencil's
/// rows outside its sphere and, for each source row, the x-ranges where q is zero (the padding
/// around a molecule holds no charge, often most of the finest lattice).
void lattice_sum(const Lattice& q, const Stencil& K, double scale, Lattice& e, ThreadPool& pool) {
  const long rx = K.r[0], ry = K.r[1], rz = K.r[2];
  const long wx = 2 * rx + 1, wy = 2 * ry + 1;
  // Non-zero dx range of each (dz, dy) row.
  std::vector<std::array<long, 2>> span(static_cast<std::size_t>(wy * (2 * rz + 1)));
  for (long dz = -rz; dz <= rz; ++dz)
    for (long dy = -ry; dy <= ry; ++dy) {
      const double* row = &K.v[static_cast<std::size_t>(((dz + rz) * wy + (dy + ry)) * wx)];
      long first = 0, last = -1;
      for (long dx = 0; dx < wx; ++dx)
        if (row[dx] != 0.0) {
          if (last < 0) first = dx;
          last = dx;
        }
      span[static_cast<std::size_t>((dz + rz) * wy + (dy + ry))] = {first - rx, last - rx};
    }
  const long nx = q.n[0], ny = q.n[1], nz = q.n[2];
  const std::size_t rows = static_cast<std::size_t>(ny * nz);
  // Non-zero x range [first, last] of each source row (empty: last < first).
  std::vector<std::array<long, 2>> charged(rows, {0, -1});
  for (std::size_t r = 0; r < rows; ++r) {
    const double* row = &q.v[r * static_cast<std::size_t>(nx)];
    long first = 0, last = -1;
    for (long i = 0; i < nx; ++i)
      if (row[i] != 0.0) {
        if (last < 0) first = i;
        last = i;
      }
    charged[r] = {first, last};
  }
  pool.parallel_for(rows, [&](std::size_t begin, std::size_t end) {
    std::vector<double> acc(static_cast<std::size_t>(nx));
    for (std::size_t r = begin; r < end; ++r) {
      stop_if_interrupted();
      const long j = static_cast<long>(r) % ny, k = static_cast<long>(r) / ny;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (long dz = std::max(-rz, -k); dz <= std::min(rz, nz - 1 - k); ++dz)
        for (long dy = std::max(-ry, -j); dy <= std::min(ry, ny - 1 - j); ++dy) {
          const auto s = span[static_cast<std::size_t>((dz + rz) * wy + (dy + ry))];
          if (s[1] < s[0]) continue;
          const auto c = charged[static_cast<std::size_t>(k + dz) * static_cast<std::size_t>(ny) +
                                 static_cast<std::size_t>(j + dy)];
          if (c[1] < c[0]) continue;
          const double* krow =
              &K.v[static_cast<std::size_t>(((dz + rz) * wy + (dy + ry)) * wx + rx)];
          const double* qrow =
              &q.v[(static_cast<std::size_t>(k + dz) * static_cast<std::size_t>(ny) +
                    static_cast<std::size_t>(j + dy)) *
                   static_cast<std::size_t>(nx)];
          for (long dx = s[0]; dx <= s[1]; ++dx) {
            const double kv = krow[dx];
            const long i_lo = std::max(0L, c[0] - dx), i_hi = std::min(nx, c[1] + 1 - dx);
            if (i_hi > i_lo)
              add_scaled(&acc[static_cast<std::size_t>(i_lo)], qrow + i_lo + dx, kv, i_hi - i_lo);
          }
        }
      double* out = &e.v[r * static_cast<std::size_t>(nx)];
      for (long i = 0; i < nx; ++i) out[i] = scale * acc[static_cast<std::size_t>(i)];
    }
  });
}

/// The lattice sum by FFT or directly, whichever the sizes say is less work (never by thread
/// count, so the choice and the bits are the same however many threads run it).
void lattice_sum_auto(const Lattice& q, const Stencil& K, double scale, Lattice& e,
                      ThreadPool& pool) {
  double charged = 0.0, taps = 0.0;
  for (const double v : q.v) charged += v != 0.0 ? 1.0 : 0.0;
  for (const double v : K.v) taps += v != 0.0 ? 1.0 : 0.0;
  const FftPlan plan = fft_plan(q.n, K.r);
  if (plan.bytes <= kFftBytesLimit && plan.work < charged * taps)
    fft_lattice_sum(q, K, scale, e, plan, pool);
  else lattice_sum(q, K, scale, e, pool);
}

/// The plan's radial kernel as a full stencil (the same values, indexed by (dz, dy, dx)).
Stencil stencil(const MsmRadialKernel& radial) {
  Stencil K;
  K.r = radial.radius;
  const std::array<long, 3> r = radial.radius;
  K.v.resize(static_cast<std::size_t>((2 * r[0] + 1) * (2 * r[1] + 1) * (2 * r[2] + 1)));
  std::size_t at = 0;
  for (long dz = -r[2]; dz <= r[2]; ++dz)
    for (long dy = -r[1]; dy <= r[1]; ++dy)
      for (long dx = -r[0]; dx <= r[0]; ++dx)
        K.v[at++] = radial.by_d2[static_cast<std::size_t>(dx * dx + dy * dy + dz * dz)];
  return K;
}

}  // namespace

void stop_if_interrupted() {
  if (interrupt_requested()) throw InterruptedError("interrupted");
}

void Lattice::resize(std::array<long, 3> lower, std::array<long, 3> counts) {
  lo = lower;
  n = counts;
  v.assign(points(), 0.0);
}

void direct_lattice_sum(const Lattice& q, const Stencil& K, double scale, Lattice& e,
                        ThreadPool& pool) {
  lattice_sum(q, K, scale, e, pool);
}

void LongRange::solve(const std::vector<PointCharge>& atoms, const Vec3& lower, const Vec3& upper,
                      ThreadPool& pool) {
  // The geometry (extents, two-scale weights, kernels) is the plan's, shared with the device.
  MsmParameters parameters;
  parameters.spacing = h_;
  parameters.cutoff = a_;
  parameters.order = basis_.order;
  parameters.split = splitting_.k;
  const MsmLatticePlan plan = msm_lattice_plan(parameters, lower, upper);
  origin_ = plan.origin;
  std::vector<Lattice> charge(1);
  charge[0].resize(plan.levels[0].lo, plan.levels[0].n);
  anterpolate(atoms, origin_, h_, basis_, charge[0], pool);
  // Restrict down to the plan's top level.
  for (std::size_t level = 1; level < plan.levels.size(); ++level) {
    stop_if_interrupted();
    Lattice coarse;
    coarse.resize(plan.levels[level].lo, plan.levels[level].n);
    restrict_to(plan, charge.back(), coarse, pool);
    charge.push_back(std::move(coarse));
  }
  levels_ = static_cast<int>(charge.size());
  lattice_points_ = plan.lattice_points();

  // Top level: all pairs with g_{2^L a} at distance 2^L h |d|.
  const int top = levels_ - 1;
  const double top_scale = std::ldexp(1.0, -top);
  Lattice e;
  {
    const Lattice& q = charge[static_cast<std::size_t>(top)];
    e.resize(q.lo, q.n);
    lattice_sum_auto(q, stencil(plan.top), top_scale, e, pool);
  }
  // Down the levels: this level's cutoff sum plus the coarser potential prolonged.
  const Stencil cutoff = stencil(plan.cutoff);
  for (int level = top - 1; level >= 0; --level) {
    stop_if_interrupted();
    const Lattice& q = charge[static_cast<std::size_t>(level)];
    Lattice fine;
    fine.resize(q.lo, q.n);
    lattice_sum_auto(q, cutoff, std::ldexp(1.0, -level), fine, pool);
    prolong_into(plan, e, fine, pool);
    e = std::move(fine);
    charge.pop_back();
  }
  potential_ = std::move(e);
}

}  // namespace dcs::msm
