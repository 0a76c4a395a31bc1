// 16 float lanes of AVX-512F for the fast backend's kernels (row_kernel.hpp). Private to
// dcs::core and included only by fast_kernels_avx512.cpp, which is compiled with -mavx512f and
// run only where cpuid reports AVX-512F (fast_backend.cpp). The free functions are the
// overloads dcs::add_coulomb_term() finds by argument-dependent lookup.
#pragma once

#include <immintrin.h>

#include "dcs/physics.hpp"

namespace dcs::cpu_fast::avx512 {

#define DCS_SIMD_INLINE [[gnu::always_inline]] inline

struct Vec {
  static constexpr int kLanes = 16;
  __m512 v;

  DCS_SIMD_INLINE static Vec broadcast(float x) { return {_mm512_set1_ps(x)}; }
  DCS_SIMD_INLINE static Vec load(const float* p) { return {_mm512_loadu_ps(p)}; }
  DCS_SIMD_INLINE static void store(float* p, Vec x) { _mm512_storeu_ps(p, x.v); }
  DCS_SIMD_INLINE static Vec zero() { return {_mm512_setzero_ps()}; }
  /// first, first + 1, ..., first + 15.
  DCS_SIMD_INLINE static Vec iota(float first) {
    return {_mm512_add_ps(_mm512_set1_ps(first),
                          _mm512_setr_ps(0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 9.f, 10.f,
                                         11.f, 12.f, 13.f, 14.f, 15.f))};
  }
  /// out[0, count) += the first count lanes (masked: never touches out[count, 16)).
  DCS_SIMD_INLINE static void add_to(float* out, Vec x, int count) {
    const auto mask = static_cast<__mmask16>((1u << count) - 1u);
    _mm512_mask_storeu_ps(out, mask, _mm512_add_ps(x.v, _mm512_maskz_loadu_ps(mask, out)));
  }
};

DCS_SIMD_INLINE Vec operator+(Vec a, Vec b) { return {_mm512_add_ps(a.v, b.v)}; }
DCS_SIMD_INLINE Vec operator-(Vec a, Vec b) { return {_mm512_sub_ps(a.v, b.v)}; }
DCS_SIMD_INLINE Vec operator*(Vec a, Vec b) { return {_mm512_mul_ps(a.v, b.v)}; }
DCS_SIMD_INLINE Vec multiply_add(Vec a, Vec b, Vec c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
/// c - a * b
DCS_SIMD_INLINE Vec negative_multiply_add(Vec a, Vec b, Vec c) {
  return {_mm512_fnmadd_ps(a.v, b.v, c.v)};
}

// GCC 12's unmasked _mm512_max_ps/_mm512_rsqrt14_ps merge into _mm512_undefined_ps(), which
// trips -Wmaybe-uninitialized; the all-lanes masked forms compile to the same instructions.
constexpr __mmask16 kAllLanes = 0xFFFF;

/// max(r2, min_r2) with r2 as vmaxps's second operand, the one returned when either is NaN:
/// NaN in, NaN out, as dcs::clamp_r2 everywhere.
DCS_SIMD_INLINE Vec clamp_r2(Vec r2, Vec min_r2) {
  return {_mm512_mask_max_ps(min_r2.v, kAllLanes, min_r2.v, r2.v)};
}
/// vrsqrt14ps: relative error below 2^-14.
DCS_SIMD_INLINE Vec approximate_reciprocal_sqrt(Vec x) {
  return {_mm512_mask_rsqrt14_ps(x.v, kAllLanes, x.v)};
}

/// vrcp14ps: relative error below 2^-14.
DCS_SIMD_INLINE Vec approximate_reciprocal(Vec x) {
  return {_mm512_mask_rcp14_ps(x.v, kAllLanes, x.v)};
}
/// 2^x = 2^n 2^f with n = round(x), f = x - n in [-1/2, 1/2] (dcs::exp2_fraction); vscalefps
/// applies 2^n, giving 0 far below the float range and keeping NaN.
DCS_SIMD_INLINE Vec exponential2(Vec x) {
  const __m512 n = _mm512_mask_roundscale_ps(x.v, kAllLanes, x.v, _MM_FROUND_TO_NEAREST_INT);
  const Vec p = exp2_fraction(Vec{_mm512_sub_ps(x.v, n)});
  return {_mm512_mask_scalef_ps(p.v, kAllLanes, p.v, n)};
}

#undef DCS_SIMD_INLINE

}  // namespace dcs::cpu_fast::avx512
