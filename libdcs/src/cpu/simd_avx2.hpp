// 8 float lanes of AVX2 + FMA for the fast backend's kernels (row_kernel.hpp). Private to
// dcs::core and included only by fast_kernels_avx2.cpp, which is compiled with -mavx2 -mfma and
// run only where cpuid reports both (fast_backend.cpp). The free functions are the overloads
// dcs::add_coulomb_term() finds by argument-dependent lookup.
#pragma once

#include <immintrin.h>

#include "dcs/physics.hpp"

namespace dcs::cpu_fast::avx2 {

#define DCS_SIMD_INLINE [[gnu::always_inline]] inline

struct Vec {
  static constexpr int kLanes = 8;
  __m256 v;

  DCS_SIMD_INLINE static Vec broadcast(float x) { return {_mm256_set1_ps(x)}; }
  DCS_SIMD_INLINE static Vec load(const float* p) { return {_mm256_loadu_ps(p)}; }
  DCS_SIMD_INLINE static void store(float* p, Vec x) { _mm256_storeu_ps(p, x.v); }
  DCS_SIMD_INLINE static Vec zero() { return {_mm256_setzero_ps()}; }
  /// first, first + 1, ..., first + 7.
  DCS_SIMD_INLINE static Vec iota(float first) {
    return {_mm256_add_ps(_mm256_set1_ps(first),
                          _mm256_setr_ps(0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f))};
  }
  /// out[0, count) += the first count lanes (never touches out[count, 8)).
  DCS_SIMD_INLINE static void add_to(float* out, Vec x, int count) {
    if (count == kLanes) {
      _mm256_storeu_ps(out, _mm256_add_ps(x.v, _mm256_loadu_ps(out)));
      return;
    }
    alignas(32) float part[kLanes];
    _mm256_store_ps(part, x.v);
    for (int lane = 0; lane < count; ++lane) out[lane] += part[lane];
  }
};

DCS_SIMD_INLINE Vec operator+(Vec a, Vec b) { return {_mm256_add_ps(a.v, b.v)}; }
DCS_SIMD_INLINE Vec operator-(Vec a, Vec b) { return {_mm256_sub_ps(a.v, b.v)}; }
DCS_SIMD_INLINE Vec operator*(Vec a, Vec b) { return {_mm256_mul_ps(a.v, b.v)}; }
DCS_SIMD_INLINE Vec multiply_add(Vec a, Vec b, Vec c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
/// c - a * b
DCS_SIMD_INLINE Vec negative_multiply_add(Vec a, Vec b, Vec c) {
  return {_mm256_fnmadd_ps(a.v, b.v, c.v)};
}
/// max(r2, min_r2) with r2 as vmaxps's second operand, the one returned when either is NaN:
/// NaN in, NaN out, as dcs::clamp_r2 everywhere.
DCS_SIMD_INLINE Vec clamp_r2(Vec r2, Vec min_r2) { return {_mm256_max_ps(min_r2.v, r2.v)}; }
/// vrsqrtps: relative error below 1.5 * 2^-12.
DCS_SIMD_INLINE Vec approximate_reciprocal_sqrt(Vec x) { return {_mm256_rsqrt_ps(x.v)}; }

/// vrcpps: relative error below 1.5 * 2^-12.
DCS_SIMD_INLINE Vec approximate_reciprocal(Vec x) { return {_mm256_rcp_ps(x.v)}; }
/// 2^x = 2^n 2^f with n = round(x), f = x - n in [-1/2, 1/2] (dcs::exp2_fraction) and 2^n
/// built in the exponent bits. x is first raised to -126 (2^-126, the smallest normal float:
/// negligible next to the unscreened terms), with x as vmaxps's NaN-returning operand.
DCS_SIMD_INLINE Vec exponential2(Vec x) {
  const __m256 clamped = _mm256_max_ps(_mm256_set1_ps(-126.0f), x.v);
  const __m256 n = _mm256_round_ps(clamped, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const Vec p = exp2_fraction(Vec{_mm256_sub_ps(clamped, n)});
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return {_mm256_mul_ps(p.v, _mm256_castsi256_ps(bits))};
}

#undef DCS_SIMD_INLINE

}  // namespace dcs::cpu_fast::avx2
