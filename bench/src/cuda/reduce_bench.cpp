// The reporting half of the reduction benchmark: measurements (reduce_bench.cu) -> BenchTables.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/cuda_bench.hpp"
#include "dcs/error.hpp"
#include "dcs/variants.hpp"
#include "device_info.hpp"
#include "reduce_bench.hpp"
#include "reduction_registry.hpp"

namespace dcs::cuda {
namespace detail {
namespace {

std::string size_label(std::size_t n) {
  for (std::size_t edge = 16; edge <= 2048; edge *= 2)
    if (edge * edge * edge == n) return fmt::format("{}^3", edge);
  for (int p = 10; p < 40; ++p)
    if (n == (std::size_t{1} << p)) return fmt::format("2^{}", p);
  return std::to_string(n);
}

double gb_per_s(double bytes, double ms) { return bytes / (ms * 1e6); }

/// Statistics against CUB's on the same data: min, max and counts exactly, the double sums within
/// n * 2^-52 * sum|x| (a bound for any order of summation).
std::string check_stats(const StatsAccum& ours, const StatsAccum& cub, double sum_abs,
                        std::size_t n) {
  const double bound = static_cast<double>(n) * std::ldexp(1.0, -52);
  if (ours.min != cub.min || ours.max != cub.max || ours.count != cub.count ||
      ours.nonfinite != cub.nonfinite)
    return fmt::format("FAIL: min {} max {} count {} nonfinite {} (CUB {} {} {} {})", ours.min,
                       ours.max, ours.count, ours.nonfinite, cub.min, cub.max, cub.count,
                       cub.nonfinite);
  if (std::fabs(ours.sum - cub.sum) > bound * sum_abs ||
      std::fabs(ours.sum_sq - cub.sum_sq) > bound * cub.sum_sq)
    return fmt::format("FAIL: sum {:.17g} sum_sq {:.17g} (CUB {:.17g} {:.17g})", ours.sum,
                       ours.sum_sq, cub.sum, cub.sum_sq);
  return "ok";
}

std::vector<std::string_view> reduction_names() {
  std::vector<std::string_view> names;
  for (const Variant& row : kVariantTable)
    if (row.backend == BackendKind::Cuda && row.kind == VariantKind::Reduction)
      names.push_back(row.name);
  return names;
}

/// The reductions among the selected names (`dcs bench --kernel` lists potential kernels and
/// reductions together; the potential kernels are the other benchmark's), or all when none is
/// one. A name that is neither is a typo: a UsageError, not a silent run of every variant.
std::vector<std::string> selected_variants(const BenchOptions& options) {
  std::vector<std::string> names;
  for (const std::string& name : options.kernels) {
    if (reduction_index(name) < kReductionCount) names.push_back(name);
    else if (variant_index(BackendKind::Cuda, VariantKind::Potential, name) ==
             variant_count(BackendKind::Cuda, VariantKind::Potential))
      throw UsageError(
          fmt::format("unknown variant '{}': neither a CUDA reduction ({}) nor a CUDA "
                      "potential kernel",
                      name, fmt::join(reduction_names(), ", ")));
  }
  if (names.empty())
    for (const std::string_view name : reduction_names()) names.emplace_back(name);
  return names;
}

}  // namespace

BenchTable seed003_ladder(int device, int repetitions) {
  const DeviceInfo info = query_device(device);
  const std::vector<LadderTime> rows = measure_ladder(device, repetitions);
  struct Book {
    const char* label;
    double seconds;  // Tesla M2070, int data, the book's table
  };
  const Book book[] = {{"Neighbored (divergence)", 0.011722},
                       {"Neighbored (no divergence)", 0.009321},
                       {"Interleaved", 0.006967},
                       {"Unroll 2 blocks", 0.003430},
                       {"Unroll 4 blocks", 0.001829},
                       {"Unroll 8 blocks", 0.001422},
                       {"Unroll 8 blocks + last warp", 0.001355},
                       {"Unroll 8 blocks + loop + last warp", 0.001280},
                       {"Templatized kernel", 0.001253}};
  BenchTable table;
  table.name = "reduce_seed003_ladder";
  table.title = fmt::format(
      "PCC ch. 3 reduction ladder on {} (2^24 floats, blocks of 512; the book: Tesla M2070, ints)",
      info.name);
  table.columns = {"variant",   "book's kernel",   "ms", "GB/s", "step", "cumulative", "book ms",
                   "book step", "book cumulative", "sum"};
  const double bytes = static_cast<double>(std::size_t{1} << 24) * sizeof(float);
  for (std::size_t index = 0; index < rows.size() && index < std::size(book); ++index) {
    const LadderTime& row = rows[index];
    const double previous = index == 0 ? row.ms : rows[index - 1].ms;
    const double book_previous = index == 0 ? book[0].seconds : book[index - 1].seconds;
    table.rows.push_back(
        {row.variant, book[index].label, fmt::format("{:.4f}", row.ms),
         fmt::format("{:.0f}", gb_per_s(bytes, row.ms)), fmt::format("{:.2f}", previous / row.ms),
         fmt::format("{:.2f}", rows[0].ms / row.ms),
         fmt::format("{:.3f}", book[index].seconds * 1e3),
         fmt::format("{:.2f}", book_previous / book[index].seconds),
         fmt::format("{:.2f}", book[0].seconds / book[index].seconds),
         row.total == row.expected ? "exact"
                                   : fmt::format("FAIL {} vs {}", row.total, row.expected)});
  }
  table.notes.push_back(fmt::format(
      "Kernel time by CUDA events (median of {} after 2 warm-ups); the in-place input is restored "
      "and the L2 flushed before every sample, untimed. The book timed kernel + "
      "cudaDeviceSynchronize on the host. GB/s: the 64 MiB input read once / time.",
      repetitions));
  return table;
}

}  // namespace detail

std::vector<BenchTable> benchmark_reductions(const BenchOptions& options) {
  using namespace detail;
  const std::vector<std::string> variants = selected_variants(options);  // names before the device
  const DeviceInfo device = query_device(options.device);
  std::vector<std::size_t> sizes;
  for (std::int64_t edge : options.grid_sizes)
    if (edge > 0) sizes.push_back(static_cast<std::size_t>(edge * edge * edge));
  if (sizes.empty())
    sizes = {std::size_t{1} << 20, std::size_t{256} * 256 * 256, std::size_t{512} * 512 * 512};

  BenchTable reference, stats, textbook;
  reference.name = "reduce_reference";
  reference.title =
      fmt::format("Reduction ceilings on {} ({} SMs, {} MB L2): device copy and cub::DeviceReduce",
                  device.name, device.multiprocessors, device.l2_bytes >> 20);
  reference.columns = {"n",
                       "input buffers",
                       "copy GB/s (read+write)",
                       "CUB Sum GB/s",
                       "CUB min/max/sum GB/s",
                       "CUB StatsAccum GB/s"};
  stats.name = "reduce_statistics";
  stats.title = fmt::format("Statistics (StatsAccum, one pass) by variant on {}", device.name);
  stats.columns = {"n",
                   "variant",
                   "µs",
                   "GB/s",
                   "% of copy",
                   "× CUB StatsAccum",
                   "× CUB min/max/sum",
                   "× CUB Sum",
                   "check vs CUB"};
  textbook.name = "reduce_textbook";
  textbook.title =
      fmt::format("The books' float-sum kernels on {} (sizes they accept)", device.name);
  textbook.columns = {"n", "variant", "µs", "GB/s", "% of copy", "× CUB Sum", "|error| / sum|x|"};

  for (const std::size_t n : sizes) {
    const SizeMeasurement m = measure_reductions(n, variants, options.repetitions, options.device);
    const std::string label = size_label(n);
    const double bytes = static_cast<double>(n) * sizeof(float);
    const double copy_gbps = 2.0 * gb_per_s(bytes, m.copy_ms);
    reference.rows.push_back({label, std::to_string(m.buffers), fmt::format("{:.0f}", copy_gbps),
                              fmt::format("{:.0f}", gb_per_s(bytes, m.cub_sum_ms)),
                              fmt::format("{:.0f}", gb_per_s(bytes, m.cub_min_max_sum_ms)),
                              fmt::format("{:.0f}", gb_per_s(bytes, m.cub_stats_ms))});
    const auto stats_row = [&](const StatsTime& row, std::string check) {
      stats.rows.push_back({label, row.variant, fmt::format("{:.1f}", row.ms * 1e3),
                            fmt::format("{:.0f}", gb_per_s(bytes, row.ms)),
                            fmt::format("{:.1f}%", 100.0 * gb_per_s(bytes, row.ms) / copy_gbps),
                            fmt::format("{:.3f}", m.cub_stats_ms / row.ms),
                            fmt::format("{:.3f}", m.cub_min_max_sum_ms / row.ms),
                            fmt::format("{:.3f}", m.cub_sum_ms / row.ms), std::move(check)});
    };
    for (const StatsTime& row : m.statistics)
      stats_row(row, check_stats(row.result, m.oracle, m.sum_abs, n));
    StatsTime ablation = m.ablation;
    ablation.variant = "(ablation) " + ablation.variant;
    stats_row(ablation,
              fmt::format("sum err {:.1e}·sum|x|, sum_sq err {:.1e} rel.",
                          std::fabs(m.ablation.result.sum - m.oracle.sum) / m.sum_abs,
                          std::fabs(m.ablation.result.sum_sq - m.oracle.sum_sq) / m.oracle.sum_sq));
    for (const TextbookTime& row : m.textbook)
      textbook.rows.push_back(
          {label, row.variant, fmt::format("{:.1f}", row.ms * 1e3),
           fmt::format("{:.0f}", gb_per_s(bytes, row.ms)),
           fmt::format("{:.1f}%", 100.0 * gb_per_s(bytes, row.ms) / copy_gbps),
           fmt::format("{:.3f}", m.cub_sum_ms / row.ms),
           fmt::format("{:.1e}", std::fabs(row.total - m.oracle.sum) / m.sum_abs)});
  }
  reference.notes.push_back(fmt::format(
      "GB/s = bytes read / time (copy: read + written). Median of {} samples after 2 warm-ups, "
      "each after a spin kernel so that host launch overhead is not timed. Inputs rotate over the "
      "buffers shown (>= 4x the L2; 512^3 alone is 8x it). Data: uniform floats in [-1000, 1000).",
      std::max(options.repetitions, 1)));
  stats.notes.push_back(
      "check: min, max, count and non-finite count equal to CUB's StatsAccum reduction of the "
      "same data, double sums within n * 2^-52 * sum|x|. × CUB = CUB's time / ours (> 1: ours is "
      "faster). The ablation row sums each float4 in float before one double addition "
      "(benchmark only).");
  textbook.notes.push_back(
      "The books' kernels as printed (PMPP: BLOCK_DIM 512, COARSE_FACTOR 2, single-block ones only "
      "up to 2048 values; PCC: blocks of 512); in-place kernels reduce a copy restored before each "
      "sample (and the L2 flushed), untimed. Error against the double sum of CUB.");
  return {reference, stats, textbook};
}

}  // namespace dcs::cuda
