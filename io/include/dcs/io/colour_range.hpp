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

/// The range a viewer's colour ramp should span: symmetric limits -high .. +high, with `low`
/// the |V| below which values read as "near zero". Both in the map's units.
struct ColourRange {
  double low = 0.0;               ///< percentile low_percentile of |V|
  double high = 0.0;              ///< percentile high_percentile of |V|
  double low_percentile = 1.0;    ///< e.g. 1
  double high_percentile = 99.0;  ///< e.g. 99
};

/// Reads the range from a histogram of the whole map (or of a sample of it).
ColourRange robust_colour_range(const AbsValueHistogram& histogram, double low_percentile = 1.0,
                                double high_percentile = 99.0);

/// A sink that only watches: it counts every slab into an AbsValueHistogram, so the range is
/// known after the last slab without reading the map again. 1 MiB of counts.
class ColourRangeSink final : public MapSink {
 public:
  explicit ColourRangeSink(double low_percentile = 1.0, double high_percentile = 99.0)
      : low_(low_percentile), high_(high_percentile) {}
  std::string name() const override { return "(colour range)"; }
  std::size_t memory_bytes() const override;
  void begin(const MapMetadata& meta) override;
  void write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) override;
  void finish(const MapMetadata&, MapReader&) override {}
  void commit() override {}
  void abort() noexcept override {}
  /// The range of every slab so far (all of them after the pipeline's last slab).
  ColourRange range() const { return robust_colour_range(histogram_, low_, high_); }
  const AbsValueHistogram& histogram() const noexcept { return histogram_; }

 private:
  double low_;
  double high_;
  std::size_t plane_points_ = 0;
  AbsValueHistogram histogram_;
};

}  // namespace dcs::io
