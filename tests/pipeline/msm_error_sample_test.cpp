// The error every msm run reports (validation.hpp: measure_method_error() over the check sample)
// against the relative RMS error over every point of the map, on a padded grid where the
// extremes next to atoms once made the reported value 2x too small (issue 35 item 13); and the
// same sample, bit for bit, whatever the slabs the map came in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/map.hpp"
#include "dcs/msm.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/stats.hpp"
#include "sample_sink.hpp"
#include "validation.hpp"

namespace dcs::pipeline {
namespace {

/// How far the reported relative RMS may be from the map-wide one: ~4000 uniform draws give
/// the ratio of two mean squares to a few % (the near-atom values are heavy-tailed, so allow
/// more); issue 35 measured the old sample, with the extremes in its denominator, up to 2.3x
/// low (here it read 0.96x: this case does not reproduce that bias).
constexpr double kFactor = 1.3;

/// 2lzt (data/2lzt.pqr) with at least `padding` Å around its atoms at `spacing`.
GridSpec padded_grid(const System& system, double padding, double spacing) {
  Vec3 lo = system.atoms.front().position, hi = lo;
  for (const Atom& atom : system.atoms)
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], atom.position[d]);
      hi[d] = std::max(hi[d], atom.position[d]);
    }
  // The first atom on a grid point (as atoms of a real map often nearly are): the map's
  // extremes there, where the old sample's denominator took them in.
  const Vec3 on = system.atoms.front().position;
  GridSpec grid;
  for (int d = 0; d < 3; ++d) {
    grid.origin[d] = on[d] - spacing * std::ceil((on[d] - lo[d] + padding) / spacing);
    grid.spacing[d] = spacing;
    grid.counts[d] =
        static_cast<std::int64_t>(std::ceil((hi[d] - lo[d] + 2 * padding) / spacing)) + 1;
  }
  return grid;
}

struct Measured {
  MethodInfo method;
  double whole = 0.0;  ///< rms(V - V_exact) / rms(V_exact) over every grid point
};

/// The map by the CPU msm backend in slabs of `planes`, the check sample taken from the slabs
/// as a --null-output run takes it (SampleSink), the reported error, and the map-wide one.
Measured measure(const System& system, const GridSpec& grid, std::int64_t planes) {
  RunConfig config;
  config.method.kind = Method::kMsm;
  BackendOptions options;
  options.threads = 2;
  std::unique_ptr<PotentialBackend> msm =
      make_msm_backend(make_cpu_fast_backend(options), msm_parameters(1e-3), options);
  msm->prepare(system, grid, config.physics);
  std::vector<float> map(grid.points());
  MapMetadata meta;
  meta.grid = grid;
  SampleSink sink(sample_points(config, grid, system.size(), kMostKept), /*keep_extremes=*/true);
  sink.begin(meta);
  const std::size_t plane = grid.plane_points();
  StatsAccum all;
  for (std::int64_t z = 0; z < grid.nz(); z += planes) {
    const Slab slab{z, std::min(planes, grid.nz() - z)};
    std::vector<StatsAccum> stats(static_cast<std::size_t>(slab.z_count));
    float* out = map.data() + static_cast<std::size_t>(z) * plane;
    msm->compute_slab(slab, out, stats.data());
    sink.write_slab(slab, out, stats.data());
    for (const StatsAccum& s : stats) all = StatsAccum::combine(all, s);
  }
  const std::unique_ptr<PotentialBackend> lead = make_cpu_reference_backend(options);
  Measured m;
  m.method.target = 1e-3;
  measure_method_error(reference_sample(config, *lead, system, grid, sink), finalize(all),
                       m.method);
  // The float64 direct sum at every point.
  std::vector<Vec3> points(grid.points());
  for (std::int64_t k = 0; k < grid.nz(); ++k)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t i = 0; i < grid.nx(); ++i)
        points[grid.index(i, j, k)] = grid.point(i, j, k);
  std::vector<double> exact(points.size());
  lead->reference_points(system, config.physics, points.data(), points.size(), exact.data(), 2);
  double sum_sq_diff = 0.0, sum_sq_ref = 0.0;
  for (std::size_t n = 0; n < points.size(); ++n) {
    const double d = static_cast<double>(map[n]) - exact[n];
    sum_sq_diff += d * d;
    sum_sq_ref += exact[n] * exact[n];
  }
  m.whole = std::sqrt(sum_sq_diff / sum_sq_ref);
  return m;
}

TEST(MsmErrorSample, ReportedRelativeRmsIsTheMapWideOne) {
  const System system =
      io::read_atoms(std::string(DCS_SOURCE_DIR) + "/data/2lzt.pqr", io::ReadOptions{});
  // 40 Å padding: most points far from the atoms, as in the issue; coarser under ASan.
  const bool sanitized = std::getenv("DCS_TEST_SANITIZED") != nullptr;
  const GridSpec grid = padded_grid(system, 40.0, sanitized ? 3.5 : 2.5);
  const Measured m = measure(system, grid, 5);
  std::printf("reported %.4e at %llu points; every one of %zu points: %.4e (ratio %.3f)\n",
              m.method.rms_rel_error, static_cast<unsigned long long>(m.method.points),
              grid.points(), m.whole, m.method.rms_rel_error / m.whole);
  EXPECT_FALSE(m.method.all_points);
  // The uniform draws, without the corners and extremes: ~4086 draws, fewer once repeats are
  // merged (3892 of the 43,890 points of the coarser grid under ASan).
  EXPECT_GE(m.method.points, 3800u);
  EXPECT_LE(m.method.points, kMethodCheckPoints);
  EXPECT_GT(m.method.rms_rel_error, m.whole / kFactor);
  EXPECT_LT(m.method.rms_rel_error, m.whole * kFactor);

  // The same points and values whatever the slabs (workers, ranks): the same bits.
  const Measured other = measure(system, grid, 3);
  EXPECT_EQ(other.method.points, m.method.points);
  EXPECT_EQ(other.method.rms_rel_error, m.method.rms_rel_error);
  EXPECT_EQ(other.method.max_rel_error, m.method.max_rel_error);
}

}  // namespace
}  // namespace dcs::pipeline
