// Percentiles of |V| from a logarithmic histogram: see dcs/io/colour_range.hpp.
#include "dcs/io/colour_range.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "dcs/error.hpp"

namespace dcs::io {
namespace {

constexpr int kDroppedBits = 14;
constexpr std::size_t kBins = std::size_t{1} << (31 - kDroppedBits);  // sign bit cleared

float float_of_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

}  // namespace

AbsValueHistogram::AbsValueHistogram() : bins_(kBins, 0) {}

void AbsValueHistogram::add(const float* values, std::size_t n) {
  std::uint64_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(values[i]) & 0x7fffffffu;
    if (bits >= 0x7f800000u) {  // infinity or NaN
      ++bad;
      continue;
    }
    ++bins_[bits >> kDroppedBits];
  }
  nonfinite_ += bad;
  count_ += n - bad;
}

void AbsValueHistogram::merge(const AbsValueHistogram& other) {
  for (std::size_t b = 0; b < kBins; ++b) bins_[b] += other.bins_[b];
  count_ += other.count_;
  nonfinite_ += other.nonfinite_;
}

double AbsValueHistogram::percentile(double percentile) const {
  if (!(percentile >= 0.0 && percentile <= 100.0))
    throw UsageError(fmt::format("a percentile must lie in 0-100, got {}", percentile));
  if (count_ == 0) return 0.0;
  // Nearest rank: the smallest value with at least ceil(p/100 * count) values <= it.
  auto rank =
      static_cast<std::uint64_t>(std::ceil(percentile / 100.0 * static_cast<double>(count_)));
  if (rank < 1) rank = 1;
  if (rank > count_) rank = count_;
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < kBins; ++b) {
    seen += bins_[b];
    if (seen >= rank) {
      const double lo = float_of_bits(static_cast<std::uint32_t>(b << kDroppedBits));
      const double hi = b + 1 < kBins && ((b + 1) << kDroppedBits) < 0x7f800000u
                            ? float_of_bits(static_cast<std::uint32_t>((b + 1) << kDroppedBits))
                            : std::numeric_limits<float>::max();
      return 0.5 * (lo + hi);
    }
  }
  return float_of_bits(0x7f7fffffu);  // not reached: seen == count_ >= rank at the end
}

std::string describe_colour_range(const ColourRange& range) {
  return range.source.empty() ? fmt::format("{:g}th percentile of |V|", range.high_percentile)
                              : range.source;
}

ColourRange robust_colour_range(const AbsValueHistogram& histogram, double low_percentile,
                                double high_percentile) {
  if (!(low_percentile <= high_percentile))
    throw UsageError(fmt::format("colour range: low percentile {} above high percentile {}",
                                 low_percentile, high_percentile));
  ColourRange range;
  range.low_percentile = low_percentile;
  range.high_percentile = high_percentile;
  range.low = histogram.percentile(low_percentile);
  range.high = histogram.percentile(high_percentile);
  range.values = histogram.count();
  return range;
}

std::size_t ColourRangeSink::memory_bytes() const { return kBins * sizeof(std::uint64_t); }

void ColourRangeSink::begin(const MapMetadata& meta) {
  plane_points_ = meta.grid.plane_points();
  nz_ = meta.grid.nz();
  const std::size_t points = meta.grid.points();
  stride_ = static_cast<std::int64_t>(
      std::max<std::size_t>(1, sample_values_ > 0 ? points / sample_values_ : 1));
  seen_.assign(static_cast<std::size_t>((nz_ + stride_ - 1) / stride_), false);
  histogram_ = AbsValueHistogram();
}

void ColourRangeSink::count_plane(std::int64_t z, const float* values) {
  if (z % stride_ != 0) return;
  const auto sample = static_cast<std::size_t>(z / stride_);
  if (sample >= seen_.size() || seen_[sample]) return;
  histogram_.add(values, plane_points_);
  seen_[sample] = true;
}

void ColourRangeSink::write_slab(const Slab& slab, const float* values, const StatsAccum*) {
  for (std::int64_t k = 0; k < slab.z_count; ++k)
    count_plane(slab.z_begin + k, values + static_cast<std::size_t>(k) * plane_points_);
}

void ColourRangeSink::complete(MapReader& map) {
  std::vector<float> plane;
  for (std::size_t sample = 0; sample < seen_.size(); ++sample) {
    if (seen_[sample]) continue;
    const auto z = static_cast<std::int64_t>(sample) * stride_;
    plane.resize(plane_points_);
    map.read_planes(Slab{z, 1}, plane.data());
    count_plane(z, plane.data());
  }
}

ColourRange ColourRangeSink::range() const { return robust_colour_range(histogram_, low_, high_); }

}  // namespace dcs::io
