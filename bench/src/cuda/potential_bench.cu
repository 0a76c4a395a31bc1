// `dcs bench --potential`: the special-function-unit ceiling measured by its own
// microbenchmark, then every registry kernel as atom-evaluations per second and % of it.
//
// Timing: CUDA events around all launches of one evaluation (every chunk, every plane), one
// warm-up, the median of `repetitions`. The per-plane textbook kernels would need seconds to
// minutes per evaluation of a 256^3 grid (scatter: 3-4 minutes at 100 000 atoms on an H200), so
// each is timed on the first planes of the grid, as many as fit in about 0.15 s, and on one plane
// of fewer atoms (whole chunks) when one plane of all atoms would take over 0.3 s; the rate per
// atom-point pair does not depend on how many planes are done. The table says what was
// measured. Each result is checked against the float64 reference on sampled points.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.hpp"
#include "dcs/atoms.hpp"
#include "dcs/backend.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/cuda_bench.hpp"
#include "dcs/error.hpp"
#include "dcs/spatial_order.hpp"
#include "device_buffer.hpp"
#include "device_info.hpp"
#include "launch.hpp"
#include "points/points_kernel.hpp"
#include "potential/registry.hpp"
#include "stream.hpp"

namespace dcs::cuda {
namespace {

using detail::DeviceBuffer;
using detail::Event;
using detail::PotentialKernel;
using detail::StreamView;

// --- The ceiling ---------------------------------------------------------------------------------

constexpr int kChains = 8;  // independent rsqrt chains per thread (latency hiding)
constexpr int kCeilingThreads = 256;

/// Only MUFU.RSQ in the loop (checked in the SASS: with -ftz=true rsqrtf is one MUFU.RSQ):
/// x <- rsqrt(x) converges towards 1 without under- or overflow.
struct RsqrtStep {
  __device__ __forceinline__ static float next(float x) { return rsqrtf(x); }
};

/// MUFU.RSQ and MUFU.EX2 alternating in each chain (the screened term's two special functions
/// per pair): x <- 2^(-rsqrt(x)/2) stays in [0.5, 1.5]; the FMUL goes to the FMA pipe.
struct RsqrtEx2Step {
  __device__ __forceinline__ static float next(float x) { return exponential2(-0.5f * rsqrtf(x)); }
};

/// `iterations` of Step::next on each of kChains independent chains per thread, which keep the
/// unit busy while each chain waits for its previous result.
template <class Step>
__global__ void __launch_bounds__(kCeilingThreads) ceiling_kernel(float* gm_out, int iterations) {
  float value[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c)
    value[c] = 1.5f + 1e-3f * static_cast<float>(threadIdx.x + static_cast<unsigned>(c));
#pragma unroll 4
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) value[c] = Step::next(value[c]);
  }
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) sum += value[c];
  gm_out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

struct Ceiling {
  double rsqrt_ex2_per_second = 0.0;  ///< rsqrt + ex2 pairs per second
  double rsqrt_per_second = 0.0;
  double per_sm_per_clock = 0.0;
  double median_ms = 0.0;
  long long blocks = 0;
  int iterations = 0;
};

template <class Body>
std::vector<double> time_repeated(int repetitions, StreamView stream, Body&& body) {
  Event start, stop;
  body();  // warm-up
  std::vector<double> ms;
  for (int rep = 0; rep < repetitions; ++rep) {
    start.record(stream);
    body();
    stop.record(stream);
    stop.synchronize();
    ms.push_back(stop.elapsed_ms_since(start));
  }
  return ms;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

Ceiling measure_ceiling(const DeviceInfo& device, int repetitions, StreamView stream) {
  Ceiling ceiling;
  ceiling.blocks = static_cast<long long>(device.multiprocessors) * 16;  // several waves' worth
  ceiling.iterations = 1 << 15;
  DeviceBuffer<float> d_out(static_cast<std::size_t>(ceiling.blocks) * kCeilingThreads);
  const detail::LaunchConfig config{dim3(static_cast<unsigned>(ceiling.blocks)),
                                    dim3(kCeilingThreads), 0};
  detail::log_launch("rsqrt ceiling", config);
  ceiling.median_ms = median(time_repeated(repetitions, stream, [&] {
    ceiling_kernel<RsqrtStep>
        <<<config.grid, config.block, 0, stream.get()>>>(d_out.data(), ceiling.iterations);
    DCS_CUDA_CHECK_LAUNCH("rsqrt ceiling", stream.get());
  }));
  const double ex2_ms = median(time_repeated(repetitions, stream, [&] {
    ceiling_kernel<RsqrtEx2Step>
        <<<config.grid, config.block, 0, stream.get()>>>(d_out.data(), ceiling.iterations);
    DCS_CUDA_CHECK_LAUNCH("rsqrt + ex2 ceiling", stream.get());
  }));
  const double count =
      static_cast<double>(ceiling.blocks) * kCeilingThreads * kChains * ceiling.iterations;
  ceiling.rsqrt_per_second = count / (1e-3 * ceiling.median_ms);
  ceiling.rsqrt_ex2_per_second = count / (1e-3 * ex2_ms);
  ceiling.per_sm_per_clock = ceiling.rsqrt_per_second /
                             (static_cast<double>(device.multiprocessors) * device.clock_khz * 1e3);
  return ceiling;
}

// --- The kernels
// ------------------------------------------------------------------------------------

/// Atoms spread uniformly over the grid box, charges uniform in [-1, 1] e (fixed seed).
System random_system(std::size_t atoms, const GridSpec& grid, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> charge(-1.0, 1.0);
  System system;
  system.source_path = "random";
  system.atoms.resize(atoms);
  for (Atom& atom : system.atoms) {
    for (int axis = 0; axis < 3; ++axis) {
      std::uniform_real_distribution<double> position(
          grid.origin[axis],
          grid.origin[axis] + static_cast<double>(grid.counts[axis] - 1) * grid.spacing[axis]);
      atom.position[axis] = position(rng);
    }
    atom.charge = charge(rng);
  }
  return system;
}

struct Problem {
  GridSpec grid;
  Physics physics;
  std::string model = "coulomb";
  System system;
  DeviceBuffer<GridAtom> d_atoms;
};

/// Runs every chunk of `atom_count` atoms of `kernel` on planes [0, planes).
void evaluate(const PotentialKernel& kernel, const Problem& problem, std::size_t atom_count,
              int planes, float* d_slab, StreamView stream) {
  if (kernel.requirements.zeroed_output)
    DCS_CUDA_CHECK(cudaMemsetAsync(
        d_slab, 0, problem.grid.plane_points() * static_cast<std::size_t>(planes) * sizeof(float),
        stream.get()));
  const float min_r2 =
      static_cast<float>(problem.physics.min_distance * problem.physics.min_distance);
  const PairTerm term = pair_term(problem.physics);
  detail::enqueue_potential(kernel, problem.grid, Slab{0, planes}, min_r2, problem.d_atoms.data(),
                            atom_count, d_slab, stream, term.kind,
                            static_cast<float>(screened_exponent_scale(term.kappa)));
}

/// 256 indices into `count` values, drawn from a fixed seed: every run samples the same ones.
std::vector<std::size_t> sample_indices(std::size_t count) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::size_t> pick(0, count - 1);
  std::vector<std::size_t> indices(256);
  for (std::size_t& index : indices) index = pick(rng);
  return indices;
}

/// Largest |error| over sampled points of the slab, relative to max|V| of the slab.
double sampled_error(const Problem& problem, std::size_t atom_count,
                     const std::vector<float>& slab) {
  System used = problem.system;
  used.atoms.resize(atom_count);
  double max_abs = 0.0;
  for (float value : slab) max_abs = std::max(max_abs, std::fabs(static_cast<double>(value)));
  const std::vector<std::size_t> indices = sample_indices(slab.size());
  std::vector<Vec3> points;
  for (const std::size_t index : indices) {
    const auto plane_points = static_cast<std::size_t>(problem.grid.plane_points());
    const auto k = static_cast<std::int64_t>(index / plane_points);
    const std::size_t in_plane = index % plane_points;
    const auto j =
        static_cast<std::int64_t>(in_plane / static_cast<std::size_t>(problem.grid.nx()));
    const auto i =
        static_cast<std::int64_t>(in_plane % static_cast<std::size_t>(problem.grid.nx()));
    points.push_back(problem.grid.point(i, j, k));
  }
  std::vector<double> reference(points.size());
  reference_potential(used, problem.physics, points.data(), points.size(), reference.data());
  double max_err = 0.0;
  for (std::size_t p = 0; p < points.size(); ++p)
    max_err = std::max(max_err, std::fabs(static_cast<double>(slab[indices[p]]) - reference[p]));
  return max_abs > 0.0 ? max_err / max_abs : max_err;
}

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string scientific(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3e", value);
  return buffer;
}

/// The kernels to run: the named ones (checked against the registry), else all.
std::vector<const PotentialKernel*> selected_kernels(const BenchOptions& options) {
  std::vector<const PotentialKernel*> kernels;
  if (options.kernels.empty()) {
    for (const PotentialKernel& kernel : detail::potential_kernels()) kernels.push_back(&kernel);
  } else {
    for (const std::string& name : options.kernels)
      kernels.push_back(&detail::find_potential_kernel(name));
  }
  return kernels;
}

BenchTable ceiling_table(const DeviceInfo& device, const Ceiling& ceiling) {
  BenchTable ceiling_table;
  ceiling_table.name = "rsqrt_ceiling";
  ceiling_table.title =
      "rsqrt ceiling on " + detail::describe_device(device) + " (MUFU.RSQ microbenchmark)";
  ceiling_table.columns = {"quantity", "value"};
  ceiling_table.rows = {
      {"rsqrt per second", scientific(ceiling.rsqrt_per_second)},
      {"per SM per clock", fixed(ceiling.per_sm_per_clock, 2)},
      {"rsqrt + ex2 pairs per second (screened term)", scientific(ceiling.rsqrt_ex2_per_second)},
      {"SM clock used (device max, MHz)", fixed(device.clock_khz / 1e3, 0)},
      {"multiprocessors", std::to_string(device.multiprocessors)},
      {"median time (ms)", fixed(ceiling.median_ms, 3)},
      {"launch", std::to_string(ceiling.blocks) + " blocks x " + std::to_string(kCeilingThreads) +
                     " threads x " + std::to_string(kChains) + " chains x " +
                     std::to_string(ceiling.iterations) + " iterations"}};
  ceiling_table.notes = {
      "Each thread runs independent x <- rsqrtf(x) chains; the loop body is MUFU.RSQ only. "
      "Per SM per clock uses the device's maximum SM clock (the clock actually held may differ)."};
  return ceiling_table;
}

/// A table of kernels against the measured ceiling, without rows or notes: `what` on the device
/// in its title, `size` (the grid, the points) and `where` (the planes measured, the box) its
/// columns between the model and the atoms, the atoms and the median.
BenchTable against_ceiling(std::string name, const std::string& what, const DeviceInfo& device,
                           const Ceiling& ceiling, const char* size, const char* where) {
  return {.name = std::move(name),
          .title = what + " on " + detail::describe_device(device) +
                   ", % of the measured ceiling " + scientific(ceiling.rsqrt_per_second) +
                   " rsqrt/s",
          .columns = {"kernel", "model", size, "atoms", where, "median ms", "atom-evals/s",
                      "% of ceiling", "max err / max abs V"}};
}

/// The kernels' table without rows.
BenchTable kernels_table(const DeviceInfo& device, const Ceiling& ceiling, int repetitions) {
  BenchTable table = against_ceiling("potential_kernels", "Potential kernels", device, ceiling,
                                     "grid", "measured on");
  table.notes = {
      "atom-evals/s = atoms x points / median time of one evaluation (all chunks, all launches), "
      "after one warm-up, median of " +
          std::to_string(repetitions) + " repetitions (CUDA events).",
      "Per-plane kernels are timed on the first planes only (and scatter on fewer atoms when one "
      "plane would take over 0.3 s): the per-pair rate does not depend on the plane count.",
      "max err / max abs V: 256 sampled points against the float64 CPU reference, relative to the "
      "largest |V| of the computed planes.",
      "% of ceiling: coulomb (1/r, MUFU.RSQ) and distance (1/r^2 for eps = 4r, MUFU.RCP) against "
      "the rsqrt ceiling; screened (exp(-r/lambda)/r at 0.15 M, MUFU.RSQ + MUFU.EX2) against the "
      "rsqrt + ex2 ceiling."};
  return table;
}

/// The bench's physics for a model name: 0.15 M in water, or eps = 4r.
Physics bench_physics(const std::string& model) {
  Physics physics;
  if (model == "screened") {
    physics.ionic_strength = 0.15;
    physics.dielectric = kWaterDielectric;
  } else if (model == "distance") {
    physics.dielectric_model = DielectricModel::kDistance;
    physics.dielectric = 4.0;
  } else if (model != "coulomb") {
    throw UsageError("--model " + model + ": coulomb, screened or distance");
  }
  return physics;
}

/// An n^3 grid of 0.5 Å with `atoms` random atoms inside, packed and uploaded.
Problem make_problem(std::int64_t n, std::size_t atoms, const std::string& model,
                     StreamView stream) {
  Problem problem;
  problem.model = model;
  problem.physics = bench_physics(model);
  problem.grid.counts = {n, n, n};
  problem.grid.origin = {0.0, 0.0, 0.0};
  problem.grid.spacing = {0.5, 0.5, 0.5};
  problem.system = random_system(atoms, problem.grid, 1000 + atoms);
  const std::vector<GridAtom> packed =
      pack_grid_atoms(problem.system, problem.grid, coulomb_factor(problem.physics));
  problem.d_atoms = DeviceBuffer<GridAtom>(packed.size());
  problem.d_atoms.upload(packed.data(), packed.size(), stream);
  return problem;
}

/// What one kernel is timed on: the planes from the first and the atoms of each.
struct RunShape {
  int planes;
  std::size_t atoms;
};

/// All planes and atoms, except for a per-plane kernel: one plane with one chunk is probed, then
/// the run sized to about 0.15 s (the first planes, or one plane of fewer whole chunks).
RunShape run_shape(const PotentialKernel& kernel, const Problem& problem, std::size_t atoms,
                   float* d_slab, StreamView stream) {
  constexpr double kTargetSeconds = 0.15;
  const std::int64_t n = problem.grid.nz();
  RunShape shape{static_cast<int>(n), atoms};
  if (!kernel.requirements.per_plane) return shape;
  const std::size_t probe_atoms = std::min(atoms, kernel.requirements.chunk_atoms);
  const auto probe =
      time_repeated(1, stream, [&] { evaluate(kernel, problem, probe_atoms, 1, d_slab, stream); });
  const double per_plane_per_atom = 1e-3 * probe.front() / static_cast<double>(probe_atoms);
  const double one_plane = per_plane_per_atom * static_cast<double>(atoms);
  if (one_plane > 2.0 * kTargetSeconds) {
    const auto chunks = static_cast<std::size_t>(std::max(
        1.0, std::floor(kTargetSeconds / (per_plane_per_atom *
                                          static_cast<double>(kernel.requirements.chunk_atoms)))));
    shape.atoms = std::min(atoms, chunks * kernel.requirements.chunk_atoms);
    shape.planes = 1;
  } else {
    shape.planes = static_cast<int>(
        std::clamp<double>(std::floor(kTargetSeconds / one_plane), 1.0, static_cast<double>(n)));
  }
  return shape;
}

/// Times one kernel on `shape` and checks its planes: the table row.
std::vector<std::string> kernel_row(const PotentialKernel& kernel, const Problem& problem,
                                    std::size_t atoms, RunShape shape, int repetitions,
                                    const Ceiling& ceiling, DeviceBuffer<float>& d_slab,
                                    detail::Stream& stream) {
  const auto ms = time_repeated(repetitions, stream.view(), [&] {
    evaluate(kernel, problem, shape.atoms, shape.planes, d_slab.data(), stream.view());
  });
  const double median_ms = median(ms);
  const double pairs = static_cast<double>(shape.atoms) *
                       static_cast<double>(problem.grid.plane_points()) * shape.planes;
  const double rate = pairs / (1e-3 * median_ms);
  // The screened term needs MUFU.RSQ and MUFU.EX2 per pair: its own ceiling; 1/r^2 needs one
  // MUFU.RCP, which runs at MUFU.RSQ's rate.
  const double limit =
      problem.model == "screened" ? ceiling.rsqrt_ex2_per_second : ceiling.rsqrt_per_second;

  std::vector<float> slab(problem.grid.plane_points() * static_cast<std::size_t>(shape.planes));
  d_slab.download(slab.data(), slab.size(), stream.view());
  stream.synchronize();
  const double error = sampled_error(problem, shape.atoms, slab);
  const std::int64_t n = problem.grid.nz();
  return {std::string(kernel.name),
          problem.model,
          std::to_string(n) + "^3",
          std::to_string(atoms),
          std::to_string(shape.planes) + " planes x " + std::to_string(shape.atoms) + " atoms",
          fixed(median_ms, 3),
          scientific(rate),
          fixed(100.0 * rate / limit, 1),
          scientific(error)};
}

// --- The points kernel (compute_points) ----------------------------------------------------

/// The points table's problem: `atoms` random atoms at protein density (11 Å^3 per atom) in a
/// cube, charges uniform in [-1, 1], and `count` random points in the same cube in Morton order
/// (as the pipeline sorts them), both with fixed seeds.
struct PointsProblem {
  Physics physics;
  std::string model;
  System system;
  std::vector<Vec3> points;
  double side = 0.0;
};

PointsProblem make_points_problem(std::size_t count, std::size_t atoms, const std::string& model) {
  PointsProblem problem;
  problem.model = model;
  problem.physics = bench_physics(model);
  problem.side = std::cbrt(11.0 * static_cast<double>(atoms));
  GridSpec box;  // random_system() spreads atoms over a grid's box
  box.counts = {2, 2, 2};
  box.origin = {0.0, 0.0, 0.0};
  box.spacing = {problem.side, problem.side, problem.side};
  problem.system = random_system(atoms, box, 2000 + atoms);
  std::mt19937_64 rng(3000 + count);
  std::uniform_real_distribution<double> u(0.0, problem.side);
  std::vector<Vec3> points(count);
  for (Vec3& p : points) p = {u(rng), u(rng), u(rng)};
  const std::vector<std::size_t> order = spatial_order(points);
  problem.points.resize(count);
  for (std::size_t i = 0; i < count; ++i) problem.points[i] = points[order[i]];
  return problem;
}

/// Times the points kernel with one rsqrt policy on `problem` (device buffers given) and checks
/// 256 sampled points against the float64 reference: the table row.
std::vector<std::string> points_row(const PointsProblem& problem, detail::PointsRsqrt rsqrt,
                                    const char* name, const DeviceBuffer<detail::PointsAtom>& atoms,
                                    const DeviceBuffer<double>& d_points,
                                    DeviceBuffer<float>& d_out, int repetitions,
                                    const Ceiling& ceiling, detail::Stream& stream) {
  const PairTerm term = pair_term(problem.physics);
  detail::PointsLaunch launch;
  launch.d_points = d_points.data();
  launch.d_out = d_out.data();
  launch.n = problem.points.size();
  launch.d_atoms = atoms.data();
  launch.atom_count = atoms.size();
  launch.chunk_atoms = detail::kProductionChunkAtoms;
  launch.min_distance = problem.physics.min_distance;
  launch.pair = term.kind;
  launch.screen_c = static_cast<float>(screened_exponent_scale(term.kappa));
  launch.rsqrt = rsqrt;
  const auto ms = time_repeated(repetitions, stream.view(),
                                [&] { detail::launch_points(launch, stream.view()); });
  const double median_ms = median(ms);
  const double pairs =
      static_cast<double>(problem.points.size()) * static_cast<double>(atoms.size());
  const double rate = pairs / (1e-3 * median_ms);
  const double limit =
      problem.model == "screened" ? ceiling.rsqrt_ex2_per_second : ceiling.rsqrt_per_second;

  std::vector<float> values(problem.points.size());
  d_out.download(values.data(), values.size(), stream.view());
  stream.synchronize();
  const std::vector<std::size_t> indices = sample_indices(values.size());
  std::vector<Vec3> sampled;
  for (const std::size_t index : indices) sampled.push_back(problem.points[index]);
  std::vector<double> reference(sampled.size());
  reference_potential(problem.system, problem.physics, sampled.data(), sampled.size(),
                      reference.data());
  double max_abs = 0.0, max_err = 0.0;
  for (std::size_t p = 0; p < sampled.size(); ++p) {
    max_abs = std::max(max_abs, std::fabs(reference[p]));
    max_err = std::max(max_err, std::fabs(static_cast<double>(values[indices[p]]) - reference[p]));
  }
  return {name,
          problem.model,
          std::to_string(problem.points.size()),
          std::to_string(atoms.size()),
          fixed(problem.side, 1) + " A cube",
          fixed(median_ms, 3),
          scientific(rate),
          fixed(100.0 * rate / limit, 1),
          scientific(max_abs > 0.0 ? max_err / max_abs : max_err)};
}

/// The points table: for every model, point count and atom count, the points kernel with its
/// default rsqrt policy ("points") and MUFU only ("points-mufu").
BenchTable points_table(const DeviceInfo& device, const Ceiling& ceiling,
                        const BenchOptions& options, detail::Stream& stream) {
  const int repetitions = std::max(1, options.repetitions);
  BenchTable table = against_ceiling("points_kernel", "Points kernel (compute_points)", device,
                                     ceiling, "points", "box");
  table.notes = {
      "Atoms uniform at protein density (11 A^3 per atom) in a cube, random points in the same "
      "cube in Morton order; one launch per evaluation (CUDA events around the kernel only, no "
      "transfers), after one warm-up, median of " +
          std::to_string(repetitions) + " repetitions.",
      "points: 4 pairs in 16 take the FMA-pipe rsqrt (DCS_POINTS_SOFTWARE in a variant build); "
      "points-mufu: every rsqrt on MUFU; [knobs]: a build with other compile-time knobs "
      "(points_kernel.cu).",
      "% of ceiling as in the kernel table: screened against the rsqrt + ex2 ceiling.",
      "max err / max abs V: 256 sampled points against the float64 CPU reference."};
  // A build with other compile-time knobs (scripts/gpu/points_variants.sh) names its rows so.
  const std::string tag = detail::points_variant();
  const std::string variant = tag.empty() ? "" : " [" + tag + "]";
  const std::vector<std::size_t> atom_counts =
      options.atom_counts.empty() ? std::vector<std::size_t>{16000} : options.atom_counts;
  const std::vector<std::string> models =
      options.models.empty() ? std::vector<std::string>{"coulomb"} : options.models;
  for (const std::string& model : models) {
    for (const std::size_t count : options.point_counts) {
      if (count == 0) throw UsageError("--points: at least one point");
      for (const std::size_t atom_count : atom_counts) {
        if (atom_count == 0) throw UsageError("--atoms: at least one atom");
        const PointsProblem problem = make_points_problem(count, atom_count, model);
        const double factor = coulomb_factor(problem.physics);
        std::vector<std::uint32_t> rank;  // no skips here
        const std::vector<detail::PointsAtom> packed =
            detail::pack_points_atoms(problem.system, factor, rank);
        DeviceBuffer<detail::PointsAtom> d_atoms(packed.size());
        d_atoms.upload(packed.data(), packed.size(), stream.view());
        DeviceBuffer<double> d_points(3 * count);
        d_points.upload(problem.points.front().data(), 3 * count, stream.view());
        DeviceBuffer<float> d_out(count);
        table.rows.push_back(points_row(problem, detail::PointsRsqrt::kBalanced,
                                        ("points" + variant).c_str(), d_atoms, d_points, d_out,
                                        repetitions, ceiling, stream));
        table.rows.push_back(points_row(problem, detail::PointsRsqrt::kMufu,
                                        ("points-mufu" + variant).c_str(), d_atoms, d_points, d_out,
                                        repetitions, ceiling, stream));
      }
    }
  }
  return table;
}

}  // namespace

std::vector<BenchTable> benchmark_potential_kernels(const BenchOptions& options) {
  const DeviceInfo device = detail::query_device(options.device);
  detail::ScopedDevice scoped(device.ordinal);
  detail::Stream stream;
  const int repetitions = std::max(1, options.repetitions);
  const std::vector<const PotentialKernel*> kernels = selected_kernels(options);
  const std::vector<std::int64_t> sizes =
      options.grid_sizes.empty() ? std::vector<std::int64_t>{256} : options.grid_sizes;
  const std::vector<std::size_t> atom_counts = options.atom_counts.empty()
                                                   ? std::vector<std::size_t>{2000, 16000, 100000}
                                                   : options.atom_counts;

  const Ceiling ceiling = measure_ceiling(device, repetitions, stream.view());
  if (!options.point_counts.empty())
    return {ceiling_table(device, ceiling), points_table(device, ceiling, options, stream)};
  BenchTable table = kernels_table(device, ceiling, repetitions);
  const std::vector<std::string> models =
      options.models.empty() ? std::vector<std::string>{"coulomb"} : options.models;
  for (const std::string& model : models) {
    for (const std::int64_t n : sizes) {
      for (const std::size_t atoms : atom_counts) {
        const Problem problem = make_problem(n, atoms, model, stream.view());
        DeviceBuffer<float> d_slab(problem.grid.points());
        for (const PotentialKernel* kernel : kernels) {
          if (model != "coulomb" && !kernel->requirements.every_model) continue;
          const RunShape shape = run_shape(*kernel, problem, atoms, d_slab.data(), stream.view());
          table.rows.push_back(
              kernel_row(*kernel, problem, atoms, shape, repetitions, ceiling, d_slab, stream));
        }
      }
    }
  }
  return {ceiling_table(device, ceiling), table};
}

}  // namespace dcs::cuda
