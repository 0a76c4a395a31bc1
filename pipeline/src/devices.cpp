// Devices: --device resolved, the backend factory, the workers of a run, a rank's share.
#include "devices.hpp"

#include <sched.h>

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/cuda/ewald_backend.hpp"
#include "dcs/cuda/msm_backend.hpp"
#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "dcs/msm.hpp"
#include "dcs/parallel.hpp"
#include "dcs/periodic/ewald_backend.hpp"
#include "dcs/periodic/pmepot_backend.hpp"
#include "dcs/pipeline/mpi.hpp"

namespace dcs {

DeviceChoice resolve_device(const DeviceRequest& request, const BackendOptions& options) {
  auto all_gpus = [] {
    std::vector<int> ordinals;
    for (const cuda::DeviceInfo& d : cuda::cuda_devices()) ordinals.push_back(d.ordinal);
    return ordinals;
  };
  switch (request.kind) {
    case DeviceRequest::Kind::kCpu: return {BackendKind::CpuFast, {0}};
    case DeviceRequest::Kind::kAuto:
      // A CPU kernel name selects the CPU, so --kernel simd-avx2 works without --device cpu.
      for (const VariantInfo& variant : cpu_variants())
        if (variant.kind == VariantKind::Potential && variant.name == options.kernel)
          return {BackendKind::CpuFast, {0}};
      if (cuda::cuda_available()) return {BackendKind::Cuda, all_gpus()};
      log().info("no usable GPU ({}); using the CPU", cuda::cuda_unavailable_reason());
      return {BackendKind::CpuFast, {0}};
    case DeviceRequest::Kind::kCuda: break;
  }
  const std::string text = to_string(request);
  if (!cuda::cuda_available())
    throw UsageError("--device " + text + ": " + cuda::cuda_unavailable_reason());
  if (request.ordinals.empty()) return {BackendKind::Cuda, all_gpus()};
  const std::size_t visible = cuda::cuda_devices().size();
  for (const int ordinal : request.ordinals)
    if (ordinal >= static_cast<int>(visible))
      throw UsageError(fmt::format("--device {}: only {} CUDA device(s) visible", text, visible));
  return {BackendKind::Cuda, request.ordinals};
}

std::unique_ptr<PotentialBackend> make_backend(BackendKind kind, const BackendOptions& options) {
  switch (kind) {
    case BackendKind::CpuReference: return make_cpu_reference_backend(options);
    case BackendKind::CpuFast:
      if (options.kernel == "reference") return make_cpu_reference_backend(options);
      return make_cpu_fast_backend(options);
    case BackendKind::Cuda: return cuda::make_cuda_backend(options);
  }
  throw InternalError("make_backend: unknown backend kind");
}

}  // namespace dcs

namespace dcs::pipeline {

void Workers::add_backend(std::unique_ptr<PotentialBackend> backend) {
  backends.push_back(backend.get());
  list.push_back(backend.get());
  owned.push_back(std::move(backend));
}

void Workers::add_source(std::unique_ptr<MapSource> source) {
  list.push_back(source.get());
  owned.push_back(std::move(source));
}

PotentialBackend& Workers::lead() const {
  if (backends.empty()) throw InternalError("these workers serve a map; none computes potentials");
  return *backends.front();
}

std::string Workers::device_names(const char* separator) const {
  std::string names;
  for (std::size_t w = 0; w < list.size(); ++w)
    names += (w ? separator : "") + list[w]->device_name();
  return names;
}

Workers make_workers(const ComputeRequest& compute, const MethodRequest& method) {
  // Every method takes the GPUs when there are any (msm: dcs/cuda/msm_backend.hpp), else the CPU;
  // rank_local_config() gives each MPI rank its GPU on the same rule.
  // --preset pmepot's reciprocal-only map has a CPU form only (check_config() refuses
  // --device cuda): the default device means the CPU there.
  const DeviceRequest device =
      method.pmepot ? DeviceRequest{DeviceRequest::Kind::kCpu, {}} : compute.device;
  const DeviceChoice choice = resolve_device(device, compute.backend);
  Workers workers;
  workers.on_gpu = choice.kind == BackendKind::Cuda;
  const unsigned per_gpu = compute.gpu_workers == 0 ? 1 : compute.gpu_workers;
  if (per_gpu > 8) throw UsageError(fmt::format("--gpu-workers must be 1..8, got {}", per_gpu));
  if (choice.kind == BackendKind::Cuda) {
    // Each GPU's context starts on its own thread: a context takes 0.1-0.3 s to create, and
    // one after the other they were the serial start of a several-GPU run. The workers of one
    // GPU stand side by side in the list (GPU-major).
    const std::size_t count = choice.ordinals.size() * per_gpu;
    std::vector<std::unique_ptr<PotentialBackend>> made(count);
    parallel_for(count, static_cast<unsigned>(count), [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        BackendOptions options = compute.backend;
        options.device = choice.ordinals[i / per_gpu];
        made[i] = make_backend(choice.kind, options);
        // MSM wraps the exact CUDA backend, which keeps the reductions and points;
        // ewald wraps it the same way (kernels/src/periodic).
        if (method.kind == Method::kMsm)
          made[i] = cuda::make_msm_cuda_backend(std::move(made[i]),
                                                msm_parameters(method.msm_error), options);
        if (method.kind == Method::kEwald)
          made[i] = cuda::make_ewald_cuda_backend(
              std::move(made[i]), periodic::ewald_settings(method.ewald_error), options);
      }
    });
    for (auto& backend : made) workers.add_backend(std::move(backend));
  } else {
    if (compute.cpu_workers < 1 || compute.cpu_workers > 64)
      throw UsageError(fmt::format("--cpu-workers must be 1..64, got {}", compute.cpu_workers));
    const unsigned threads = resolve_threads(compute.backend.threads);
    for (unsigned w = 0; w < compute.cpu_workers; ++w) {
      BackendOptions options = compute.backend;
      // Split the threads between the workers (each gets at least one).
      options.threads = std::max(
          1u, threads / compute.cpu_workers + (w < threads % compute.cpu_workers ? 1u : 0u));
      std::unique_ptr<PotentialBackend> backend = make_backend(choice.kind, options);
      // MSM wraps the exact backend, which keeps the reductions and the points.
      if (method.kind == Method::kMsm)
        // The workers prepare at once: each one's lattices get an equal share of --memory-limit.
        backend = make_msm_backend(
            std::move(backend), msm_parameters(method.msm_error), options,
            compute.memory_limit ? *compute.memory_limit / compute.cpu_workers : 0);
      // Ewald wraps it the same way: the periodic potential of the cell (dcs/periodic/).
      if (method.kind == Method::kEwald)
        backend = method.pmepot ? periodic::make_pmepot_backend(std::move(backend), options)
                                : periodic::make_ewald_backend(
                                      std::move(backend),
                                      periodic::ewald_settings(method.ewald_error), options);
      workers.add_backend(std::move(backend));
    }
  }
  return workers;
}

void prepare_workers(const std::vector<MapSource*>& workers, const System& system,
                     const GridSpec& grid, const Physics& physics) {
  parallel_for(workers.size(), static_cast<unsigned>(workers.size()),
               [&](std::size_t begin, std::size_t end) {
                 for (std::size_t i = begin; i < end; ++i)
                   workers[i]->prepare(system, grid, physics);
               });
}

SlabHint combined_hint(const Workers& workers) {
  SlabHint hint;
  for (const MapSource* w : workers.list) {
    hint.plane_multiple =
        std::lcm(hint.plane_multiple, std::max<std::int64_t>(1, w->slab_hint().plane_multiple));
    hint.min_points = std::max(hint.min_points, w->slab_hint().min_points);
  }
  return hint;
}

RunConfig rank_local_config(const RunConfig& config) {
  RunConfig mine = config;
  const MpiInfo& mpi = mpi_info();
  if (!mpi.active) return mine;
  // The CPUs this rank may run on: the launcher may have bound it (OpenMPI binds each of one or
  // two ranks to a single core by default), and threads beyond them only take turns.
  cpu_set_t allowed_set;
  CPU_ZERO(&allowed_set);
  const unsigned hardware = resolve_threads(0);
  const unsigned allowed = sched_getaffinity(0, sizeof allowed_set, &allowed_set) == 0
                               ? static_cast<unsigned>(CPU_COUNT(&allowed_set))
                               : hardware;
  if (allowed < hardware && allowed * static_cast<unsigned>(mpi.local_size) < hardware &&
      mpi.local_rank == 0)
    log().warn(
        "the launcher bound each rank to {} of this node's {} CPUs, so {} rank(s) leave {} "
        "idle; start with `mpirun --bind-to none` (or --map-by ppr:<ranks>:node:PE=<cpus>) "
        "to use them",
        allowed, hardware, mpi.local_size,
        hardware - allowed * static_cast<unsigned>(mpi.local_size));
  if (mine.compute.backend.threads == 0)
    mine.compute.backend.threads =
        allowed < hardware ? std::max(1u, allowed)
                           : std::max(1u, hardware / static_cast<unsigned>(mpi.local_size));
  const bool any_gpu = config.compute.device.kind == DeviceRequest::Kind::kAuto ||
                       (config.compute.device.kind == DeviceRequest::Kind::kCuda &&
                        config.compute.device.ordinals.empty());
  if (any_gpu && !config.method.pmepot && cuda::cuda_available()) {  // pmepot: CPU only
    const DeviceChoice choice = resolve_device(config.compute.device, config.compute.backend);
    if (choice.kind == BackendKind::Cuda) {
      const int gpus = static_cast<int>(choice.ordinals.size());
      const int ordinal = choice.ordinals[static_cast<std::size_t>(mpi.local_rank % gpus)];
      if (mpi.local_size > gpus && mpi.local_rank == gpus)
        log().warn(
            "{} ranks on this node share {} GPU(s); give each rank its own GPU (one rank "
            "per GPU) for full speed",
            mpi.local_size, gpus);
      mine.compute.device = {DeviceRequest::Kind::kCuda, {ordinal}};
    }
  }
  return mine;
}

}  // namespace dcs::pipeline
