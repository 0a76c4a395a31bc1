// Measurements of the reduction family (dcs::cuda_bench). reduce_bench.cu runs the kernels
// and CUB and returns plain numbers; reduce_bench.cpp turns them into BenchTables
// (benchmark_reductions() of dcs/cuda_bench.hpp, the PCC ladder) -- fmt/spdlog stay out
// of .cu files. Used by `dcs bench --reductions`, dcs_reduce_bench and scripts/gpu/seed_claims.sh.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dcs/bench.hpp"
#include "dcs/stats.hpp"

namespace dcs::cuda::detail {

/// Kernel times in ms are medians of the repetitions (after 2 warm-ups); each sample is bracketed
/// by events after a spin kernel, so host launch overhead is not timed.
struct StatsTime {
  std::string variant;
  double ms = 0.0;
  StatsAccum result;  ///< on input buffer 0
};
struct TextbookTime {
  std::string variant;
  double ms = 0.0;
  double total = 0.0;  ///< the float kernel's sum on input buffer 0 (outputs summed in double)
};
struct SizeMeasurement {
  std::size_t n = 0;
  std::size_t buffers = 0;  ///< input buffers rotated over (>= 4x L2 in total)
  double copy_ms = 0.0;     ///< cudaMemcpyAsync device to device of n floats
  double cub_sum_ms = 0.0, cub_min_max_sum_ms = 0.0, cub_stats_ms = 0.0;
  StatsAccum oracle;                   ///< CUB's StatsAccum reduction of input buffer 0
  double sum_abs = 0.0;                ///< sum |x| of input buffer 0 (CUB, double)
  std::vector<StatsTime> statistics;   ///< every selected registry variant
  StatsTime ablation;                  ///< warp-shuffle with a float sum per float4
  std::vector<TextbookTime> textbook;  ///< the books' kernels that accept n
};

/// Measures everything at one size on pseudo-random floats in [-1000, 1000). Blocks.
SizeMeasurement measure_reductions(std::size_t n, const std::vector<std::string>& variants,
                                   int repetitions, int device);

struct LadderTime {
  std::string variant;
  double ms = 0.0;
  double total = 0.0;     ///< the kernel's sum (exact: values in {-1, 0, 1})
  double expected = 0.0;  ///< the exact sum
};
/// PCC's kernels neighbored .. unroll8-template on 2^24 floats, blocks of 512; the in-place input
/// is restored and the L2 flushed before every sample. Blocks.
std::vector<LadderTime> measure_ladder(int device, int repetitions);

/// PCC ch. 3's ladder re-measured as a table beside the book's Tesla M2070 numbers.
BenchTable seed003_ladder(int device, int repetitions);

/// Runs the book's kernel `name` once on n values in {-1, 0, 1} (a fixed pattern) and returns
/// the sum: the launch that Nsight Compute profiles. Throws UsageError for sizes the book's
/// kernel does not accept.
double run_textbook_once(const std::string& name, std::size_t n, int device);

/// Runs the statistics variant `name` once on n pseudo-random floats; returns the mean.
double run_statistics_once(const std::string& name, std::size_t n, int device);

}  // namespace dcs::cuda::detail
