// Radix-2 complex FFT along each axis of a padded lattice, and the convolution built on it.
// Written here rather than taken from FFTW: FFTW's planner and SIMD codelets depend on the host
// CPU, so MPI ranks on different nodes could round the lattice sums differently, and a map
// must be bit-identical whatever ran its slabs; this one sums in one fixed order everywhere.
#include "fft_convolution.hpp"

#include <cmath>
#include <complex>
#include <cstdlib>
#include <vector>

namespace dcs::msm {
namespace {

using Complex = std::complex<double>;

long next_power_of_two(long n) {
  long m = 1;
  while (m < n) m *= 2;
  return m;
}

/// In-place iterative radix-2 FFT of a[0, n), n a power of two; `roots[k]` = exp(-2 pi i k/n)
/// for k < n/2 (conjugated for the inverse, which is not scaled).
void fft_line(Complex* a, long n, const std::vector<Complex>& roots, bool inverse) {
  for (long i = 1, j = 0; i < n; ++i) {
    long bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (long len = 2; len <= n; len <<= 1) {
    const long step = n / len;
    for (long i = 0; i < n; i += len)
      for (long k = 0; k < len / 2; ++k) {
        const Complex w = inverse ? std::conj(roots[static_cast<std::size_t>(k * step)])
                                  : roots[static_cast<std::size_t>(k * step)];
        const Complex u = a[i + k], v = a[i + k + len / 2] * w;
        a[i + k] = u + v;
        a[i + k + len / 2] = u - v;
      }
  }
}

/// Transforms every line of a padded m[0] x m[1] x m[2] array (x fastest) along each axis.
void fft_3d(std::vector<Complex>& data, const std::array<long, 3>& m, bool inverse,
            ThreadPool& pool) {
  for (int axis = 0; axis < 3; ++axis) {
    const long n = m[static_cast<std::size_t>(axis)];
    std::vector<Complex> roots(static_cast<std::size_t>(n / 2 > 0 ? n / 2 : 1));
    for (long k = 0; k < n / 2; ++k)
      roots[static_cast<std::size_t>(k)] = std::polar(
          1.0, -2.0 * 3.14159265358979323846 * static_cast<double>(k) / static_cast<double>(n));
    std::size_t stride = 1;
    for (int d = 0; d < axis; ++d)
      stride *= static_cast<std::size_t>(m[static_cast<std::size_t>(d)]);
    const std::size_t lines = data.size() / static_cast<std::size_t>(n);
    pool.parallel_for(lines, [&](std::size_t begin, std::size_t end) {
      std::vector<Complex> line(static_cast<std::size_t>(n));
      for (std::size_t l = begin; l < end; ++l) {
        if (l % 64 == 0) stop_if_interrupted();
        const std::size_t inner = l % stride, outer = l / stride;
        Complex* first = data.data() + inner + outer * stride * static_cast<std::size_t>(n);
        for (long i = 0; i < n; ++i)
          line[static_cast<std::size_t>(i)] = first[static_cast<std::size_t>(i) * stride];
        fft_line(line.data(), n, roots, inverse);
        for (long i = 0; i < n; ++i)
          first[static_cast<std::size_t>(i) * stride] = line[static_cast<std::size_t>(i)];
      }
    });
  }
}

}  // namespace

FftPlan fft_plan(const std::array<long, 3>& n, const std::array<long, 3>& r) {
  FftPlan plan;
  double points = 1.0;
  for (std::size_t d = 0; d < 3; ++d) {
    plan.m[d] = next_power_of_two(n[d] + r[d]);
    points *= static_cast<double>(plan.m[d]);
  }
  plan.bytes = static_cast<std::size_t>(points) * 2 * sizeof(Complex);
  // Three transforms of N log2 N butterflies; measured against the direct sum's vectorised
  // multiply-adds (2 threads, AVX-512; 2lzt and achbp at 1e-4 and 1e-5), a butterfly pass
  // costs about 6 of them (strided copies, complex arithmetic, no SIMD).
  plan.work = 3.0 * 6.0 * points * std::log2(points);
  return plan;
}

void fft_lattice_sum(const Lattice& q, const Stencil& K, double scale, Lattice& e,
                     const FftPlan& plan, ThreadPool& pool) {
  const std::array<long, 3>& m = plan.m;
  const std::size_t total = static_cast<std::size_t>(m[0] * m[1] * m[2]);
  auto at = [&](long i, long j, long k) {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(m[1]) +
            static_cast<std::size_t>(j)) *
               static_cast<std::size_t>(m[0]) +
           static_cast<std::size_t>(i);
  };
  std::vector<Complex> charge(total), kernel(total);
  for (long k = 0; k < q.n[2]; ++k)
    for (long j = 0; j < q.n[1]; ++j)
      for (long i = 0; i < q.n[0]; ++i)
        charge[at(i, j, k)] = q.v[(static_cast<std::size_t>(k) * static_cast<std::size_t>(q.n[1]) +
                                   static_cast<std::size_t>(j)) *
                                      static_cast<std::size_t>(q.n[0]) +
                                  static_cast<std::size_t>(i)];
  // K(d) at d mod m: the kernel is even, so the convolution is the stencil sum. Only
  // |d| < n is ever needed, and with m >= n + r those entries never alias one another.
  std::size_t s = 0;
  for (long dz = -K.r[2]; dz <= K.r[2]; ++dz)
    for (long dy = -K.r[1]; dy <= K.r[1]; ++dy)
      for (long dx = -K.r[0]; dx <= K.r[0]; ++dx, ++s)
        if (std::abs(dx) < q.n[0] && std::abs(dy) < q.n[1] && std::abs(dz) < q.n[2])
          kernel[at((dx + m[0]) % m[0], (dy + m[1]) % m[1], (dz + m[2]) % m[2])] = K.v[s];
  fft_3d(charge, m, false, pool);
  fft_3d(kernel, m, false, pool);
  for (std::size_t i = 0; i < total; ++i) charge[i] *= kernel[i];
  kernel = {};
  fft_3d(charge, m, true, pool);
  const double norm = scale / static_cast<double>(total);
  for (long k = 0; k < q.n[2]; ++k)
    for (long j = 0; j < q.n[1]; ++j)
      for (long i = 0; i < q.n[0]; ++i)
        e.v[(static_cast<std::size_t>(k) * static_cast<std::size_t>(q.n[1]) +
             static_cast<std::size_t>(j)) *
                static_cast<std::size_t>(q.n[0]) +
            static_cast<std::size_t>(i)] = norm * charge[at(i, j, k)].real();
}

}  // namespace dcs::msm
