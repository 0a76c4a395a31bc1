// What is reduced: the "reduction policies" that every kernel of the family is templated on.
// A policy says how one thread folds input elements into a running partial (Thread), how that
// partial becomes the combined type (Accum), how two Accums combine, and how a block result is
// merged atomically into a global one (PMPP Fig. 10.13/10.15). The kernels know nothing else
// about statistics, so one kernel text serves the statistics, the validation metrics and the
// plain float sums of the books.
#pragma once

#include <cuda_runtime.h>

#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "dcs/stats.hpp"

namespace dcs::cuda::detail {

/// Floats before the first 16-byte aligned element of `values` (0..3 for a float-aligned
/// pointer): the scalar head of the vector kernels (host side, for vector_head()).
inline std::size_t aligned_float_head(const float* values) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(values);
  return ((16 - address % 16) % 16) / sizeof(float);
}

// ---------------------------------------------------------------------------------------------
// Statistics: StatsAccum {min, max, sum, sum_sq, count, nonfinite}.

/// One thread's running statistics. Cheaper than StatsAccum per element but identical in
/// result: min/max are kept in float (exact: the inputs are floats), every value is converted to
/// double before it is added (so sums are double from the first addition, the accuracy contract
/// of stats.hpp), and the counts are 32-bit (one thread never sees 2^32 values).
/// Measured (H200, bench/results/gpu_reduce_2026-11-21.md): the double work per element is free
/// because the kernel is bound by DRAM -- 127.5 us at 512^3 against 127.8 us for the float-per-
/// float4 ablation below and 123.5 us for a plain float sum -- so the stricter contract stays.
struct ThreadStats {
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
  double sum = 0.0;
  double sum_sq = 0.0;
  std::uint32_t count = 0;
  std::uint32_t nonfinite = 0;

  __device__ __forceinline__ void add(float value) {
    ++count;
    const bool finite = fabsf(value) <= FLT_MAX;  // false for NaN and +-inf
    nonfinite += finite ? 0u : 1u;
    const float inf = std::numeric_limits<float>::infinity();
    min = fminf(min, finite ? value : inf);
    max = fmaxf(max, finite ? value : -inf);
    const double v = static_cast<double>(finite ? value : 0.0f);
    sum += v;
    sum_sq = fma(v, v, sum_sq);  // v*v is exact in double, so this equals the CPU's sum_sq += v*v
  }
};

/// Ablation for the benchmark only (not a registry variant): the four values of one float4 are
/// summed in float before one double addition. A quarter of the FP64 work, at the price of a
/// float rounding per 4 values; benchmark_reductions() measures both the speed and the error.
struct ThreadStatsF32x4 : ThreadStats {
  __device__ __forceinline__ void add4(float4 q) {
    count += 4;
    const float inf = std::numeric_limits<float>::infinity();
    const bool fx = fabsf(q.x) <= FLT_MAX, fy = fabsf(q.y) <= FLT_MAX;
    const bool fz = fabsf(q.z) <= FLT_MAX, fw = fabsf(q.w) <= FLT_MAX;
    nonfinite += (fx ? 0u : 1u) + (fy ? 0u : 1u) + (fz ? 0u : 1u) + (fw ? 0u : 1u);
    const float x = fx ? q.x : 0.0f, y = fy ? q.y : 0.0f, z = fz ? q.z : 0.0f, w = fw ? q.w : 0.0f;
    min = fminf(fminf(fminf(min, fx ? q.x : inf), fminf(fy ? q.y : inf, fz ? q.z : inf)),
                fw ? q.w : inf);
    max = fmaxf(fmaxf(fmaxf(max, fx ? q.x : -inf), fmaxf(fy ? q.y : -inf, fz ? q.z : -inf)),
                fw ? q.w : -inf);
    sum += static_cast<double>((x + y) + (z + w));
    sum_sq += static_cast<double>(fmaf(x, x, y * y) + fmaf(z, z, w * w));
  }
};

__device__ __forceinline__ StatsAccum to_stats_accum(const ThreadStats& t) {
  StatsAccum accum;
  accum.min = static_cast<double>(t.min);
  accum.max = static_cast<double>(t.max);
  accum.sum = t.sum;
  accum.sum_sq = t.sum_sq;
  accum.count = t.count;
  accum.nonfinite = t.nonfinite;
  return accum;
}

// Atomic min/max of doubles through integer atomics on the bit pattern: for a non-negative
// double the signed 64-bit pattern orders like the value; for a negative one the unsigned
// pattern orders in reverse. The sign bit (not v >= 0) picks the branch so that -0.0 is handled.
// kMax: the maximum; else the minimum (the same with the two integer atomics swapped).
template <bool kMax>
__device__ __forceinline__ void atomic_extreme_double(double* address, double value) {
  const long long bits = __double_as_longlong(value);
  auto* const as_signed = reinterpret_cast<long long*>(address);
  auto* const as_unsigned = reinterpret_cast<unsigned long long*>(address);
  const auto pattern = static_cast<unsigned long long>(bits);
  if (bits >= 0) kMax ? atomicMax(as_signed, bits) : atomicMin(as_signed, bits);
  else kMax ? atomicMin(as_unsigned, pattern) : atomicMax(as_unsigned, pattern);
}
__device__ __forceinline__ void atomic_min_double(double* address, double value) {
  atomic_extreme_double<false>(address, value);
}
__device__ __forceinline__ void atomic_max_double(double* address, double value) {
  atomic_extreme_double<true>(address, value);
}

/// The n floats a reduction policy of floats reads, never writes: one element into a thread's
/// partial (add), or four (load_vector).
struct FloatInput {
  const float* __restrict__ values;
  std::size_t n;

  template <class Thread>
  __device__ __forceinline__ void add(Thread& t, std::size_t index) const {
    t.add(values[index]);
  }
  /// Elements first .. first+3, where values + first is 16-byte aligned. Loading and adding are
  /// separate so that a kernel can put several loads in flight before the first use.
  using Vector = float4;
  __device__ __forceinline__ Vector load_vector(std::size_t first) const {
    return *reinterpret_cast<const float4*>(values + first);
  }
  /// Number of leading elements before values+head is 16-byte aligned (0..3); the vector loop
  /// covers [head, head + 4*num_vectors).
  std::size_t vector_head() const noexcept { return aligned_float_head(values); }
};

/// Statistics of n floats (the map).
struct StatsReduction : FloatInput {
  using Accum = StatsAccum;
  using Thread = ThreadStats;

  __device__ __forceinline__ static void add_vector(Thread& t, const Vector& q) {
    t.add(q.x);
    t.add(q.y);
    t.add(q.z);
    t.add(q.w);
  }
  __device__ static Accum to_accum(const Thread& t) { return to_stats_accum(t); }
  __device__ static Accum identity() { return StatsAccum{}; }
  __device__ static Accum combine(const Accum& a, const Accum& b) {
    return StatsAccum::combine(a, b);
  }
  __device__ static void atomic_merge(Accum* target, const Accum& v) {
    if (v.count == 0) return;
    atomic_min_double(&target->min, v.min);
    atomic_max_double(&target->max, v.max);
    atomicAdd(&target->sum, v.sum);
    atomicAdd(&target->sum_sq, v.sum_sq);
    atomicAdd(reinterpret_cast<unsigned long long*>(&target->count),
              static_cast<unsigned long long>(v.count));
    atomicAdd(reinterpret_cast<unsigned long long*>(&target->nonfinite),
              static_cast<unsigned long long>(v.nonfinite));
  }
};
static_assert(sizeof(std::uint64_t) == sizeof(unsigned long long));

/// As StatsReduction, with the float-per-float4 thread partial (benchmark ablation only).
struct StatsReductionF32x4 : StatsReduction {
  using Thread = ThreadStatsF32x4;
  __device__ __forceinline__ static void add_vector(Thread& t, const Vector& q) { t.add4(q); }
  __device__ static Accum to_accum(const Thread& t) { return to_stats_accum(t); }
};

// ---------------------------------------------------------------------------------------------
// Validation: DiffAccum {max|a-ref|, sum (a-ref)^2, max|ref|, count, nonfinite}.

/// One thread's running difference metrics; same arithmetic as DiffAccum::add, 32-bit counts.
struct ThreadDiff {
  double max_abs_diff = 0.0;
  double sum_sq_diff = 0.0;
  double max_abs_ref = 0.0;
  std::uint32_t count = 0;
  std::uint32_t nonfinite = 0;

  __device__ __forceinline__ void add(float value, double reference) {
    ++count;
    const double d = static_cast<double>(value) - reference;
    const double ad = fabs(d);
    if (!(ad <= DBL_MAX)) {  // NaN or inf: counted, excluded from the metrics (as DiffAccum::add)
      ++nonfinite;
      return;
    }
    max_abs_diff = ad > max_abs_diff ? ad : max_abs_diff;
    const double ar = fabs(reference);
    max_abs_ref = ar > max_abs_ref ? ar : max_abs_ref;
    sum_sq_diff = fma(d, d, sum_sq_diff);
  }
};

/// Difference metrics of n floats against n doubles. Never writes to either array.
struct DiffReduction {
  using Accum = DiffAccum;
  using Thread = ThreadDiff;
  const float* __restrict__ values;
  const double* __restrict__ reference;
  std::size_t n;

  __device__ __forceinline__ void add(Thread& t, std::size_t index) const {
    t.add(values[index], reference[index]);
  }
  /// float4 of values and two double2 of the reference at the same element offset `first`
  /// (vector_head() guarantees both are 16-byte aligned there).
  struct Vector {
    float4 q;
    double2 r01, r23;
  };
  __device__ __forceinline__ Vector load_vector(std::size_t first) const {
    return {*reinterpret_cast<const float4*>(values + first),
            *reinterpret_cast<const double2*>(reference + first),
            *reinterpret_cast<const double2*>(reference + first + 2)};
  }
  __device__ __forceinline__ static void add_vector(Thread& t, const Vector& v) {
    t.add(v.q.x, v.r01.x);
    t.add(v.q.y, v.r01.y);
    t.add(v.q.z, v.r23.x);
    t.add(v.q.w, v.r23.y);
  }
  __device__ static Accum to_accum(const Thread& t) {
    DiffAccum accum;
    accum.max_abs_diff = t.max_abs_diff;
    accum.sum_sq_diff = t.sum_sq_diff;
    accum.max_abs_ref = t.max_abs_ref;
    accum.count = t.count;
    accum.nonfinite = t.nonfinite;
    return accum;
  }
  __device__ static Accum identity() { return DiffAccum{}; }
  __device__ static Accum combine(const Accum& a, const Accum& b) {
    return DiffAccum::combine(a, b);
  }
  __device__ static void atomic_merge(Accum* target, const Accum& v) {
    if (v.count == 0) return;
    // Both maxima are >= 0, whose bit patterns order like signed integers.
    atomicMax(reinterpret_cast<long long*>(&target->max_abs_diff),
              __double_as_longlong(v.max_abs_diff));
    atomicMax(reinterpret_cast<long long*>(&target->max_abs_ref),
              __double_as_longlong(v.max_abs_ref));
    atomicAdd(&target->sum_sq_diff, v.sum_sq_diff);
    atomicAdd(reinterpret_cast<unsigned long long*>(&target->count),
              static_cast<unsigned long long>(v.count));
    atomicAdd(reinterpret_cast<unsigned long long*>(&target->nonfinite),
              static_cast<unsigned long long>(v.nonfinite));
  }
  /// As StatsReduction::vector_head; when the float and double arrays cannot both be aligned at
  /// the same element, returns n (everything on the scalar path).
  std::size_t vector_head() const noexcept {
    const auto value_address = reinterpret_cast<std::uintptr_t>(values);
    const auto reference_address = reinterpret_cast<std::uintptr_t>(reference);
    if (value_address % sizeof(float) != 0 || reference_address % sizeof(double) != 0) return n;
    const std::size_t head = aligned_float_head(values);
    if ((reference_address + head * sizeof(double)) % 16 != 0) return n;
    return head;
  }
};

// ---------------------------------------------------------------------------------------------
// Plain float sum: the books' kernels, and the float-sum form of warp-shuffle for the
// comparison with cub::DeviceReduce::Sum.

struct ThreadSum {
  float sum = 0.0f;
  __device__ __forceinline__ void add(float value) { sum += value; }
};

struct SumReduction : FloatInput {
  using Accum = float;
  using Thread = ThreadSum;

  __device__ __forceinline__ static void add_vector(Thread& t, const Vector& q) {
    t.sum += (q.x + q.y) + (q.z + q.w);
  }
  __device__ static Accum to_accum(const Thread& t) { return t.sum; }
  __device__ static Accum identity() { return 0.0f; }
  __device__ static Accum combine(Accum a, Accum b) { return a + b; }
  __device__ static void atomic_merge(Accum* target, Accum v) { atomicAdd(target, v); }
};

/// The binary operator of a policy as a functor (what the block and warp algorithms take).
template <class Reduction>
struct CombineOp {
  using Accum = typename Reduction::Accum;
  __device__ __forceinline__ Accum operator()(const Accum& a, const Accum& b) const {
    return Reduction::combine(a, b);
  }
  __device__ __forceinline__ static Accum identity() { return Reduction::identity(); }
};

}  // namespace dcs::cuda::detail
