#include "points_job.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "../periodic_config.hpp"
#include "dcs/error.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/io/atom_values.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/colour_map.hpp"
#include "dcs/io/point_list.hpp"
#include "dcs/io/point_table.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/log.hpp"
#include "dcs/pipeline/outputs.hpp"
#include "dcs/spatial_order.hpp"
#include "dcs/stats.hpp"
#include "dcs/timer.hpp"
#include "dcs/version.hpp"
#include "nearest_atom.hpp"
#include "point_set.hpp"
#include "points_memory.hpp"

namespace dcs::pipeline {
namespace {

/// The files a points run writes: <base>.h5 and <base>.csv, and the mesh or the PDB.
struct PointsOutputs {
  std::string h5, csv, mesh, pdb;
  std::vector<std::string> all() const {
    std::vector<std::string> list{h5, csv};
    if (!mesh.empty()) list.push_back(mesh);
    if (!pdb.empty()) list.push_back(pdb);
    return list;
  }
};

const char* kind_name(PointsRequest::Source source) {
  switch (source) {
    case PointsRequest::Source::kAtoms: return "atoms";
    case PointsRequest::Source::kMesh: return "surface";
    case PointsRequest::Source::kList: break;
  }
  return "points";
}

/// -o X.h5 names the table X.h5 and the others X.csv, X.ply, X.pdb; otherwise
/// <stem>.<points|surface|atoms>.* in --output-dir. Each is refused now if it exists (without
/// --force) or is one of the run's inputs.
PointsOutputs plan_outputs(const RunConfig& config, const std::string& input) {
  const PointsRequest& request = *config.points;
  std::string base;
  if (!config.output.hdf5_path.empty()) {
    base = config.output.hdf5_path;
    if (base.ends_with(".h5")) base.resize(base.size() - 3);
  } else {
    base = default_output_path(input, config.output.dir, "") + "." + kind_name(request.source);
  }
  PointsOutputs out;
  out.h5 = base + ".h5";
  out.csv = base + ".csv";
  if (request.source == PointsRequest::Source::kMesh)
    out.mesh = base + std::filesystem::path(request.path).extension().string();
  if (request.source == PointsRequest::Source::kAtoms) out.pdb = base + ".pdb";
  auto same = [](const std::string& a, const std::string& b) {
    std::error_code e1, e2;
    const auto pa = std::filesystem::weakly_canonical(std::filesystem::absolute(a), e1);
    const auto pb = std::filesystem::weakly_canonical(std::filesystem::absolute(b), e2);
    return !e1 && !e2 && pa == pb;
  };
  for (const std::string& path : out.all()) {
    for (const std::string& in : {input, request.path})
      if (!in.empty() && same(path, in))
        throw UsageError(fmt::format("the output {} would overwrite the input {}", path, in));
    io::check_output_path(path, config.output.force);
  }
  return out;
}

/// What the participants of a points run have together: the blocks every backend needs (their
/// least common multiple), the largest min_points, and how many workers there are in all.
struct PointsShape {
  std::size_t block = 1;
  std::size_t min_points = 0;
  std::size_t workers = 1;
};

/// This process's shape: its workers' blocks and min_points.
PointsShape local_shape(const Workers& workers) {
  PointsShape shape;
  shape.workers = workers.list.size();
  for (const PotentialBackend* w : workers.backends) {
    shape.block = std::lcm(shape.block, std::max<std::size_t>(1, w->points_hint().block));
    shape.min_points = std::max(shape.min_points, w->points_hint().min_points);
  }
  return shape;
}

/// Every participant's shape combined: the least common multiple of the blocks, the largest
/// min_points, the workers summed.
PointsShape combine(Executor& executor, const PointsShape& local) {
  if (executor.size() == 1) return local;
  const std::vector<std::string> all =
      executor.gather(fmt::format("{} {} {}", local.block, local.min_points, local.workers));
  PointsShape shape{1, 0, 0};
  for (const std::string& text : all) {
    std::size_t block = 1, min_points = 0, workers = 0;
    std::istringstream(text) >> block >> min_points >> workers;
    shape.block = std::lcm(shape.block, block);
    shape.min_points = std::max(shape.min_points, min_points);
    shape.workers += workers;
  }
  return shape;
}

/// Points per piece: whole blocks, at least the largest min_points, and small enough that every
/// worker of every participant gets some (the same on every participant).
std::size_t piece_size(const PointsShape& shape, std::size_t n) {
  const std::size_t workers = std::max<std::size_t>(1, shape.workers);
  const std::size_t per_worker = (n + workers - 1) / workers;
  std::size_t piece = std::max(shape.min_points, std::min(per_worker, std::size_t{1} << 16));
  return std::max(shape.block, (piece + shape.block - 1) / shape.block * shape.block);
}

/// Every worker in its own thread takes the next of `mine` (pieces of `piece` points of the
/// Z-ordered list) until none is left: values[i] for positions[i]. The first failure stops the
/// others and is rethrown.
void compute_on_workers(Workers& workers, const System& system, const Physics& physics,
                        const std::vector<Vec3>& positions, const std::vector<std::uint32_t>& skip,
                        std::size_t piece, const std::vector<std::size_t>& mine,
                        std::vector<float>& values, ProgressSink* progress) {
  const std::size_t n = positions.size();
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::exception_ptr failure;
  double done = 0.0;
  std::vector<std::thread> threads;
  for (PotentialBackend* worker : workers.backends) {
    threads.emplace_back([&, worker] {
      try {
        worker->prepare_points(system, physics);
        for (std::size_t k = next++; k < mine.size() && !stop; k = next++) {
          if (interrupt_requested()) throw InterruptedError("interrupted");
          const std::size_t begin = mine[k] * piece, count = std::min(piece, n - begin);
          worker->compute_points(positions.data() + begin,
                                 skip.empty() ? nullptr : skip.data() + begin, count,
                                 values.data() + begin);
          const std::lock_guard<std::mutex> lock(mutex);
          done += static_cast<double>(count) * static_cast<double>(system.size());
          if (progress != nullptr) progress->update(done);
        }
      } catch (...) {
        stop = true;
        const std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  if (interrupt_requested()) throw InterruptedError("interrupted");
}

/// A point list in the order the backends see it: Z order (dcs/spatial_order.hpp), so that a
/// block's points are close together.
struct SortedPoints {
  std::vector<std::size_t> order;  ///< sorted[i] is the caller's point order[i]
  std::vector<Vec3> positions;
  std::vector<std::uint32_t> skip;  ///< empty when no point skips an atom
};

SortedPoints sort_points(const std::vector<Vec3>& positions,
                         const std::vector<std::uint32_t>& skip) {
  SortedPoints sorted;
  sorted.order = spatial_order(positions);
  sorted.positions.resize(sorted.order.size());
  sorted.skip.resize(skip.empty() ? 0 : sorted.order.size());
  for (std::size_t i = 0; i < sorted.order.size(); ++i) {
    sorted.positions[i] = positions[sorted.order[i]];
    if (!skip.empty()) sorted.skip[i] = skip[sorted.order[i]];
  }
  return sorted;
}

/// --validate: the values against the float64 reference backend, at every point of small runs
/// or a fixed sample (config.validation.points, else up to 20 000).
Validation validate_points(const RunConfig& config, const System& system,
                           const std::vector<Vec3>& positions,
                           const std::vector<std::uint32_t>& skip, const std::vector<float>& values,
                           double tolerance) {
  const std::size_t n = positions.size();
  const std::size_t want = config.validation.points > 0 ? config.validation.points : 20000;
  std::vector<std::size_t> sample(n);
  std::iota(sample.begin(), sample.end(), std::size_t{0});
  if (want < n) {
    std::mt19937_64 rng(2026);
    std::shuffle(sample.begin(), sample.end(), rng);
    sample.resize(want);
    std::sort(sample.begin(), sample.end());
  }
  std::vector<Vec3> at;
  std::vector<std::uint32_t> at_skip;
  for (std::size_t i : sample) {
    at.push_back(positions[i]);
    at_skip.push_back(skip.empty() ? kNoAtom : skip[i]);
  }
  BackendOptions options;
  options.threads = config.compute.backend.threads;
  const std::unique_ptr<PotentialBackend> reference = make_cpu_reference_backend(options);
  reference->prepare_points(system, config.physics);
  std::vector<float> want_values(at.size());
  reference->compute_points(at.data(), at_skip.data(), at.size(), want_values.data());
  Validation v;
  v.performed = true;
  v.points = at.size();
  v.all_points = at.size() == n;
  v.tolerance = tolerance;
  double max_ref = 0.0, max_err = 0.0, sum_sq = 0.0;
  for (std::size_t k = 0; k < at.size(); ++k) {
    const double err = std::fabs(double(values[sample[k]]) - double(want_values[k]));
    max_ref = std::max(max_ref, std::fabs(double(want_values[k])));
    max_err = std::max(max_err, err);
    sum_sq += err * err;
  }
  v.max_abs_error = max_err;
  v.max_abs_reference = max_ref;
  v.rms_error = at.empty() ? 0.0 : std::sqrt(sum_sq / static_cast<double>(at.size()));
  v.max_rel_error = max_ref > 0.0 ? max_err / max_ref : max_err;
  v.passed = v.max_rel_error <= tolerance;
  return v;
}

/// A list's or mesh's distances to the nearest atom (the summary and the table), with a warning
/// when the median says the points are not around the molecule (kFarMedianDistance).
void measure_distances(const RunConfig& config, const System& system, const PointSet& set,
                       RunResult& result) {
  if (config.points->source == PointsRequest::Source::kAtoms || set.positions.empty() ||
      system.atoms.empty())
    return;
  const NearestAtomDistances d = nearest_atom_distances(set.positions, system);
  result.nearest_atom_median = d.median;
  result.nearest_atom_max = d.max;
  const double offset = std::max(0.0, config.points->offset);
  if (d.median > kFarMedianDistance + offset)
    log().warn(
        "the points lie far from the molecule: their median distance to the nearest atom centre "
        "is {:.3g} Å (max {:.3g} Å), above {:g} Å{}; a molecular surface's vertices lie within "
        "about 4 Å of atom centres, so {} is probably in another frame than {} (PyMOL's `save "
        "x.obj` writes camera coordinates: see the README, Potential at points)",
        d.median, d.max, kFarMedianDistance,
        offset > 0.0 ? fmt::format(" + the {:g} Å offset", offset) : std::string(),
        config.points->path, system.source_path);
}

/// ½ Σ qᵢ φᵢ in kcal/mol from the values at the atoms (in the run's unit, converted by the
/// ratio of CODATA's Coulomb factors), summed in double in atom order.
double atoms_energy(const Physics& physics, const System& system,
                    const std::vector<float>& values) {
  Physics kcal = physics, unit = physics;
  kcal.unit = Unit::KcalPerMolPerE;
  kcal.coulomb_constant = unit.coulomb_constant = 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i)
    sum += system.atoms[i].charge * static_cast<double>(values[i]);
  return 0.5 * sum * coulomb_factor(kcal) / coulomb_factor(unit);
}

/// Participant 0, once every value is in: statistics, --validate, then the outputs (each
/// written under a temporary name and renamed when complete, the renames in one CommitGroup as
/// a map's: a failure or an interruption before the last leaves none of them).
void finish_points(const RunConfig& config, Workers& workers, const System& system,
                   const PointSet& set, const PointsOutputs& outputs,
                   const std::vector<float>& values, RunResult& result) {
  const std::string& input = result.input;
  MapMetadata& meta = result.metadata;
  meta.physics = config.physics;
  meta.provenance.input_path = input;
  meta.provenance.input_sha256 = system.source_sha256;
  meta.provenance.backend = workers.first().name();
  meta.provenance.kernel = workers.first().kernel_name();
  meta.provenance.reduction = workers.first().reduction_name();
  meta.provenance.device =
      workers.list.size() == 1
          ? workers.first().device_name()
          : fmt::format("{} devices: {}", workers.list.size(), workers.device_names("; "));
  meta.coulomb_factor = coulomb_factor(config.physics);
  meta.stats = finalize(cpu_statistics(values.data(), values.size()));
  if (config.validation.enabled) {
    const double tolerance = config.validation.tolerance.value_or(workers.lead().tolerance());
    meta.validation = validate_points(config, system, set.positions, set.skip, values, tolerance);
    const Validation& v = meta.validation;
    log().info("validation: {} points, max |error| {:.3e} ({:.3e} of max|V|), tolerance {:.1e}: {}",
               v.points, v.max_abs_error, v.max_rel_error, v.tolerance,
               v.passed ? "passed" : "FAILED");
    if (!v.passed)
      throw ValidationError(fmt::format(
          "{}: validation failed: max relative error {:.3e} exceeds the tolerance {:.1e}; "
          "nothing was written",
          input, v.max_rel_error, v.tolerance));
  }

  // Outputs: each written under a temporary name and renamed when complete, all or none.
  const auto write_start = std::chrono::steady_clock::now();
  const std::string unit(unit_name(config.physics.unit));
  const double range = config.points->colour_range.value_or(io::symmetric_range(values));
  const io::ColourMap colours(range);
  measure_distances(config, system, set, result);
  io::PointTable table;
  table.positions = set.positions;
  table.values = values;
  table.normals = set.normals;
  table.surface_positions = set.surface_positions;
  table.unit = unit;
  table.attributes = {
      {"physics", describe_model(config.physics)},
      {"coulomb_factor",
       fmt::format("{:.17g} {}", meta.coulomb_factor,
                   factor_unit(config.physics.unit, config.physics.dielectric_model))},
      {"min_distance", fmt::format("{:g} A", config.physics.min_distance)},
      {"temperature", fmt::format("{:g} K", config.physics.temperature)},
      {"input", input},
      {"input_sha256", system.source_sha256},
      {"points", set.description},
      {"colour_map", colours.describe(unit)},
      {"dcs_version", kVersion},
      {"command_line", config.command_line},
  };
  if (config.points->source == PointsRequest::Source::kAtoms)
    table.attributes.emplace_back("skipped", "each value leaves out the atom at its own position");
  if (config.points->source == PointsRequest::Source::kAtoms &&
      config.method.kind == Method::kEwald) {
    result.energy_kcal_per_mol = atoms_energy(config.physics, system, values);
    table.attributes.emplace_back(
        "periodic",
        "the periodic potential of the cell and all its images (Ewald, tin-foil "
        "boundary, net charge neutralised by a uniform background); each atom's own "
        "term left out, so 1/2 sum q_i phi_i is the Ewald energy");
    table.attributes.emplace_back(
        "energy", fmt::format("{:.17g} kcal/mol ({:.17g} kJ/mol): 1/2 sum q_i phi_i",
                              result.energy_kcal_per_mol,
                              result.energy_kcal_per_mol * codata::kThermochemicalCalorie));
  }
  if (result.nearest_atom_median >= 0.0) {
    table.attributes.emplace_back("nearest_atom_median",
                                  fmt::format("{:.6g} A", result.nearest_atom_median));
    table.attributes.emplace_back("nearest_atom_max",
                                  fmt::format("{:.6g} A", result.nearest_atom_max));
  }
  io::CommitGroup group;
  io::write_point_hdf5(outputs.h5, table, config.output.force);
  io::write_point_csv(outputs.csv, table, config.output.force);
  std::vector<std::string> lines = {describe_model(config.physics), "input " + input,
                                    set.description};
  if (set.mesh) {
    io::MeshWriteMeta mesh_meta{unit, lines, outputs.h5, config.output.force};
    io::write_mesh(outputs.mesh, *set.mesh, values, colours, mesh_meta);
  }
  if (!outputs.pdb.empty()) {
    io::AtomValuesMeta atom_meta{unit, lines, outputs.h5, config.output.force};
    io::write_atoms_with_values(outputs.pdb, system, values, atom_meta);
  }
  if (interrupt_requested()) throw InterruptedError("interrupted");  // ~CommitGroup: none kept
  group.seal();
  result.write_seconds = seconds_since(write_start);
  result.outputs = outputs.all();
  result.points_description = set.description;
  result.colour_range = set.mesh ? range : 0.0;
  result.busy_fraction = 1.0;
}

}  // namespace

RunResult run_points(const RunConfig& config, Workers& workers, ProgressSink* progress,
                     Executor& executor) {
  const auto start = std::chrono::steady_clock::now();
  const std::string& input = config.input.files.front();
  const bool leader = executor.leads();
  RunResult result;
  result.input = input;
  System system;
  PointSet set;
  PointsOutputs outputs;
  executor.together([&] {
    system =
        io::read_atoms(input, io::ReadOptions{.charges_as_given = config.input.charges_as_given});
    apply_cell(config, input, system);
    check_potential_bound(system, config.physics);
    // The memory the points take, checked before they are read (a list is read no further
    // than what fits) and before anything is written.
    const PointsMemory memory =
        points_memory(*config.points, config.compute, system.size(), workers.list.size());
    try {
      set = make_point_set(*config.points, system, most_points(memory));
    } catch (const io::TooManyPoints& refused) {
      check_points_memory(memory, refused.count(), refused.file());
      throw;
    }
    check_points_memory(memory, set.positions.size(),
                        config.points->path.empty() ? input : config.points->path);
    if (leader) outputs = plan_outputs(config, input);
  });
  if (leader)
    log().info("{}: {} atoms, total charge {:+.4f} e; potential at {}", input, system.size(),
               system.total_charge(), set.description);

  // The backends see the points in Z order, in whole blocks (dcs/spatial_order.hpp); pieces go
  // round-robin to the participants.
  const SortedPoints sorted = sort_points(set.positions, set.skip);
  const std::vector<std::size_t>& order = sorted.order;
  const std::size_t n = order.size();
  const std::size_t piece = piece_size(combine(executor, local_shape(workers)), n);
  const std::vector<std::size_t> mine = executor.round_robin((n + piece - 1) / piece);
  const double evaluations = static_cast<double>(n) * static_cast<double>(system.size());
  if (progress != nullptr) progress->begin(input, evaluations);
  const auto compute_start = std::chrono::steady_clock::now();
  std::vector<float> sorted_values(n);
  executor.together([&] {
    compute_on_workers(workers, system, config.physics, sorted.positions, sorted.skip, piece, mine,
                       sorted_values, progress);
  });
  executor.collect(sorted_values, piece);
  result.compute_seconds = seconds_since(compute_start);
  if (progress != nullptr) progress->end();
  result.count_atoms(system);
  result.points = n;
  result.evaluations = evaluations;
  result.workers = workers.list.size();
  // Participant 0 checks and writes; a failure there reaches every participant.
  executor.on_leader([&] {
    std::vector<float> values(n);
    for (std::size_t i = 0; i < order.size(); ++i) values[order[i]] = sorted_values[i];
    finish_points(config, workers, system, set, outputs, values, result);
  });
  result.total_seconds = seconds_since(start);
  return result;
}

std::vector<float> compute_points_here(const System& system, const Physics& physics,
                                       const std::vector<Vec3>& points,
                                       const std::vector<std::uint32_t>& skip, Workers& workers,
                                       ProgressSink* progress) {
  const SortedPoints sorted = sort_points(points, skip);
  const std::size_t n = points.size();
  const std::size_t piece = piece_size(local_shape(workers), n);
  std::vector<std::size_t> pieces;
  for (std::size_t p = 0; p * piece < n; ++p) pieces.push_back(p);
  std::vector<float> sorted_values(n);
  compute_on_workers(workers, system, physics, sorted.positions, sorted.skip, piece, pieces,
                     sorted_values, progress);
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[sorted.order[i]] = sorted_values[i];
  return values;
}

}  // namespace dcs::pipeline
