// One float lane in plain C++ for the fast backend's portable kernel (row_kernel.hpp): what
// the compiler makes of dcs::add_coulomb_term<float> with HardwareRsqrt (a correctly rounded
// 1/sqrt) for the baseline instruction set. For CPUs without AVX2 and non-x86 builds.
#pragma once

#include "dcs/physics.hpp"

namespace dcs::cpu_fast::scalar {

struct Vec {
  static constexpr int kLanes = 1;
  float v;

  static Vec broadcast(float x) { return {x}; }
  static Vec load(const float* p) { return {*p}; }
  static void store(float* p, Vec x) { *p = x.v; }
  static Vec zero() { return {0.0f}; }
  static Vec iota(float first) { return {first}; }
  static void add_to(float* out, Vec x, int /*count: always 1*/) { *out += x.v; }
};

inline Vec operator+(Vec a, Vec b) { return {a.v + b.v}; }
inline Vec operator-(Vec a, Vec b) { return {a.v - b.v}; }
inline Vec operator*(Vec a, Vec b) { return {a.v * b.v}; }
inline Vec multiply_add(Vec a, Vec b, Vec c) { return {dcs::multiply_add(a.v, b.v, c.v)}; }
inline Vec clamp_r2(Vec r2, Vec min_r2) { return {dcs::clamp_r2(r2.v, min_r2.v)}; }
inline Vec reciprocal_sqrt(Vec x) { return {dcs::reciprocal_sqrt(x.v)}; }
inline Vec reciprocal(Vec x) { return {dcs::reciprocal(x.v)}; }
inline Vec exponential2(Vec x) { return {dcs::exponential2(x.v)}; }

}  // namespace dcs::cpu_fast::scalar
