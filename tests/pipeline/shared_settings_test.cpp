// shared_settings(): the (option, value) list every MPI rank compares and provenance keeps, read
// from RunConfig's typed requests. Its order and values are a contract (ranks of two builds, the
// resume key), so a config with every shared part set away from its default is pinned here, and
// the options each rank may choose alone are shown to stay out of it.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dcs/pipeline/run_config.hpp"

namespace dcs {
namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

RunConfig every_part_set() {
  RunConfig config;
  config.input.files = {"a.pqr", "b.pqr"};
  config.input.models = ModelsMode::kEach;
  config.input.charges_as_given = true;
  config.input.common_model_grid = false;
  config.input.keep_going = true;
  config.input.shard = Shard{false, 1, 3};
  config.output.dir = "out";
  config.output.name_template = "{parent}_{stem}";
  config.output.write_hdf5 = false;
  config.output.write_dx = true;
  config.output.dx_gzip = true;
  config.output.write_mrc = true;
  config.output.mrc_path = "m.mrc";
  config.output.compression = 4;
  config.output.force = true;
  config.output.resume = true;
  config.output.profile = ProfileAxis::kZ;
  config.grid.counts = {{33, 34, 35}};
  config.grid.map_axes = MapAxes::kBox;
  config.compute.backend.kernel = "kern";
  config.compute.backend.reduction = "red";
  config.compute.mpi_schedule = MpiSchedule::kDynamic;
  config.method.kind = Method::kMsm;
  config.method.msm_error = 0.25;
  config.method.ewald_error = 0.5;
  config.validation.enabled = true;
  config.validation.tolerance = 0.125;
  config.validation.points = 100;
  return config;
}

std::string g17(double value) { return fmt::format("{:.17g}", value); }

TEST(SharedSettings, EveryPartInItsPlaceAndOrder) {
  const Physics physics;
  const Settings expected = {
      {"--atoms", "a.pqr b.pqr"},
      {"--models", "each"},
      {"--charges-as-given", "on"},
      {"--model-grid", "own"},
      {"--output", ""},
      {"--output-dir", "out"},
      {"--name-template", "{parent}_{stem}"},
      {"--no-hdf5", "on"},
      {"--dx", " (gzip)"},
      {"--mrc", "m.mrc"},
      {"--compress", "4"},
      {"--force", "on"},
      {"--keep-going", "on"},
      {"--shard", "1/3"},
      {"--mpi-schedule", "dynamic"},
      {"--resume", "on"},
      {"--null-output", "off"},
      {"--grid", "33 34 35"},
      {"--spacing", "-"},
      {"--padding", "10"},
      {"--origin", "-"},
      {"--center", "-"},
      {"--map-axes", "box"},
      {"--profile", "z"},
      {"--units", "kT/e"},
      {"--temperature", g17(physics.temperature)},
      {"--dielectric", g17(physics.dielectric)},
      {"--dielectric-model", "constant"},
      {"--ionic-strength", g17(physics.ionic_strength)},
      {"--preset", "-"},
      {"--min-distance", g17(physics.min_distance)},
      {"--kernel", "kern"},
      {"--method", "msm"},
      {"--msm-error", "0.25"},
      {"--ewald-error", "0.5"},
      {"--box", "-"},
      {"--reduction", "red"},
      {"--validate", "on"},
      {"--tolerance", "0.125"},
      {"--validate-points", "100"},
  };
  EXPECT_EQ(shared_settings(every_part_set()), expected);
}

TEST(SharedSettings, WhatEachRankChoosesIsLeftOut) {
  const RunConfig config = every_part_set();
  RunConfig mine = config;
  mine.compute.device = parse_device("cuda:1");
  mine.compute.backend.threads = 7;
  mine.compute.cpu_workers = 3;
  mine.compute.memory_limit = std::size_t{1} << 30;
  mine.output.checkpoint_seconds = 60.0;
  EXPECT_EQ(shared_settings(mine), shared_settings(config));
  mine.output.force = false;  // a shared part: the ranks must agree on it
  EXPECT_NE(shared_settings(mine), shared_settings(config));
}

}  // namespace
}  // namespace dcs
