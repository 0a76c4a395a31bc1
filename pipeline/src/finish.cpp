// Finishing a map on the leader (finish.hpp).
#include "finish.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/box_faces.hpp"
#include "dcs/io/colour_range.hpp"
#include "dcs/log.hpp"
#include "dcs/msm.hpp"
#include "dcs/periodic/ewald_backend.hpp"
#include "dcs/periodic/pmepot_backend.hpp"
#include "dcs/presets.hpp"
#include "dcs/timer.hpp"
#include "msm_cost.hpp"
#include "profile_sink.hpp"
#include "validation.hpp"

namespace dcs::pipeline {
namespace {

/// --method ewald's parameters: the run's (--ewald-error), or PMEpot's fixed ones on the grid's
/// mesh (no real-space part).
periodic::EwaldParameters method_parameters(const RunConfig& config, const UnitCell& cell,
                                            const GridSpec& grid) {
  if (!config.method.pmepot) return periodic::ewald_parameters(cell, config.method.ewald_error);
  periodic::EwaldParameters p;
  p.beta = periodic::kPmepotBeta;
  p.order = periodic::kPmepotOrder;
  for (std::size_t a = 0; a < 3; ++a) p.mesh[a] = static_cast<int>(grid.counts[a]);
  return p;
}

/// Called between stages: a signal stops the run there (the partial map is kept, every other
/// output removed as the stack unwinds).
void stop_if_interrupted() {
  if (interrupt_requested()) throw InterruptedError("interrupted");
}

/// Adapts the store to the sinks' read-back interface.
class StoreReader final : public MapReader {
 public:
  explicit StoreReader(io::MapStore& store) : store_(store) {}
  void read_planes(const Slab& slab, float* out) override { store_.read_planes(slab, out); }
  void read_x_columns(std::int64_t x_begin, std::int64_t count, float* out) override {
    store_.read_x_columns(x_begin, count, out);
  }
  std::int64_t x_chunk() const override { return store_.x_chunk(); }

 private:
  io::MapStore& store_;
};

/// --validate, and the error every --method msm run measures, on the finished values at one
/// sample (validation.hpp: --validate's, else kMethodCheckPoints); throws ValidationError when
/// either fails (exit 4, nothing written). Returns the seconds it took.
double check_values(const RunConfig& config, const MapJob& job, PotentialBackend& lead,
                    io::MapStore& store, std::vector<std::unique_ptr<MapSink>>& sinks,
                    const EngineReport& report, MapMetadata& meta) {
  stop_if_interrupted();
  const auto validate_start = SteadyClock::now();
  // --validate's sample when asked for; else msm's check at a small fixed sample. Its values
  // came with the slabs (SampleSink) but for planes no slab of this run brought.
  SampleSink* streamed = nullptr;
  for (auto& sink : sinks)
    if (auto* s = dynamic_cast<SampleSink*>(sink.get())) streamed = s;
  if (streamed != nullptr) {
    StoreReader reader(store);
    streamed->complete(reader);
  }
  const ReferenceSample sample =
      reference_sample(config, lead, job.in.system, job.in.grid, store, report.plane_stats,
                       meta.stats, requested_points(config.validation), streamed);
  judge_sample(config, job.in.input, lead, sample, meta);
  return seconds_since(validate_start);
}

}  // namespace

void judge_sample(const RunConfig& config, const std::string& input, PotentialBackend& lead,
                  const ReferenceSample& sample, MapMetadata& meta) {
  if (config.validation.enabled) {
    meta.validation = validate_map(config.validation, lead, sample, meta.stats);
    const Validation& v = meta.validation;
    log().info(
        "validation: {} {} points, max |error| {:.3e} ({:.3e} of max|V|), RMS error "
        "{:.3e}, tolerance {:.1e}: {}",
        v.all_points ? "all" : "sampled", v.points, v.max_abs_error, v.max_rel_error, v.rms_error,
        v.tolerance, v.passed ? "passed" : "FAILED");
    if (!v.passed)
      throw ValidationError(
          fmt::format("{}: validation failed: max relative error {:.3e} "
                      "exceeds the tolerance {:.1e}; nothing was written",
                      input, v.max_rel_error, v.tolerance));
  }
  if (measures_method_error(config)) {
    MethodInfo& m = meta.method;
    measure_method_error(sample, meta.stats, m);
    const bool ewald = config.method.kind == Method::kEwald;
    const char* oracle = ewald ? "the float64 Ewald sum" : "the float64 direct sum";
    log().info(
        "{} error against {} at {} {} points: relative RMS {:.3e} (target {:.1e}), max {:.3e} "
        "of max|V|: {}",
        to_string(config.method.kind), oracle, m.all_points ? "all" : "sampled", m.points,
        m.rms_rel_error, m.target, m.max_rel_error, m.met ? "met" : "MISSED");
    if (!m.met)
      throw ValidationError(fmt::format(
          "{}: --method {} missed its error target: measured relative RMS error {:.3e} "
          "exceeds --{}-error {:.1e} ({}; max error {:.3e} of max|V|, at {} points against "
          "{}); nothing was written: use a tighter --{}-error{}",
          input, to_string(config.method.kind), m.rms_rel_error, to_string(config.method.kind),
          m.target,
          ewald ? method_parameters(config, m.cell, meta.grid).describe()
                : describe(msm_parameters(config.method.msm_error)),
          m.max_rel_error, m.points, oracle, to_string(config.method.kind),
          ewald ? "" : " or --method exact"));
  }
}

void refuse_nonfinite(const GridStats& stats) {
  if (stats.nonfinite > 0)
    throw InternalError(
        fmt::format("{} of {} map values are not finite (the distance clamp "
                    "should prevent this); nothing was written",
                    stats.nonfinite, stats.count));
}

MethodInfo method_info(const RunConfig& config, const System& system, const GridSpec& grid,
                       bool on_gpu) {
  MethodInfo m;
  m.method = config.method.kind;
  if (config.method.kind == Method::kEwald) {
    const periodic::EwaldParameters p = method_parameters(config, system.cell, grid);
    m.reciprocal_only = config.method.pmepot;
    m.cell = system.cell;
    m.beta = p.beta;
    m.cutoff = p.real_cutoff;
    m.mesh = p.mesh;
    m.order = p.order;
    m.target = config.method.ewald_error;
    m.net_charge = system.total_charge();
    m.tiles = tiles_cell(grid, system.cell);
    return m;
  }
  if (config.method.kind != Method::kMsm) return m;
  const MsmParameters p = msm_parameters(config.method.msm_error);  // what make_workers() used
  m.spacing = p.spacing;
  m.cutoff = p.cutoff;
  m.order = p.order;
  m.split = p.split;
  m.target = p.target;
  const MsmWork work = msm_run_work(config, system, grid, config.method.msm_error, on_gpu);
  m.estimated_work = work.msm();
  m.estimated_exact_work = work.exact;
  return m;
}

namespace {

/// The stages' seconds for the provenance.
std::vector<std::pair<std::string, double>> stage_timings(const MapJob& job, const Workers& workers,
                                                          const RunResult& result,
                                                          const EngineReport& report,
                                                          double validate_seconds) {
  BackendTimings stages;
  for (const MapSource* w : workers.list) {
    const BackendTimings t = w->timings();
    stages.upload += t.upload;
    stages.kernels += t.kernels;
    stages.download += t.download;
    stages.statistics += t.statistics;
  }
  return {{"read", job.in.read_seconds},
          {"compute", result.compute_seconds},
          {"upload", stages.upload},
          {"kernels", stages.kernels},
          {"download", stages.download},
          {"statistics", stages.statistics},
          {"write_while_computing", report.write_seconds},
          {"validate", validate_seconds}};
}

/// The colour range for viewers, completed from the store (the sampled planes a resumed run or
/// MPI ranks did not stream through the sink). With --preset, the tool's own colour scale is
/// the map's one range instead (the summary, the file and `dcs preview` then agree with it).
void complete_colour_range(const RunConfig& config, std::vector<std::unique_ptr<MapSink>>& sinks,
                           MapReader& reader, MapMetadata& meta) {
  for (auto& sink : sinks)
    if (auto* colours = dynamic_cast<io::ColourRangeSink*>(sink.get())) {
      colours->complete(reader);
      meta.colour_range = colours->range();
      if (!config.physics.preset.empty()) {
        const Preset& preset = find_preset(config.physics.preset);
        meta.colour_range.high = preset.colour_range;
        meta.colour_range.source =
            fmt::format("--preset {}: {}'s colour scale", preset.name, preset.tool);
      }
      log().info("colour range for viewers: ±{:.4g} {} ({}, {} values)", meta.colour_range.high,
                 unit_name(meta.physics.unit), io::describe_colour_range(meta.colour_range),
                 meta.colour_range.values);
    }
}

/// Warns where the box changes what a viewer shows (criterion: dcs/io/box_faces.hpp): mapped
/// atoms outside it, or a face reaching the colour range ±L, with the padding that the far-field
/// decay says would bring every face under L.
void check_box_faces(const RunConfig& config, std::vector<std::unique_ptr<MapSink>>& sinks,
                     MapReader& reader, const MapMetadata& meta) {
  // A periodic map has no faces to fall off: every atom's images are in it, and a large |V|
  // at the box's edge is an atom (or its image) near it, not a box too small.
  if (config.method.kind == Method::kEwald) return;
  for (auto& sink : sinks)
    if (auto* faces = dynamic_cast<io::BoxFacesSink*>(sink.get())) {
      faces->complete(reader);
      const io::BoxFacesCheck c = faces->check(meta.colour_range.high);
      const std::string_view unit = unit_name(meta.physics.unit);
      log().debug(
          "box faces: max |V| {:.3g} {} on the {} face, {:.0f} % of the colour range "
          "±{:.3g} {}",
          c.face_max_abs, unit, io::face_name(c.face), 100.0 * c.fraction, c.limit, unit);
      if (!c.too_close) continue;
      if (c.atoms_outside > 0.0) {
        log().warn(
            "mapped atoms lie up to {:.3g} Å outside the box, so their surface is not in the map; "
            "in a trajectory: a frame whose molecule drifted or jumped across the periodic "
            "boundary (unwrap it, or --align), else a larger box",
            c.atoms_outside);
        continue;
      }
      // Whole Å, rounded up; a box of fixed counts and spacing ignores --padding.
      const double extra = std::ceil(c.extra_padding);
      const bool fixed = config.grid.counts && config.grid.spacing;
      const std::string fix = fixed ? fmt::format("a box {:g} Å larger on every side", extra)
                                    : fmt::format("--padding {:g}", config.grid.padding + extra);
      log().warn(
          "the box is small for this map: |V| reaches {:.3g} {} on its {} face, beyond the "
          "colour range ±{:.3g} {} that viewers paint, so the saturated colour and isosurfaces "
          "at ±{:.3g} are cut off by the box; {} would bring every face under it (estimated "
          "from a 1/r{} decay with the distance from the molecule's centre, net charge {:+.3g} e)",
          c.face_max_abs, unit, io::face_name(c.face), c.limit, unit, c.limit, fix,
          c.decay_power == 1 ? "" : "^2", c.net_charge);
    }
}

/// Everything made durable first (fsync, the slow part), then the renames back to back in a
/// CommitGroup, so that an interruption or a failure between the first rename and the last (a
/// signal: the check below; a second signal: the handler) removes the outputs already renamed:
/// a run's outputs appear together or not at all.
void commit_outputs(const RunConfig& config, const MapJob& job, io::MapStore& store,
                    io::PendingFile& finished_store, std::vector<std::unique_ptr<MapSink>>& sinks,
                    RunResult& result) {
  stop_if_interrupted();
  const auto commit_start = SteadyClock::now();
  if (!job.paths.h5.empty()) store.sync();
  for (auto& sink : sinks) sink->sync();
  stop_if_interrupted();
  const auto rename_start = SteadyClock::now();
  {
    io::CommitGroup group;
    if (!job.paths.h5.empty()) {
      finished_store.commit(job.paths.h5, config.output.force || job.replaces_outputs);
      result.outputs.push_back(job.paths.h5);
    }
    for (auto& sink : sinks) {
      sink->commit();
      if (dynamic_cast<io::WatchingSink*>(sink.get()) == nullptr)  // it writes no file
        result.outputs.push_back(sink->name());
    }
    stop_if_interrupted();  // throws: ~CommitGroup removes what was renamed
    group.seal();
  }
  if (job.paths.h5.empty()) store.discard();  // a scratch store (--no-hdf5)
  log().info("{} committed: synced in {:.3f} s, renamed together in {:.3f} s",
             fmt::join(result.outputs, ", "),
             seconds_since(commit_start) - seconds_since(rename_start),
             seconds_since(rename_start));
}

}  // namespace

std::vector<MapSink*> begin_sinks(const std::vector<std::unique_ptr<MapSink>>& sinks,
                                  const MapMetadata& meta) {
  std::vector<MapSink*> list;
  for (const auto& sink : sinks) {
    sink->begin(meta);
    list.push_back(sink.get());
  }
  return list;
}

StatsAccum combined_stats(const std::vector<StatsAccum>& plane_stats) {
  StatsAccum accum;
  for (const StatsAccum& plane : plane_stats) accum = StatsAccum::combine(accum, plane);
  return accum;
}

void finish_map(const RunConfig& config, MapJob& job, Workers& workers, io::MapStore& store,
                std::vector<std::unique_ptr<MapSink>>& sinks, const EngineReport& report,
                RunResult& result, bool& store_finished) {
  MapMetadata& meta = result.metadata;
  meta.stats = finalize(combined_stats(report.plane_stats));
  refuse_nonfinite(meta.stats);
  meta.method = method_info(config, job.in.system, job.in.grid, workers.on_gpu);
  if (traits(config.method.kind).measures_error && !measures_method_error(config))
    log().warn(
        "--method {}: the error of a trajectory's mean map is not measured (it is the mean of "
        "the frames' maps, not the potential of one set of atoms); /method measured = false",
        to_string(config.method.kind));
  const double validate_seconds =
      config.validation.enabled || measures_method_error(config)
          ? check_values(config, job, workers.lead(), store, sinks, report, meta)
          : 0.0;
  meta.provenance.timings = stage_timings(job, workers, result, report, validate_seconds);

  const auto finish_start = SteadyClock::now();
  stop_if_interrupted();
  StoreReader reader(store);
  complete_colour_range(config, sinks, reader, meta);
  check_box_faces(config, sinks, reader, meta);
  meta.profile = finished_profile(config.output.profile, job.in.grid, job.in.system.cell, reader);
  if (!meta.profile.empty()) meta.profile.frame_means = job.frame_profiles;
  store.finish(meta, job.extras);
  store_finished = true;
  // The finished partial file is no longer resumable: from now on it is one of the run's
  // outputs in the making, which a second signal removes (io::remove_pending_temporaries()).
  io::PendingFile finished_store(job.paths.store);
  log().info("store finished in {:.3f} s", seconds_since(finish_start));
  for (auto& sink : sinks) {
    stop_if_interrupted();
    sink->finish(meta, reader);
  }
  commit_outputs(config, job, store, finished_store, sinks, result);
  result.write_seconds = report.write_seconds + seconds_since(finish_start);
}

void abandon_map(const MapJob& job, io::MapStore& store,
                 std::vector<std::unique_ptr<MapSink>>& sinks, bool store_finished) {
  for (auto& sink : sinks) sink->abort();
  try {
    throw;
  } catch (const InterruptedError&) {
    if (store_finished) {  // nothing left to resume: the map was complete
      store.discard();
      throw;
    }
    store.close_keeping();
    log().warn(
        "interrupted: the partial map is kept in {} ({} of {} planes done); run the same "
        "command with --resume to continue it",
        job.paths.store, store.planes_done(), job.in.grid.nz());
    throw InterruptedError(fmt::format(
        "interrupted; no output was written (partial map kept in {})", job.paths.store));
  } catch (const IoError&) {
    // A write error (a full disk, EIO) must not cost earlier work: a resumed store, or one with
    // checkpointed planes, is kept with its last good checkpoint.
    if (store_finished || (!job.resuming && store.planes_done() == 0)) {
      store.discard();
      throw;
    }
    store.close_keeping();
    log().warn(
        "the partial map is kept in {} ({} of {} planes done at its last checkpoint); run "
        "the same command with --resume once the cause is fixed",
        job.paths.store, store.planes_done(), job.in.grid.nz());
    throw;
  } catch (...) {
    store.discard();
    throw;
  }
}

}  // namespace dcs::pipeline
