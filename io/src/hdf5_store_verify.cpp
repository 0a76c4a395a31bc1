// Checking the planes a partial file flags done before a resumed run trusts them
// (MapStore::open_partial()): their values are read back and their statistics recomputed.
#include <hdf5.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/parallel.hpp"
#include "dcs/stats.hpp"
#include "hdf5_support.hpp"

namespace dcs::io::h5 {
namespace {

bool same_bits(const StatsAccum& a, const StatsAccum& b) {
  return std::bit_cast<std::uint64_t>(a.min) == std::bit_cast<std::uint64_t>(b.min) &&
         std::bit_cast<std::uint64_t>(a.max) == std::bit_cast<std::uint64_t>(b.max) &&
         std::bit_cast<std::uint64_t>(a.sum) == std::bit_cast<std::uint64_t>(b.sum) &&
         std::bit_cast<std::uint64_t>(a.sum_sq) == std::bit_cast<std::uint64_t>(b.sum_sq) &&
         a.count == b.count && a.nonfinite == b.nonfinite;
}

/// Reads planes [z0, z0 + planes) of the map into `out`; false when HDF5 cannot (a damaged
/// compressed chunk, say).
bool read_planes(hid_t dataset, const GridSpec& grid, std::int64_t z0, std::int64_t planes,
                 float* out) {
  const std::array<hsize_t, 3> start{static_cast<hsize_t>(z0), 0, 0};
  const std::array<hsize_t, 3> count{static_cast<hsize_t>(planes), static_cast<hsize_t>(grid.ny()),
                                     static_cast<hsize_t>(grid.nx())};
  const hid_t file_space = H5Dget_space(dataset);
  if (file_space < 0) return false;
  const Handle file_owner(file_space, H5Sclose);
  const hid_t memory_space = H5Screate_simple(3, count.data(), nullptr);
  if (memory_space < 0) return false;
  const Handle memory_owner(memory_space, H5Sclose);
  return H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, count.data(),
                             nullptr) >= 0 &&
         H5Dread(dataset, H5T_NATIVE_FLOAT, memory_space, file_space, H5P_DEFAULT, out) >= 0;
}

}  // namespace

bool plane_stats_confirm(const StatsAccum& stored, const StatsAccum& recomputed, double sum_abs) {
  if (recomputed.nonfinite != 0 || stored.nonfinite != 0) return false;
  if (same_bits(stored, recomputed)) return true;
  if (stored.min != recomputed.min || stored.max != recomputed.max ||
      stored.count != recomputed.count)
    return false;
  // Each of two summation orders of n float values in double is within (n - 1) u sum|v| of the
  // exact sum (u = 2^-53); the squares of floats are exact in double.
  const double bound = 2.0 * static_cast<double>(recomputed.count) * 0x1p-53;
  return std::fabs(stored.sum - recomputed.sum) <= bound * sum_abs &&
         std::fabs(stored.sum_sq - recomputed.sum_sq) <= bound * recomputed.sum_sq;
}

std::vector<std::int64_t> damaged_done_planes(hid_t dataset, const GridSpec& grid,
                                              std::int64_t chunk_depth,
                                              const std::vector<std::uint8_t>& done,
                                              const std::vector<StatsAccum>& stats,
                                              unsigned threads) {
  const QuietErrors quiet;
  std::vector<std::int64_t> damaged;
  const std::size_t plane = grid.plane_points();
  std::vector<float> values;
  for (std::int64_t z0 = 0; z0 < grid.nz(); z0 += chunk_depth) {
    const std::int64_t planes = std::min(chunk_depth, grid.nz() - z0);
    const auto first = done.begin() + z0;
    if (std::find(first, first + planes, std::uint8_t{1}) == first + planes) continue;
    values.resize(static_cast<std::size_t>(planes) * plane);
    const bool readable = read_planes(dataset, grid, z0, planes, values.data());
    if (!readable) H5Eclear2(H5E_DEFAULT);
    std::vector<StatsAccum> recomputed(static_cast<std::size_t>(planes));
    std::vector<double> sum_abs(static_cast<std::size_t>(planes), 0.0);
    if (readable)
      parallel_for(static_cast<std::size_t>(planes), threads,
                   [&](std::size_t begin, std::size_t end) {
                     for (std::size_t p = begin; p < end; ++p) {
                       const float* v = values.data() + p * plane;
                       recomputed[p] = cpu_statistics(v, plane);
                       for (std::size_t i = 0; i < plane; ++i)
                         sum_abs[p] += std::fabs(static_cast<double>(v[i]));
                     }
                   });
    for (std::int64_t p = 0; p < planes; ++p) {
      const auto z = static_cast<std::size_t>(z0 + p);
      if (done[z] != 0 &&
          (!readable || !plane_stats_confirm(stats[z], recomputed[static_cast<std::size_t>(p)],
                                             sum_abs[static_cast<std::size_t>(p)])))
        damaged.push_back(z0 + p);
    }
  }
  return damaged;
}

std::string plane_list(const std::vector<std::int64_t>& planes) {
  std::string text;
  for (std::size_t begin = 0; begin < planes.size();) {
    std::size_t end = begin + 1;
    while (end < planes.size() && planes[end] == planes[end - 1] + 1) ++end;
    text += text.empty() ? "" : ", ";
    text += end - begin == 1 ? fmt::format("{}", planes[begin])
                             : fmt::format("{}-{}", planes[begin], planes[end - 1]);
    begin = end;
  }
  return (planes.size() == 1 ? "plane " : "planes ") + text;
}

}  // namespace dcs::io::h5
