// The lattice sums by FFT where that is cheaper than the direct stencil sum: a zero-padded
// power-of-two complex FFT of the charges and of the even kernel, multiplied and transformed
// back. Each line is transformed alone, in a fixed order, so the result is the same bits for
// any thread count; whether the FFT or the direct sum is used depends on the sizes only.
#pragma once

#include <cstddef>

#include "dcs/parallel.hpp"
#include "lattice.hpp"

namespace dcs::msm {

/// The most the FFT sum may take (its two padded complex arrays); larger sums are direct.
inline constexpr std::size_t kFftBytesLimit = std::size_t{1} << 30;

/// Bytes and work of the FFT sum of a lattice of `n` points per axis with a kernel of
/// half-widths `r`: the padded size per axis is the power of two >= n + r (no wrap-around
/// reaches an output point).
struct FftPlan {
  std::array<long, 3> m{};
  std::size_t bytes = 0;
  double work = 0.0;  ///< comparable with the direct sum's multiply-adds
};
FftPlan fft_plan(const std::array<long, 3>& n, const std::array<long, 3>& r);

/// e = scale * (K * q) on q's range, by FFT.
void fft_lattice_sum(const Lattice& q, const Stencil& K, double scale, Lattice& e,
                     const FftPlan& plan, ThreadPool& pool);

}  // namespace dcs::msm
