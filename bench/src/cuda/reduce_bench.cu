// The measuring half of the reduction benchmark (reduce_bench.hpp): kernels, CUB, timing.
//
// Timing: each sample is bracketed by events after a spin kernel that keeps the GPU busy while
// the host enqueues the work, so host launch overhead is not timed (multi-kernel variants run
// back to back, as they would inside a pipeline). Median after two warm-ups. Inputs rotate over
// enough buffers to exceed 4x the L2 (60 MB on an H200, 50 MB on an H100); in-place kernels get
// their copy restored and the L2 flushed before each sample, untimed.
#include <cuda_runtime.h>

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "dcs/error.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "device_reduce.cuh"
#include "reduce.hpp"
#include "reduce_bench.hpp"
#include "reduce_ops.cuh"
#include "stream.hpp"
#include "textbook.hpp"

namespace dcs::cuda::detail {
namespace {

constexpr long long kSpinNanoseconds = 100'000;
constexpr int kWarmups = 2;

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Keeps the GPU busy so that the work enqueued after it is queued in full before it starts.
__global__ void spin_kernel(long long nanoseconds) {
  const unsigned long long start = global_timer_ns();
  while (static_cast<long long>(global_timer_ns() - start) < nanoseconds) __nanosleep(1000);
}

__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Pseudo-random floats uniform in [lo, hi): never time on zeros (METHOD.md).
__global__ void fill_uniform_kernel(float* out, std::size_t n, std::uint64_t seed, float lo,
                                    float hi) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const double u =
        static_cast<double>(splitmix64(seed ^ (i * 0x2545f4914f6cdd1dull)) >> 11) * 0x1.0p-53;
    out[i] = lo + static_cast<float>(u) * (hi - lo);
  }
}

/// Values in {-1, 0, 1}: every partial sum of the books' float kernels is an exact integer.
__global__ void fill_ternary_kernel(float* out, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    out[i] = static_cast<float>(static_cast<int>(splitmix64(seed + i) % 3) - 1);
}

void fill_uniform(float* d_out, std::size_t n, std::uint64_t seed, StreamView stream) {
  fill_uniform_kernel<<<1024, 256, 0, stream.get()>>>(d_out, n, seed, -1000.0f, 1000.0f);
  DCS_CUDA_CHECK_LAUNCH("fill_uniform", stream.get());
}
void fill_ternary(float* d_out, std::size_t n, std::uint64_t seed, StreamView stream) {
  fill_ternary_kernel<<<1024, 256, 0, stream.get()>>>(d_out, n, seed);
  DCS_CUDA_CHECK_LAUNCH("fill_ternary", stream.get());
}

// --- CUB comparisons ---------------------------------------------------------------------------

struct ToStats {
  __host__ __device__ StatsAccum operator()(float value) const {
    StatsAccum accum;
    accum.add(value);
    return accum;
  }
};
struct CombineStats {
  __host__ __device__ StatsAccum operator()(const StatsAccum& a, const StatsAccum& b) const {
    return StatsAccum::combine(a, b);
  }
};
/// The lighter custom operator: finite min, max and a double sum.
struct MinMaxSum {
  float min, max;
  double sum;
};
struct ToMinMaxSum {
  __host__ __device__ MinMaxSum operator()(float value) const {
    const bool finite = fabsf(value) <= 3.40282347e38f;
    const float inf = std::numeric_limits<float>::infinity();
    return {finite ? value : inf, finite ? value : -inf, finite ? static_cast<double>(value) : 0.0};
  }
};
struct CombineMinMaxSum {
  __host__ __device__ MinMaxSum operator()(const MinMaxSum& a, const MinMaxSum& b) const {
    return {a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max, a.sum + b.sum};
  }
};
struct AbsToDouble {
  __host__ __device__ double operator()(float value) const {
    return fabs(static_cast<double>(value));
  }
};
struct PlusDouble {
  __host__ __device__ double operator()(double a, double b) const { return a + b; }
};

/// One kind of cub::DeviceReduce call with its temporary storage kept between calls.
class CubCall {
 public:
  template <class Call>
  void operator()(Call&& call, StreamView stream) {
    std::size_t bytes = 0;
    DCS_CUDA_CHECK(call(static_cast<void*>(nullptr), bytes, stream.get()));
    if (temp_.bytes() < bytes) temp_ = DeviceBuffer<std::byte>(bytes);
    DCS_CUDA_CHECK(call(static_cast<void*>(temp_.data()), bytes, stream.get()));
  }

 private:
  DeviceBuffer<std::byte> temp_;
};

// --- timing ---------------------------------------------------------------------------------

/// Median time in ms of work(rep) over `repetitions` samples; pre(rep) runs untimed before the
/// spin. rep counts from 0, warm-ups included.
template <class Pre, class Work>
double median_ms(StreamView stream, int repetitions, Pre&& pre, Work&& work) {
  Event start, stop;
  std::vector<float> samples;
  for (int rep = 0; rep < kWarmups + repetitions; ++rep) {
    pre(rep);
    spin_kernel<<<1, 1, 0, stream.get()>>>(kSpinNanoseconds);
    DCS_CUDA_CHECK_LAUNCH("spin", stream.get());
    start.record(stream);
    work(rep);
    stop.record(stream);
    stop.synchronize();
    if (rep >= kWarmups) samples.push_back(stop.elapsed_ms_since(start));
  }
  std::sort(samples.begin(), samples.end());
  return static_cast<double>(samples[samples.size() / 2]);
}

template <class T>
T download_one(const T* d_value, StreamView stream) {
  T value{};
  DCS_CUDA_CHECK(cudaMemcpyAsync(&value, d_value, sizeof(T), cudaMemcpyDeviceToHost, stream.get()));
  stream.synchronize();
  return value;
}

double download_sum(const DeviceBuffer<float>& outputs, std::size_t count, StreamView stream) {
  std::vector<float> host(count);
  outputs.download(host.data(), count, stream);
  stream.synchronize();
  double total = 0.0;
  for (float v : host) total += static_cast<double>(v);
  return total;
}

/// No untimed step before a sample.
constexpr auto no_setup = [](int) {};

/// The inputs of one size: buffers of n pseudo-random floats, rotated over the repetitions.
struct RotatingInputs {
  std::vector<DeviceBuffer<float>> buffers;
  float* operator()(int rep) {
    return buffers[static_cast<std::size_t>(rep) % buffers.size()].data();
  }
};

/// The ceilings (a device-to-device copy and cub::DeviceReduce) and the oracle on buffer 0.
void measure_ceilings(std::size_t n, RotatingInputs& input, int repetitions,
                      DeviceBuffer<float>& copy, StreamView s, SizeMeasurement& m) {
  m.copy_ms = median_ms(s, repetitions, no_setup, [&](int rep) {
    DCS_CUDA_CHECK(cudaMemcpyAsync(copy.data(), input(rep), n * sizeof(float),
                                   cudaMemcpyDeviceToDevice, s.get()));
  });
  DeviceBuffer<float> d_cub_sum(1);
  DeviceBuffer<StatsAccum> d_cub_stats(1);
  DeviceBuffer<MinMaxSum> d_cub_mms(1);
  DeviceBuffer<double> d_sum_abs(1);
  CubCall cub_sum, cub_stats, cub_mms, cub_abs;
  // int offsets: CUB's usual (fastest) instantiation; the benchmark sizes fit.
  if (n > 0x7fffffffu) throw UsageError("benchmark sizes must stay below 2^31 values");
  const auto items = static_cast<int>(n);
  const auto run_cub_sum = [&](const float* in) {
    cub_sum(
        [&](void* t, std::size_t& b, cudaStream_t st) {
          return cub::DeviceReduce::Sum(t, b, in, d_cub_sum.data(), items, st);
        },
        s);
  };
  const auto run_cub_stats = [&](const float* in) {
    cub_stats(
        [&](void* t, std::size_t& b, cudaStream_t st) {
          return cub::DeviceReduce::TransformReduce(t, b, in, d_cub_stats.data(), items,
                                                    CombineStats{}, ToStats{}, StatsAccum{}, st);
        },
        s);
  };
  const auto run_cub_mms = [&](const float* in) {
    const float inf = std::numeric_limits<float>::infinity();
    cub_mms(
        [&](void* t, std::size_t& b, cudaStream_t st) {
          return cub::DeviceReduce::TransformReduce(t, b, in, d_cub_mms.data(), items,
                                                    CombineMinMaxSum{}, ToMinMaxSum{},
                                                    MinMaxSum{inf, -inf, 0.0}, st);
        },
        s);
  };
  m.cub_sum_ms = median_ms(s, repetitions, no_setup, [&](int rep) { run_cub_sum(input(rep)); });
  m.cub_stats_ms = median_ms(s, repetitions, no_setup, [&](int rep) { run_cub_stats(input(rep)); });
  m.cub_min_max_sum_ms =
      median_ms(s, repetitions, no_setup, [&](int rep) { run_cub_mms(input(rep)); });

  // The oracle on buffer 0.
  run_cub_stats(input(0));
  m.oracle = download_one(d_cub_stats.data(), s);
  cub_abs(
      [&](void* t, std::size_t& b, cudaStream_t st) {
        return cub::DeviceReduce::TransformReduce(t, b, input(0), d_sum_abs.data(), items,
                                                  PlusDouble{}, AbsToDouble{}, 0.0, st);
      },
      s);
  m.sum_abs = download_one(d_sum_abs.data(), s);
}

/// The statistics form of every selected variant, and the ablation: a float partial per float4
/// (not a registry variant).
void measure_statistics(std::size_t n, const std::vector<std::string>& variants,
                        RotatingInputs& input, int repetitions, ReduceWorkspace& workspace,
                        StreamView s, SizeMeasurement& m) {
  StatsAccum* d_result = workspace.result<StatsAccum>();
  for (const std::string& variant : variants) {
    StatsTime row;
    row.variant = variant;
    enqueue_statistics(input(0), n, variant, workspace, s, d_result);
    row.result = download_one(d_result, s);
    row.ms = median_ms(s, repetitions, no_setup, [&](int rep) {
      enqueue_statistics(input(rep), n, variant, workspace, s, d_result);
    });
    m.statistics.push_back(row);
  }
  const auto launch = [&](const float* in) {
    launch_shuffle<StatsReductionF32x4, kShuffleBlockThreads, kShuffleUnroll>(
        StatsReductionF32x4{{in, n}}, workspace, s.get(), d_result, "ablation/f32x4");
  };
  m.ablation.variant = "warp-shuffle, float sum per float4";
  launch(input(0));
  m.ablation.result = download_one(d_result, s);
  m.ablation.ms = median_ms(s, repetitions, no_setup, [&](int rep) { launch(input(rep)); });
}

/// The books' float sums, at the sizes they accept; in-place kernels work on `copy`, restored
/// and the L2 flushed (`flush`) before every sample.
void measure_textbook(std::size_t n, const std::vector<std::string>& variants,
                      RotatingInputs& input, int repetitions, DeviceBuffer<float>& copy,
                      DeviceBuffer<std::byte>& flush, ReduceWorkspace& workspace, StreamView s,
                      SizeMeasurement& m) {
  DeviceBuffer<float> outputs(std::max<std::size_t>(n / kTextbookPccBlock, 1));
  for (const std::string& variant : variants) {
    if (!textbook_requirement(variant, n).empty()) continue;
    const bool in_place = textbook_in_place(variant);
    const auto restore = [&](int rep) {
      if (!in_place) return;
      DCS_CUDA_CHECK(cudaMemcpyAsync(copy.data(), input(rep), n * sizeof(float),
                                     cudaMemcpyDeviceToDevice, s.get()));
      DCS_CUDA_CHECK(cudaMemsetAsync(flush.data(), 0, flush.bytes(), s.get()));
    };
    const auto run = [&](int rep) {
      enqueue_textbook_sum(variant, in_place ? copy.data() : input(rep), n, outputs.data(),
                           workspace, s);
    };
    TextbookTime row;
    row.variant = variant;
    restore(0);
    run(0);
    row.total = download_sum(outputs, textbook_outputs(variant, n), s);
    row.ms = median_ms(s, repetitions, restore, run);
    m.textbook.push_back(row);
  }
}

}  // namespace

SizeMeasurement measure_reductions(std::size_t n, const std::vector<std::string>& variants,
                                   int repetitions, int device) {
  ScopedDevice scoped(device);
  Stream stream;
  const StreamView s = stream.view();
  ReduceWorkspace workspace;
  repetitions = std::max(repetitions, 1);
  const std::size_t l2_bytes = query_device(device).l2_bytes;
  SizeMeasurement m;
  m.n = n;
  m.buffers =
      std::clamp<std::size_t>((4 * l2_bytes + n * sizeof(float) - 1) / (n * sizeof(float)), 1, 64);
  RotatingInputs input;
  for (std::size_t b = 0; b < m.buffers; ++b) {
    input.buffers.emplace_back(n);
    fill_uniform(input.buffers.back().data(), n, 1000 + b, s);
  }
  DeviceBuffer<float> copy(n);
  DeviceBuffer<std::byte> flush(2 * l2_bytes);
  measure_ceilings(n, input, repetitions, copy, s, m);
  measure_statistics(n, variants, input, repetitions, workspace, s, m);
  measure_textbook(n, variants, input, repetitions, copy, flush, workspace, s, m);
  return m;
}

std::vector<LadderTime> measure_ladder(int device, int repetitions) {
  ScopedDevice scoped(device);
  Stream stream;
  const StreamView s = stream.view();
  ReduceWorkspace workspace;
  constexpr std::size_t n = std::size_t{1} << 24;  // the book's 16M elements
  DeviceBuffer<float> input(n), work(n), outputs(n / kTextbookPccBlock);
  DeviceBuffer<std::byte> flush(2 * query_device(device).l2_bytes);
  fill_ternary(input.data(), n, 2024, s);
  std::vector<float> h_input(n);
  input.download(h_input.data(), n, s);
  s.synchronize();
  double expected = 0.0;
  for (float v : h_input) expected += static_cast<double>(v);

  constexpr std::array<const char*, 9> kLadder{
      "neighbored", "neighbored-less", "interleaved",      "unroll2",         "unroll4",
      "unroll8",    "unroll8-warp",    "unroll8-complete", "unroll8-template"};
  std::vector<LadderTime> rows;
  for (const char* name : kLadder) {
    const std::string variant = name;
    LadderTime row;
    row.variant = variant;
    row.expected = expected;
    row.ms = median_ms(
        s, std::max(repetitions, 1),
        [&](int) {
          DCS_CUDA_CHECK(cudaMemcpyAsync(work.data(), input.data(), n * sizeof(float),
                                         cudaMemcpyDeviceToDevice, s.get()));
          DCS_CUDA_CHECK(cudaMemsetAsync(flush.data(), 0, flush.bytes(), s.get()));
        },
        [&](int) { enqueue_textbook_sum(variant, work.data(), n, outputs.data(), workspace, s); });
    row.total = download_sum(outputs, textbook_outputs(variant, n), s);
    rows.push_back(row);
  }
  return rows;
}

double run_textbook_once(const std::string& name, std::size_t n, int device) {
  ScopedDevice scoped(device);
  if (const std::string requirement = textbook_requirement(name, n); !requirement.empty())
    throw UsageError(requirement + " (got " + std::to_string(n) + ")");
  Stream stream;
  const StreamView s = stream.view();
  ReduceWorkspace workspace;
  DeviceBuffer<float> data(n), outputs(textbook_outputs(name, n));
  fill_ternary(data.data(), n, 7, s);
  enqueue_textbook_sum(name, data.data(), n, outputs.data(), workspace, s);
  return download_sum(outputs, outputs.size(), s);
}

double run_statistics_once(const std::string& name, std::size_t n, int device) {
  ScopedDevice scoped(device);
  Stream stream;
  const StreamView s = stream.view();
  ReduceWorkspace workspace;
  DeviceBuffer<float> data(n);
  fill_uniform(data.data(), n, 11, s);
  return finalize(device_statistics(data.data(), n, name, workspace, s)).mean;
}

}  // namespace dcs::cuda::detail
