// Map statistics and validation metrics. One accumulator carries every statistic so that a
// single pass computes them all; the same combine() merges GPU block partials, CPU chunks and
// (later) MPI ranks. Sums are accumulated in double. Field meanings follow gemmi's DataStats.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "dcs/host_device.hpp"

namespace dcs {

/// Running statistics of a set of float values. min/max/sum/sum_sq cover finite values only;
/// NaN and +-inf are counted in `nonfinite` (and `count` counts every value seen).
struct StatsAccum {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0.0;
  double sum_sq = 0.0;
  std::uint64_t count = 0;      ///< values seen, finite or not
  std::uint64_t nonfinite = 0;  ///< NaN or infinite values seen

  DCS_HD void add(float value) {
    ++count;
    if (!isfinite(value)) {
      ++nonfinite;
      return;
    }
    const double v = static_cast<double>(value);
    min = v < min ? v : min;
    max = v > max ? v : max;
    sum += v;
    sum_sq += v * v;
  }

  /// Associative and commutative (up to rounding of the sums).
  DCS_HD static StatsAccum combine(const StatsAccum& a, const StatsAccum& b) {
    StatsAccum r;
    r.min = a.min < b.min ? a.min : b.min;
    r.max = a.max > b.max ? a.max : b.max;
    r.sum = a.sum + b.sum;
    r.sum_sq = a.sum_sq + b.sum_sq;
    r.count = a.count + b.count;
    r.nonfinite = a.nonfinite + b.nonfinite;
    return r;
  }

 private:
  DCS_HD static bool isfinite(float v) {
#if defined(__CUDA_ARCH__)
    return ::isfinite(v);
#else
    return std::isfinite(v);
#endif
  }
};

/// Statistics of a finished map, derived once from a StatsAccum.
struct GridStats {
  double min = 0.0, max = 0.0;
  double mean = 0.0;  ///< sum / finite count
  double rms = 0.0;   ///< sqrt(sum_sq / finite count): root mean square of the values (not the
                      ///< standard deviation), as gemmi's DataStats::rms
  double sum = 0.0;
  std::uint64_t count = 0;
  std::uint64_t nonfinite = 0;

  double max_abs() const noexcept {
    return std::fabs(min) > std::fabs(max) ? std::fabs(min) : std::fabs(max);
  }
};

GridStats finalize(const StatsAccum& accum) noexcept;

/// Statistics of n host values, computed on the CPU (plain loop, the oracle for GPU variants).
StatsAccum cpu_statistics(const float* values, std::size_t n) noexcept;

/// Statistics of each of `planes` consecutive planes of `plane_points` values into out[0,
/// planes): one plain loop per plane (the same result for any thread count), planes spread over
/// `threads` threads (0: all).
void plane_statistics(const float* values, std::size_t plane_points, std::size_t planes,
                      unsigned threads, StatsAccum* out);

/// Running metrics of the difference between computed values and a float64 reference.
struct DiffAccum {
  double max_abs_diff = 0.0;  ///< max |a - ref| over finite values (non-finite ones are counted)
  double sum_sq_diff = 0.0;   ///< sum (a - ref)^2
  double max_abs_ref = 0.0;   ///< max |ref|, the scale of the relative error
  std::uint64_t count = 0;
  std::uint64_t nonfinite = 0;  ///< non-finite computed values

  DCS_HD void add(float value, double reference) {
    ++count;
    const double a = static_cast<double>(value);
    const double d = a - reference;
    const double ad = d < 0 ? -d : d;
    const double ar = reference < 0 ? -reference : reference;
    if (!(ad <= 1.7976931348623157e308)) {  // NaN or inf
      ++nonfinite;
      return;
    }
    max_abs_diff = ad > max_abs_diff ? ad : max_abs_diff;
    max_abs_ref = ar > max_abs_ref ? ar : max_abs_ref;
    sum_sq_diff += d * d;
  }

  DCS_HD static DiffAccum combine(const DiffAccum& a, const DiffAccum& b) {
    DiffAccum r;
    r.max_abs_diff = a.max_abs_diff > b.max_abs_diff ? a.max_abs_diff : b.max_abs_diff;
    r.sum_sq_diff = a.sum_sq_diff + b.sum_sq_diff;
    r.max_abs_ref = a.max_abs_ref > b.max_abs_ref ? a.max_abs_ref : b.max_abs_ref;
    r.count = a.count + b.count;
    r.nonfinite = a.nonfinite + b.nonfinite;
    return r;
  }
};

DiffAccum cpu_difference(const float* values, const double* reference, std::size_t n) noexcept;

/// Result of --validate.
struct Validation {
  bool performed = false;
  std::uint64_t points = 0;        ///< points compared
  bool all_points = false;         ///< every grid point was compared (else a sample)
  double max_abs_error = 0.0;      ///< in the output unit
  double rms_error = 0.0;          ///< in the output unit
  double max_abs_reference = 0.0;  ///< max |V_ref| over the compared points
  double max_rel_error = 0.0;      ///< max_abs_error / max|V| of the map
  double tolerance = 0.0;          ///< relative to max|V|
  bool passed = false;
};

}  // namespace dcs
