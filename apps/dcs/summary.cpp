// What a run prints (summary.hpp).
#include "summary.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>

#include <fmt/format.h>

#include "dcs/io/colour_range.hpp"
#include "dcs/log.hpp"
#include "dcs/physics.hpp"

namespace dcs::app {
namespace {

bool g_stdout_failed = false;

struct Counts {
  std::size_t written = 0, skipped = 0, failed = 0, not_run = 0;
};

Counts count(const std::vector<RunResult>& results) {
  Counts c;
  for (const RunResult& r : results) {
    if (!r.attempted) ++c.not_run;
    else if (!r.error.empty()) ++c.failed;
    else if (r.skipped) ++c.skipped;
    else ++c.written;
  }
  return c;
}

/// --models each: the batch is one map per model.
bool per_model(const std::vector<RunResult>& results) {
  return std::any_of(results.begin(), results.end(),
                     [](const RunResult& r) { return r.model >= 0; });
}

}  // namespace

bool print_guarded(const std::function<void()>& print) {
  if (g_stdout_failed) return false;
  std::string why;
  try {
    print();
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) why = std::strerror(errno);
  } catch (const std::exception& error) {  // fmt reports a failed write by throwing
    why = error.what();
  }
  if (why.empty()) return true;
  g_stdout_failed = true;
  log().warn("cannot write the summary to standard output ({}); the outputs are not affected", why);
  return false;
}

void SummaryPrinter::finished(const RunResult& result) {
  results_.push_back(result);
  if (!quiet_ || !result.error.empty()) print_guarded([&] { print_summary(result); });
}

void print_interrupted_batch(const std::vector<RunResult>& done) {
  const Counts c = count(done);
  print_guarded([&] {
    fmt::print(
        "batch: interrupted after {} {}{}: {} written, {} complete already, {} failed; the "
        "outputs listed above are complete\n",
        done.size(), per_model(done) ? "map" : "input", done.size() == 1 ? "" : "s", c.written,
        c.skipped, c.failed + c.not_run);
  });
}

namespace {

/// --periodic: what the map is (cell, boundary, background, gauge, grid).
void print_periodic(const MethodInfo& m) {
  if (m.reciprocal_only)
    fmt::print(
        "  periodic  cell {}; --preset pmepot: PMEpot's map, the reciprocal part of smooth PME "
        "only (Gaussian charges of sigma {:.3g} A, k = 0 left out), mean over the cell 0; not "
        "the exact periodic potential (--periodic)\n",
        m.cell.describe(), 1.0 / (std::sqrt(2.0) * m.beta));
  else
    fmt::print("  periodic  cell {}; tin-foil boundary, mean over the cell 0 (the gauge){}\n",
               m.cell.describe(),
               m.net_charge == 0.0
                   ? std::string()
                   : fmt::format("; net charge {:+.4g} e neutralised by a uniform background",
                                 m.net_charge));
  const bool triclinic = m.cell.shape() == UnitCell::Shape::kTriclinic;
  fmt::print("  periodic  {}\n",
             !m.tiles    ? "the grid is a box of x, y, z points over the periodic potential (it "
                           "does not tile the cell)"
             : triclinic ? "the grid is the cell's points i*a/na + j*b/nb + k*c/nc, its axes "
                           "along the cell vectors: the map tiles the box periodically"
                         : "the grid is the cell's points i*L/n: the map tiles the box "
                           "periodically");
}

/// The one-line outcomes: not attempted, failed, an MPI rank's line, skipped (--resume). False
/// for a map written here, which takes the long form.
bool print_one_line(const RunResult& result, const std::string& input) {
  if (!result.attempted) {
    fmt::print("{}: not attempted (the batch stopped at a failure)\n", input);
    return true;
  }
  if (!result.error.empty()) {
    fmt::print("{}: FAILED: {}\n", input, result.error);
    return true;
  }
  if (result.rank >= 0) {  // an MPI batch: one line per input (details in each file's provenance)
    fmt::print("{} -> {}: {} on rank {} in {:.2f} s\n", result.input,
               fmt::join(result.outputs, ", "),
               result.skipped ? "complete already, skipped (--resume)" : "written", result.rank,
               result.total_seconds);
    return true;
  }
  if (result.skipped) {
    fmt::print("{} -> {}: complete already, skipped (--resume)\n", input,
               fmt::join(result.outputs, ", "));
    return true;
  }
  return false;
}

/// What the map covers: the atoms, the models, the points or the grid.
void print_coverage(const RunResult& result) {
  const MapMetadata& meta = result.metadata;
  const GridSpec& grid = meta.grid;
  // Residues and HETATM records as read: a metal or ligand pdb2pqr dropped shows as 0 HETATM.
  if (result.residues > 0)
    fmt::print("  atoms     {} ({} residues, {} HETATM)\n", result.atoms, result.residues,
               result.hetatm);
  else fmt::print("  atoms     {}\n", result.atoms);
  if (const std::string models = describe(meta.models); !models.empty())
    fmt::print("  models    {}\n", models);
  if (result.points > 0) {
    fmt::print("  points    {}\n", result.points_description);
    if (result.nearest_atom_median >= 0.0)
      fmt::print("  distance  to the nearest atom centre: median {:.3g} A, max {:.3g} A\n",
                 result.nearest_atom_median, result.nearest_atom_max);
  } else {
    fmt::print(
        "  grid      {} x {} x {} = {} points, spacing {:.4g} x {:.4g} x {:.4g} A, origin "
        "({:.3f}, {:.3f}, {:.3f}){}\n",
        grid.nx(), grid.ny(), grid.nz(), grid.points(), grid.spacing[0], grid.spacing[1],
        grid.spacing[2], grid.origin[0], grid.origin[1], grid.origin[2],
        grid.skewed() ? ", axes along the cell vectors a, b, c" : "");
  }
}

/// The physics and the values: statistics, colours, validation against the reference.
void print_values(const RunResult& result, const std::string& unit) {
  const MapMetadata& meta = result.metadata;
  const GridStats& s = meta.stats;
  fmt::print("  physics   {}\n", describe_model(meta.physics));
  fmt::print("  potential {} (factor {:.6g} {}): min {:.6g}  max {:.6g}  mean {:.6g}  rms {:.6g}\n",
             unit, meta.coulomb_factor,
             factor_unit(meta.physics.unit, meta.physics.dielectric_model), s.min, s.max, s.mean,
             s.rms);
  if (result.points > 0) {
    if (result.colour_range > 0.0)
      fmt::print("  colours   mesh vertices red-white-blue from -{0:.3g} to +{0:.3g} {1}\n",
                 result.colour_range, unit);
  } else if (const ColourRange& colours = meta.colour_range; colours.known())
    fmt::print("  colours   view with a colour range of ±{:.3g} {} ({}; the file's colour_range)\n",
               colours.high, unit, io::describe_colour_range(colours));
  if (meta.validation.performed) {
    const Validation& v = meta.validation;
    const std::string where =
        v.all_points ? fmt::format("all {}", v.points) : fmt::format("{} sampled", v.points);
    fmt::print(
        "  validate  {} at {} points: max |error| {:.3e} {} ({:.2e} of max|V|, tolerance "
        "{:.0e}), rms error {:.3e}\n",
        v.passed ? "passed" : "FAILED", where, v.max_abs_error, unit, v.max_rel_error, v.tolerance,
        v.rms_error);
  }
}

/// The method: what a periodic map is, and an approximate method's measured error (or why not).
void print_method(const MethodInfo& m) {
  const bool ewald = m.method == Method::kEwald;
  if (ewald) print_periodic(m);
  if (traits(m.method).measures_error && !m.measured)
    fmt::print("  {} error not measured (a trajectory's mean map); target {:.0e}\n",
               to_string(m.method), m.target);
  else if (m.measured)
    fmt::print(
        "  {} error relative RMS {:.2e} against the float64 {} sum at {} points "
        "(target {:.0e}: {}), max error {:.2e} of max|V|; {}\n",
        to_string(m.method), m.rms_rel_error,
        m.reciprocal_only ? "reciprocal Ewald"
        : ewald           ? "Ewald"
                          : "direct",
        m.all_points ? fmt::format("all {}", m.points) : fmt::format("{} sampled", m.points),
        m.target, m.met ? "met" : "MISSED", m.max_rel_error,
        ewald ? fmt::format("beta {:.4f} 1/A, real cutoff {:g} A, PME mesh {} x {} x {}, order {}",
                            m.beta, m.cutoff, m.mesh[0], m.mesh[1], m.mesh[2], m.order)
              : fmt::format("h = {:g} A, a = {:g} A, order {}, C{}", m.spacing, m.cutoff, m.order,
                            m.split));
}

/// The energy, the frames, the backend and what the run cost: time, speed, resumed slabs.
void print_run(const RunResult& result) {
  const MapMetadata& meta = result.metadata;
  if (!std::isnan(result.energy_kcal_per_mol))
    fmt::print(
        "  energy    1/2 sum q_i phi_i = {:.10g} kcal/mol = {:.10g} kJ/mol (periodic: the "
        "Ewald electrostatic energy of the cell)\n",
        result.energy_kcal_per_mol, result.energy_kcal_per_mol * codata::kThermochemicalCalorie);
  if (result.frames > 0)
    fmt::print(
        "  frames    {} averaged ({} computed by this run, {:.2f} frames/s; reading and fitting "
        "{:.3f} s on {} thread(s); /trajectory holds stdev, min, max)\n",
        result.frames, result.frames_computed,
        result.compute_seconds > 0
            ? static_cast<double>(result.frames_computed) / result.compute_seconds
            : 0.0,
        result.decode_seconds, result.decode_threads);
  if (!result.cell_note.empty()) fmt::print("  cell      {}\n", result.cell_note);
  fmt::print("  backend   {} / {} on {}\n", meta.provenance.backend, meta.provenance.kernel,
             meta.provenance.device);
  // --resume: only the slabs computed now count towards the speed.
  const std::size_t slabs = result.slabs_computed + result.slabs_reused;
  const double evaluations = slabs > 0
                                 ? result.evaluations * static_cast<double>(result.slabs_computed) /
                                       static_cast<double>(slabs)
                                 : result.evaluations;
  const double rate = result.compute_seconds > 0 ? evaluations / result.compute_seconds : 0.0;
  fmt::print(
      "  time      {:.3f} s total, {:.3f} s compute and write ({:.3g} atom-evaluations/s, "
      "{} worker{} {:.0f}% busy), {:.3f} s writing\n",
      result.total_seconds, result.compute_seconds, rate, result.workers,
      result.workers == 1 ? "" : "s", 100.0 * result.busy_fraction, result.write_seconds);
  if (result.slabs_reused > 0)
    fmt::print("  resumed   {} slab(s) found done in the partial file, {} computed\n",
               result.slabs_reused, result.slabs_computed);
}

}  // namespace

void print_summary(const RunResult& result) {
  const std::string input =
      result.model >= 0 ? fmt::format("{} (model {})", result.input, result.model) : result.input;
  if (print_one_line(result, input)) return;
  const std::string unit(unit_name(result.metadata.physics.unit));
  fmt::print("{} -> {}\n", input, fmt::join(result.outputs, ", "));
  print_coverage(result);
  print_values(result, unit);
  print_method(result.metadata.method);
  print_run(result);
}

void print_batch_summary(const std::vector<RunResult>& results, bool keep_going) {
  const auto [written, skipped, failed, not_run] = count(results);
  const bool models = per_model(results);
  fmt::print("batch: {} {}{}: {} written, {} complete already, {} failed{}\n", results.size(),
             models ? "map" : "input", results.size() == 1 ? "" : "s", written, skipped, failed,
             not_run > 0 ? fmt::format(", {} not attempted", not_run) : std::string());
  for (const RunResult& r : results)
    if (r.attempted && !r.error.empty())
      fmt::print("  failed: {}{}: {}\n", r.input,
                 r.model >= 0 ? fmt::format(" (model {})", r.model) : std::string(), r.error);
  if (not_run > 0)
    fmt::print(
        "  the batch stopped at its first failure; the {} output(s) written before it are "
        "complete; run again with --resume (and --keep-going to go past failures) to do "
        "the rest\n",
        written + skipped);
  else if (failed > 0 && keep_going)
    fmt::print("  --keep-going: every other input was processed\n");
}

}  // namespace dcs::app
