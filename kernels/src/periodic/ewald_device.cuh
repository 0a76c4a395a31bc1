// Device helpers of the periodic kernels (ghost_atoms.cu, pme_mesh.cu, ewald_sums.cu): the wrap
// into the cell and smooth PME's stencil, as libdcs/src/periodic does them on the CPU (same
// B-spline weights: dcs/periodic/bspline.hpp). Private to kernels/src/periodic.
#pragma once

#include <cuda_runtime.h>

#include "dcs/periodic/bspline.hpp"
#include "ewald_kernels.hpp"

namespace dcs::cuda::detail {

/// s = the fractional coordinates of r wrapped into [0, 1) (a rounding to 1.0 counts as 0).
__device__ inline void wrapped_fractional(const CellRows& c, double x, double y, double z,
                                          double s[3]) {
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    double f = x * c.star[a][0] + y * c.star[a][1] + z * c.star[a][2];
    f -= floor(f);
    s[a] = f < 1.0 ? f : 0.0;
  }
}

/// The Cartesian position of fractional s plus the lattice translation n.
__device__ inline void to_cartesian(const CellRows& c, const double s[3], const int n[3],
                                    double r[3]) {
#pragma unroll
  for (int i = 0; i < 3; ++i)
    r[i] = (s[0] + n[0]) * c.v[0][i] + (s[1] + n[1]) * c.v[1][i] + (s[2] + n[2]) * c.v[2][i];
}

/// Where a point sits on the PME mesh along one axis: the first index base (floor of u) and the
/// weights w[m] of the indices base - m (pme.cpp's stencil_of). Order is a template parameter so
/// that the weights stay in registers.
template <int Order>
struct AxisStencil {
  int base;
  double w[Order];
};

template <int Order>
__device__ inline AxisStencil<Order> axis_stencil(double fractional, int mesh) {
  AxisStencil<Order> st;
  const double u = fractional * static_cast<double>(mesh);
  int base = static_cast<int>(u);
  if (base >= mesh) base = mesh - 1;
  st.base = base;
  dcs::periodic::detail::bspline_weights(u - static_cast<double>(base), Order, st.w);
  return st;
}

/// φ_rec at a point (any position: the stencil wraps it), e/Å: the mesh interpolated with the
/// spreading's weights, summed k3 fastest within k2 within k1 (pme.cpp's order).
template <int Order>
__device__ inline double pme_potential(const PmeRead& p, double x, double y, double z) {
  double s[3];
  wrapped_fractional(p.cell, x, y, z, s);
  const AxisStencil<Order> s1 = axis_stencil<Order>(s[0], p.k[0]);
  const AxisStencil<Order> s2 = axis_stencil<Order>(s[1], p.k[1]);
  const AxisStencil<Order> s3 = axis_stencil<Order>(s[2], p.k[2]);
  int i3[Order];
#pragma unroll
  for (int c = 0; c < Order; ++c) i3[c] = (s3.base - c + p.k[2]) % p.k[2];
  double sum = 0.0;
#pragma unroll
  for (int a = 0; a < Order; ++a) {
    const int i1 = (s1.base - a + p.k[0]) % p.k[0];
    const double* plane = p.d_mesh + static_cast<long long>(i1) * p.k[1] * p.k[2];
    double plane_sum = 0.0;
#pragma unroll
    for (int b = 0; b < Order; ++b) {
      const int i2 = (s2.base - b + p.k[1]) % p.k[1];
      const double* row = plane + static_cast<long long>(i2) * p.k[2];
      double row_sum = 0.0;
#pragma unroll
      for (int c = 0; c < Order; ++c) row_sum += s3.w[c] * __ldg(row + i3[c]);
      plane_sum += s2.w[b] * row_sum;
    }
    sum += s1.w[a] * plane_sum;
  }
  return sum;
}

/// Calls f.template operator()<Order>() for the B-spline order 4..8 of a run (a launch picks its
/// kernel's instantiation this way).
template <class F>
void with_order(int order, F&& f) {
  switch (order) {
    case 4: f.template operator()<4>(); break;
    case 5: f.template operator()<5>(); break;
    case 6: f.template operator()<6>(); break;
    case 7: f.template operator()<7>(); break;
    default: f.template operator()<8>(); break;
  }
}

}  // namespace dcs::cuda::detail
