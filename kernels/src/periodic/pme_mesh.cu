// Smooth PME on the device (pme_mesh.hpp).
#include <cuda_runtime.h>
#include <cufft.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "dcs/error.hpp"
#include "dcs/periodic/bspline.hpp"
#include "ewald_device.cuh"
#include "pme_mesh.hpp"

namespace dcs::cuda::detail {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

void check_cufft(cufftResult result, const char* what) {
  if (result != CUFFT_SUCCESS)
    throw CudaError(std::string("cuFFT: ") + what + " failed (cufftResult " +
                    std::to_string(static_cast<int>(result)) + ")");
}

/// Each atom adds q w1[a] w2[b] w3[c] × scale, rounded to an integer, at mesh point
/// (base1 - a, base2 - b, base3 - c) mod K: integer additions, so the order does not matter.
template <int Order>
__global__ void __launch_bounds__(kThreads)
    spread_kernel(const double* __restrict__ positions, const double* __restrict__ charges,
                  std::size_t n, CellRows cell, int k1, int k2, int k3, double scale,
                  unsigned long long* __restrict__ fixed) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x;
  if (i >= n) return;
  const double q = charges[i];
  if (q == 0.0) return;
  double s[3];
  wrapped_fractional(cell, positions[3 * i], positions[3 * i + 1], positions[3 * i + 2], s);
  const AxisStencil<Order> s1 = axis_stencil<Order>(s[0], k1);
  const AxisStencil<Order> s2 = axis_stencil<Order>(s[1], k2);
  const AxisStencil<Order> s3 = axis_stencil<Order>(s[2], k3);
#pragma unroll
  for (int a = 0; a < Order; ++a) {
    const long long i1 = (s1.base - a + k1) % k1;
    const double q1 = q * s1.w[a];
#pragma unroll
    for (int b = 0; b < Order; ++b) {
      const long long i2 = (s2.base - b + k2) % k2;
      const double q12 = q1 * s2.w[b];
      unsigned long long* row = fixed + (i1 * k2 + i2) * k3;
#pragma unroll
      for (int c = 0; c < Order; ++c) {
        const long long value = llrint(q12 * s3.w[c] * scale);
        atomicAdd(row + (s3.base - c + k3) % k3, static_cast<unsigned long long>(value));
      }
    }
  }
}

__global__ void __launch_bounds__(kThreads)
    from_fixed_kernel(const unsigned long long* __restrict__ fixed, std::size_t n,
                      double inverse_scale, double* __restrict__ mesh) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x;
  if (i < n) mesh[i] = static_cast<double>(static_cast<long long>(fixed[i])) * inverse_scale;
}

__device__ inline int signed_frequency(int m, int k) { return m < (k + 1) / 2 ? m : m - k; }

/// X(m) *= θ(m) = exp(-π² |m*|² / β²) / (π V |m*|²) |b1 b2 b3|², θ(0) = 0 (pme.cpp's table).
__global__ void __launch_bounds__(kThreads)
    influence_kernel(double* __restrict__ spectrum, int k1, int k2, int k3, CellRows cell,
                     double gauss, double prefactor, const double* __restrict__ moduli) {
  const int half3 = k3 / 2 + 1;
  const std::size_t total = static_cast<std::size_t>(k1) * k2 * half3;
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x;
  if (i >= total) return;
  const int m3 = static_cast<int>(i % half3);
  const int m2 = static_cast<int>((i / half3) % k2);
  const int m1 = static_cast<int>(i / (static_cast<std::size_t>(half3) * k2));
  double theta = 0.0;
  if (m1 != 0 || m2 != 0 || m3 != 0) {
    const double f1 = signed_frequency(m1, k1), f2 = signed_frequency(m2, k2);
    const double f3 = signed_frequency(m3, k3);
    double k2sum = 0.0;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      const double kd = f1 * cell.star[0][d] + f2 * cell.star[1][d] + f3 * cell.star[2][d];
      k2sum += kd * kd;
    }
    theta = prefactor * exp(-gauss * k2sum) / k2sum * moduli[m1] * moduli[k1 + m2] *
            moduli[k1 + k2 + m3];
  }
  spectrum[2 * i] *= theta;
  spectrum[2 * i + 1] *= theta;
}

}  // namespace

PmeMesh::~PmeMesh() { release_plans(); }

void PmeMesh::release_plans() noexcept {
  if (planned_) {
    cufftDestroy(forward_);
    cufftDestroy(backward_);
  }
  planned_ = false;
}

std::size_t PmeMesh::bytes(const std::array<int, 3>& k) {
  const std::size_t points = static_cast<std::size_t>(k[0]) * k[1] * k[2];
  const std::size_t half = static_cast<std::size_t>(k[0]) * k[1] * (k[2] / 2 + 1);
  // fixed point + real mesh + spectrum, and cuFFT's work areas (about one spectrum each).
  return points * 16 + half * 16 * 3;
}

void PmeMesh::plan(const std::array<int, 3>& k, StreamView stream) {
  if (planned_ && k == k_) return;
  release_plans();
  fixed_ = DeviceBuffer<unsigned long long>();
  mesh_ = DeviceBuffer<double>();
  spectrum_ = DeviceBuffer<double>();
  const std::size_t points = static_cast<std::size_t>(k[0]) * k[1] * k[2];
  const std::size_t half = static_cast<std::size_t>(k[0]) * k[1] * (k[2] / 2 + 1);
  fixed_ = DeviceBuffer<unsigned long long>(points);
  mesh_ = DeviceBuffer<double>(points);
  spectrum_ = DeviceBuffer<double>(2 * half);
  cufftHandle forward = 0, backward = 0;
  check_cufft(cufftPlan3d(&forward, k[0], k[1], k[2], CUFFT_D2Z), "planning the forward FFT");
  if (const cufftResult r = cufftPlan3d(&backward, k[0], k[1], k[2], CUFFT_Z2D);
      r != CUFFT_SUCCESS) {
    cufftDestroy(forward);
    check_cufft(r, "planning the inverse FFT");
  }
  forward_ = forward;
  backward_ = backward;
  planned_ = true;
  k_ = k;
  check_cufft(cufftSetStream(forward_, stream.get()), "setting the forward FFT's stream");
  check_cufft(cufftSetStream(backward_, stream.get()), "setting the inverse FFT's stream");
}

void PmeMesh::solve(const double* d_positions, const double* d_charges, std::size_t n,
                    double abs_charge_sum, const CellRows& cell, double volume, double beta,
                    const std::array<int, 3>& k, int order, StreamView stream) {
  if (order < 4 || order > dcs::periodic::detail::kMaxOrder)
    throw InternalError("CUDA PME: B-spline order " + std::to_string(order));
  for (const int kd : k)
    if (kd < 2 * order) throw InternalError("CUDA PME: mesh smaller than twice the order");
  plan(k, stream);
  order_ = order;
  cell_ = cell;
  // |b(m)|² of each axis, as the CPU's table uses them.
  std::vector<double> moduli;
  for (int d = 0; d < 3; ++d) {
    const std::vector<double> m = dcs::periodic::detail::bspline_moduli(k[d], order);
    moduli.insert(moduli.end(), m.begin(), m.end());
  }
  moduli_ = DeviceBuffer<double>();
  moduli_ = DeviceBuffer<double>(moduli.size());
  moduli_.upload(moduli.data(), moduli.size(), stream);

  // The fixed point's scale 2^e: every mesh value is below Σ|q| < 2^x, so 2^(62 - x) keeps each
  // sum inside 63 bits, each term then rounded to Σ|q| · 2^-62 or better.
  int exponent = 0;
  std::frexp(abs_charge_sum > 0.0 ? abs_charge_sum : 1.0, &exponent);
  const double scale = std::ldexp(1.0, 62 - exponent);
  const std::size_t points = fixed_.size();
  DCS_CUDA_CHECK(
      cudaMemsetAsync(fixed_.data(), 0, points * sizeof(unsigned long long), stream.get()));
  with_order(order, [&]<int Order>() {
    spread_kernel<Order><<<blocks_for(n), kThreads, 0, stream.get()>>>(
        d_positions, d_charges, n, cell, k[0], k[1], k[2], scale, fixed_.data());
  });
  DCS_CUDA_CHECK_LAUNCH("pme_spread", stream.get());
  from_fixed_kernel<<<blocks_for(points), kThreads, 0, stream.get()>>>(fixed_.data(), points,
                                                                       1.0 / scale, mesh_.data());
  DCS_CUDA_CHECK_LAUNCH("pme_from_fixed", stream.get());
  check_cufft(
      cufftExecD2Z(forward_, mesh_.data(), reinterpret_cast<cufftDoubleComplex*>(spectrum_.data())),
      "the forward FFT");
  const double pi = std::numbers::pi;
  const std::size_t half = spectrum_.size() / 2;
  influence_kernel<<<blocks_for(half), kThreads, 0, stream.get()>>>(
      spectrum_.data(), k[0], k[1], k[2], cell, pi * pi / (beta * beta), 1.0 / (pi * volume),
      moduli_.data());
  DCS_CUDA_CHECK_LAUNCH("pme_influence", stream.get());
  // The unnormalised inverse is the convolution itself (as FFTW's in pme.cpp).
  check_cufft(cufftExecZ2D(backward_, reinterpret_cast<cufftDoubleComplex*>(spectrum_.data()),
                           mesh_.data()),
              "the inverse FFT");
}

PmeRead PmeMesh::read() const {
  PmeRead r;
  r.d_mesh = mesh_.data();
  for (int d = 0; d < 3; ++d) r.k[d] = k_[d];
  r.order = order_;
  r.cell = cell_;
  return r;
}

}  // namespace dcs::cuda::detail
