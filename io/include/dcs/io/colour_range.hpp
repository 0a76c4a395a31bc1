// A robust colour range for viewers: percentiles of |V| estimated while slabs stream past.
//
// Near atom centres the potential reaches thousands of kT/e (ε = 1), so a viewer ramp set to the
// map's min/max shows one colour everywhere. A ramp symmetric about 0 with limits at a high
// percentile of |V| (99th by default) shows the molecule's surface potential instead.
//
// Estimator: a histogram over the float32 bit pattern of |v| with the low 14 mantissa bits
// dropped, i.e. 2^17 logarithmic bins covering every finite float with 9 mantissa bits each.
// A percentile is the midpoint of its bin: relative error <= 2^-10 (0.1%), for any value range,
// exact bin membership, 1 MiB of counts, independent of slab order and mergeable across
// threads or ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dcs/io/watching_sink.hpp"
#include "dcs/map.hpp"
#include "dcs/map_sink.hpp"

namespace dcs::io {

class AbsValueHistogram {
 public:
  AbsValueHistogram();
  /// Counts |v| of n values; non-finite values are skipped (and counted in nonfinite()).
  void add(const float* values, std::size_t n);
  /// Adds the counts of `other` (e.g. one histogram per thread or rank).
  void merge(const AbsValueHistogram& other);
  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t nonfinite() const noexcept { return nonfinite_; }
  /// The nearest-rank `percentile` (0-100) of |v|, to within 0.1%. 0 when nothing was counted.
  double percentile(double percentile) const;

 private:
  std::vector<std::uint64_t> bins_;
  std::uint64_t count_ = 0;
  std::uint64_t nonfinite_ = 0;
};

/// The range a viewer's colour ramp should span (dcs/map.hpp; MapMetadata::colour_range).
using ColourRange = dcs::ColourRange;

/// What `range.high` is, for the summary, the file (colour_range_source) and the preview:
/// "99th percentile of |V|", or range.source.
std::string describe_colour_range(const ColourRange& range);

/// Reads the range from a histogram of the whole map (or of a sample of it).
ColourRange robust_colour_range(const AbsValueHistogram& histogram, double low_percentile = 1.0,
                                double high_percentile = 99.0);

/// Values a ColourRangeSink counts at most (about): 2^25, 0.1 s of histogram on one core.
inline constexpr std::size_t kColourRangeSampleValues = std::size_t{1} << 25;

/// A sink that only watches: it counts slabs into an AbsValueHistogram, so the range is known
/// after the last slab without reading the map again. 1 MiB of counts.
///
/// Sample: the planes z with z % stride == 0, stride = max(1, points / sample_values) (every
/// plane of maps up to sample_values points; about sample_values values, whole planes evenly
/// spread in z, above). The sample depends only on the grid, so the range is the same for any
/// slab size, worker count, resumption or MPI rank count. The pipeline feeds it the slabs it
/// computes (wants_done_slabs() is false: a resumed run does not read the map back for it);
/// complete() reads the sampled planes it did not see through MapReader.
class ColourRangeSink final : public WatchingSink {
 public:
  explicit ColourRangeSink(double low_percentile = 1.0, double high_percentile = 99.0,
                           std::size_t sample_values = kColourRangeSampleValues)
      : low_(low_percentile), high_(high_percentile), sample_values_(sample_values) {}
  std::string name() const override { return "(colour range)"; }
  std::size_t memory_bytes() const override;
  void begin(const MapMetadata& meta) override;
  void write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) override;
  /// Reads the sampled planes no slab brought (one plane at a time: plane_points floats of
  /// memory), so that range() covers the whole sample. Idempotent.
  void complete(MapReader& map) override;
  /// Planes between sampled planes (1: every plane).
  std::int64_t plane_stride() const noexcept { return stride_; }
  /// The range of the sampled planes counted so far (all of them after complete()).
  ColourRange range() const;
  const AbsValueHistogram& histogram() const noexcept { return histogram_; }

 private:
  void count_plane(std::int64_t z, const float* values);
  double low_;
  double high_;
  std::size_t sample_values_;
  std::size_t plane_points_ = 0;
  std::int64_t nz_ = 0;
  std::int64_t stride_ = 1;
  std::vector<bool> seen_;  ///< per sampled plane (z / stride_)
  AbsValueHistogram histogram_;
};

}  // namespace dcs::io
