// The registry of GPU reduction variants: one row per name of reduction_registry.hpp (same
// order, checked at compile time), each row the launch wrappers of that variant for the
// statistics and the validation metrics. A new variant is one row here and one name there.
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "device_reduce.cuh"
#include "reduce.hpp"

namespace dcs::cuda::detail {
namespace {

template <class R>
using Launcher = void (*)(const R&, ReduceWorkspace&, cudaStream_t, typename R::Accum*,
                          const char*);

struct VariantLaunch {
  std::string_view name;
  Launcher<StatsReduction> statistics;
  Launcher<DiffReduction> difference;
};

/// Threads per block of the books' statistics kernels (warp-shuffle: kShuffleBlockThreads, also
/// 256). 256 keeps the in-place scratch slots and the shared trees of StatsAccum (48 bytes) small
/// and leaves room for 8 blocks per multiprocessor.
constexpr int kBlock = 256;
/// PMPP Fig. 10.15's COARSE_FACTOR for the statistics form: each thread folds 2*8 elements.
constexpr int kCoarseFactor = 8;

template <BlockReduceAlgo Algo, int ItemsPerLeaf>
constexpr VariantLaunch in_place(std::string_view name) {
  return {name, &launch_in_place<StatsReduction, Algo, kBlock, ItemsPerLeaf>,
          &launch_in_place<DiffReduction, Algo, kBlock, ItemsPerLeaf>};
}
template <int ItemsPerThread, Merge How>
constexpr VariantLaunch shared_tree(std::string_view name) {
  return {name,
          &launch_value<StatsReduction, BlockReduceAlgo::SharedMemory, kBlock, ItemsPerThread, How>,
          &launch_value<DiffReduction, BlockReduceAlgo::SharedMemory, kBlock, ItemsPerThread, How>};
}

using Algo = BlockReduceAlgo;
constexpr std::array<VariantLaunch, kReductionCount> kLaunchTable{{
    in_place<Algo::Simple, 1>("simple"),
    in_place<Algo::Convergent, 1>("convergent"),
    shared_tree<2, Merge::SecondPass>("shared"),
    shared_tree<2, Merge::Atomic>("segmented"),
    shared_tree<2 * kCoarseFactor, Merge::Atomic>("coarsened"),
    in_place<Algo::Neighbored, 1>("neighbored"),
    in_place<Algo::NeighboredLess, 1>("neighbored-less"),
    in_place<Algo::Interleaved, 1>("interleaved"),
    in_place<Algo::Interleaved, 2>("unroll2"),
    in_place<Algo::Interleaved, 4>("unroll4"),
    in_place<Algo::Interleaved, 8>("unroll8"),
    in_place<Algo::UnrolledWarp, 8>("unroll8-warp"),
    in_place<Algo::CompleteUnroll, 8>("unroll8-complete"),
    in_place<Algo::TemplateUnroll, 8>("unroll8-template"),
    {"warp-shuffle", &launch_shuffle<StatsReduction, kShuffleBlockThreads, kShuffleUnroll>,
     &launch_shuffle<DiffReduction, kShuffleBlockThreads, kShuffleUnroll>},
}};

static_assert(registry_matches_table(BackendKind::Cuda, VariantKind::Reduction, kLaunchTable),
              "kLaunchTable must list the variant table's CUDA reductions in table order");

const VariantLaunch& find_launch(const std::string& name) {
  check_reduction_name(name);
  return kLaunchTable[reduction_index(name)];
}

}  // namespace

int ReduceWorkspace::multiprocessors() {
  if (multiprocessors_ == 0) {
    int device = 0;
    DCS_CUDA_CHECK(cudaGetDevice(&device));
    DCS_CUDA_CHECK(
        cudaDeviceGetAttribute(&multiprocessors_, cudaDevAttrMultiProcessorCount, device));
  }
  return multiprocessors_;
}

void* ReduceWorkspace::grow(DeviceBuffer<std::byte>& buffer, std::size_t bytes) {
  if (buffer.bytes() < bytes) {
    // Round up so that slowly growing requests do not reallocate every call.
    std::size_t rounded = 1u << 12;
    while (rounded < bytes) rounded *= 2;
    buffer = DeviceBuffer<std::byte>();  // free first: the old and new need not coexist
    buffer = DeviceBuffer<std::byte>(rounded);
  }
  return buffer.data();
}

void enqueue_statistics(const float* d_values, std::size_t n, const std::string& variant,
                        ReduceWorkspace& workspace, StreamView stream, StatsAccum* d_result) {
  const VariantLaunch& launch = find_launch(variant);
  if (n == 0) {
    init_result_kernel<StatsReduction><<<1, 1, 0, stream.get()>>>(d_result);
    DCS_CUDA_CHECK_LAUNCH("init_result", stream.get());
    return;
  }
  const std::string name = "statistics/" + variant;
  launch.statistics(StatsReduction{d_values, n}, workspace, stream.get(), d_result, name.c_str());
}

void enqueue_difference(const float* d_values, const double* d_reference, std::size_t n,
                        const std::string& variant, ReduceWorkspace& workspace, StreamView stream,
                        DiffAccum* d_result) {
  const VariantLaunch& launch = find_launch(variant);
  if (n == 0) {
    init_result_kernel<DiffReduction><<<1, 1, 0, stream.get()>>>(d_result);
    DCS_CUDA_CHECK_LAUNCH("init_result", stream.get());
    return;
  }
  const std::string name = "difference/" + variant;
  launch.difference(DiffReduction{d_values, d_reference, n}, workspace, stream.get(), d_result,
                    name.c_str());
}

StatsAccum device_statistics(const float* d_values, std::size_t n, const std::string& variant,
                             ReduceWorkspace& workspace, StreamView stream) {
  StatsAccum* d_result = workspace.result<StatsAccum>();
  StatsAccum* h_result = workspace.host_result<StatsAccum>();
  enqueue_statistics(d_values, n, variant, workspace, stream, d_result);
  DCS_CUDA_CHECK(cudaMemcpyAsync(h_result, d_result, sizeof(StatsAccum), cudaMemcpyDeviceToHost,
                                 stream.get()));
  stream.synchronize();
  return *h_result;
}

DiffAccum device_difference(const float* d_values, const double* d_reference, std::size_t n,
                            const std::string& variant, ReduceWorkspace& workspace,
                            StreamView stream) {
  DiffAccum* d_result = workspace.result<DiffAccum>();
  DiffAccum* h_result = workspace.host_result<DiffAccum>();
  enqueue_difference(d_values, d_reference, n, variant, workspace, stream, d_result);
  DCS_CUDA_CHECK(
      cudaMemcpyAsync(h_result, d_result, sizeof(DiffAccum), cudaMemcpyDeviceToHost, stream.get()));
  stream.synchronize();
  return *h_result;
}

}  // namespace dcs::cuda::detail
