// The run configuration's parsers (the command-line edge) and its consistency checks.
#include "dcs/pipeline/run_config.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/map_writers.hpp"
#include "dcs/msm.hpp"
#include "output_formats.hpp"

namespace dcs {

namespace {

/// A map given where atoms are expected is told so (not that its output would overwrite it).
void check_not_maps(const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    std::string name = input;
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name.ends_with(".gz")) name.resize(name.size() - 3);
    for (const char* map : {".h5", ".hdf5", ".dx", ".mrc", ".map", ".ccp4"})
      if (name.ends_with(map))
        throw UsageError(fmt::format(
            "{} is a map ({}), not an atom file: --atoms takes atoms with charges (.pqr, "
            ".pqr.gz, .xyzq); to look at a map use dcs preview or a viewer",
            input, map));
  }
}

}  // namespace

void check_name_template(const std::string& text) {
  bool field = false;
  for (std::size_t at = text.find('{'); at != std::string::npos; at = text.find('{', at + 1)) {
    const std::size_t close = text.find('}', at);
    const std::string name =
        text.substr(at + 1, close == std::string::npos ? close : close - at - 1);
    if (close == std::string::npos || (name != "stem" && name != "parent"))
      throw UsageError(
          fmt::format("--name-template {}: the fields are {{stem}} and {{parent}}, "
                      "e.g. {{parent}}_{{stem}}",
                      text));
    field = true;
  }
  if (!field || text.find('/') != std::string::npos)
    throw UsageError(
        fmt::format("--name-template {}: give a file name (no '/') with {{stem}} or "
                    "{{parent}}, e.g. {{parent}}_{{stem}}",
                    text));
}

namespace {

/// The rules of a trajectory run (--topology with --trajectory).
void check_trajectory(const RunConfig& config) {
  const TrajectoryRequest& t = *config.trajectory;
  if (!config.input.files.empty())
    throw UsageError("--atoms and --trajectory: give atom files or a trajectory, not both");
  if (t.topology.empty())
    throw UsageError("--trajectory needs --topology FILE (the charges: .psf, .prmtop, .tpr, .pqr)");
  if (t.files.empty()) throw UsageError("--topology needs --trajectory FILE... (the frames)");
  if (config.input.models != ModelsMode::kFirst)
    throw UsageError("--models applies to multi-model atom files, not to --trajectory");
  if (config.input.shard)
    throw UsageError("--shard splits a batch of atom files, not a trajectory");
  if (config.validation.enabled)
    throw UsageError(
        "--validate checks one map against the float64 reference; it is not available with "
        "--trajectory (the trajectory tests compare the averaged maps with one)");
}

}  // namespace

/// --points / --at-atoms: one atom file, and none of the options that only shape maps.
void check_points(const RunConfig& config) {
  if (config.trajectory)
    throw UsageError("--points/--at-atoms take one atom file (--atoms), not a trajectory");
  if (config.input.files.size() != 1)
    throw UsageError(
        fmt::format("--points/--at-atoms take one atom file, got {}", config.input.files.size()));
  for (const pipeline::OutputFormat& format : pipeline::output_formats())
    if (format.wanted(config.output) != format.by_default)
      throw UsageError(
          "--dx, --mrc and --no-hdf5 shape map outputs; a points run writes a CSV "
          "and an HDF5 table (and the mesh or a PDB)");
  if (config.input.models != ModelsMode::kFirst)
    throw UsageError("--models applies to maps; a points run takes the file's first model");
  if (config.input.shard) throw UsageError("--shard splits a batch of maps, not a points run");
  if (config.output.resume)
    throw UsageError("--resume continues maps; a points run is not resumable");
  if (config.output.null_output) throw UsageError("--null-output applies to maps");
  if (config.output.profile != ProfileAxis::kNone)
    throw UsageError("--profile averages a map over planes; a points run makes no map");
  if (config.method.pmepot)
    throw UsageError(
        "--preset pmepot makes maps (PMEpot's); for potentials at points or atoms use "
        "--periodic, the exact periodic potential");
}

void check_config(const RunConfig& config) {
  if (config.points) check_points(config);
  if (config.output.null_output && config.output.profile != ProfileAxis::kNone)
    throw UsageError("--profile is written beside the map; --null-output writes none");
  if (config.method.pmepot &&
      config.method.kind != Method::kEwald)  // the command line sets it; a library
    throw UsageError(                        // caller must ask for the periodic method itself
        "preset pmepot is a periodic map: it needs the periodic method (--periodic, --method "
        "ewald) and a cell");
  if (config.method.pmepot && config.compute.device.kind == DeviceRequest::Kind::kCuda)
    throw UsageError(
        "--preset pmepot computes on the CPU only (its reciprocal-only map has no GPU form); "
        "leave --device out or give --device cpu");
  if (config.trajectory) {
    check_trajectory(config);
  } else if (config.input.files.empty()) {
    throw UsageError("no input files (give --atoms FILE..., or --topology and --trajectory)");
  }
  check_not_maps(config.input.files);
  if (!config.output.name_template.empty()) check_name_template(config.output.name_template);
  bool named = false, writes = false;
  for (const pipeline::OutputFormat& format : pipeline::output_formats()) {
    named = named || !format.given(config.output).empty();
    writes = writes || format.wanted(config.output);
  }
  if (config.input.shard && named)
    throw UsageError(
        "--shard splits a batch whose outputs are named after each input: use "
        "--output-dir instead of --output / a --dx or --mrc path");
  if (config.input.files.size() > 1 && named)
    throw UsageError(
        "with several inputs, outputs are named after each input: use --output-dir "
        "instead of --output / a --dx or --mrc path");
  if (!writes) throw UsageError("nothing to write: --no-hdf5 without --dx or --mrc");
  if (config.output.compression < 0 || config.output.compression > 9)
    throw UsageError(fmt::format("--compress must be 0..9, got {}", config.output.compression));
  validate(config.physics);
  if (config.validation.tolerance && !(*config.validation.tolerance > 0.0))
    throw UsageError("--tolerance must be positive");
  if (!(config.output.checkpoint_seconds >= 0.0))
    throw UsageError("--checkpoint-interval must be zero or positive");
  (void)io::map_writers();  // a bad DCS_WRITERS is refused before any file is made
  if (config.method.kind == Method::kMsm)
    msm_parameters(config.method.msm_error);  // throws for a bad target
  check_periodic(config);
  check_points_method(config.method, config.points.has_value());
}

void check_points_method(const MethodRequest& method, bool points) {
  // MSM interpolates a lattice laid over a map's box; at arbitrary points (and at atoms, whose
  // own long-range part would have to be taken out again) it is not implemented: say so rather
  // than compute exactly under an msm label.
  if (!traits(method.kind).computes_points && points)
    throw UsageError(
        "--method msm computes maps only; --points and --at-atoms are computed by direct "
        "summation: use --method exact (the default) for them");
}

std::vector<std::pair<std::string, std::string>> shared_settings(const RunConfig& config) {
  std::vector<std::pair<std::string, std::string>> settings;
  auto add = [&](const char* name, std::string value) {
    settings.emplace_back(name, std::move(value));
  };
  auto flag = [](bool on) { return std::string(on ? "on" : "off"); };
  auto optional = [](const auto& value) {
    return value ? fmt::format("{}", *value) : std::string("-");
  };
  auto vec = [](const Vec3& v) { return fmt::format("{:.17g} {:.17g} {:.17g}", v[0], v[1], v[2]); };
  add("--atoms", fmt::format("{}", fmt::join(config.input.files, " ")));
  add("--models", std::string(to_string(config.input.models)));
  add("--charges-as-given", flag(config.input.charges_as_given));
  add("--model-grid", config.input.common_model_grid ? "common" : "own");
  add("--output", config.output.hdf5_path);
  add("--output-dir", config.output.dir);
  add("--name-template", config.output.name_template);
  for (const pipeline::OutputFormat& format : pipeline::output_formats())
    add(format.flag, format.setting(config.output));
  add("--compress", std::to_string(config.output.compression));
  add("--force", flag(config.output.force));
  add("--keep-going", flag(config.input.keep_going));
  add("--shard", config.input.shard ? to_string(*config.input.shard) : "-");
  add("--mpi-schedule", std::string(to_string(config.compute.mpi_schedule)));
  add("--resume", flag(config.output.resume));
  add("--null-output", flag(config.output.null_output));
  const GridRequest& grid = config.grid;
  add("--grid", grid.counts ? fmt::format("{}", fmt::join(*grid.counts, " ")) : "-");
  add("--spacing", optional(grid.spacing));
  add("--padding", fmt::format("{:.17g}", grid.padding));
  add("--origin", grid.origin ? vec(*grid.origin) : "-");
  add("--center", grid.center ? vec(*grid.center) : "-");
  add("--map-axes", grid.map_axes == MapAxes::kBox ? "box" : "cell");
  add("--profile", std::string(1, profile_axis_name(config.output.profile)));
  add("--units", std::string(unit_name(config.physics.unit)));
  add("--temperature", fmt::format("{:.17g}", config.physics.temperature));
  add("--dielectric", fmt::format("{:.17g}", config.physics.dielectric));
  add("--dielectric-model", std::string(dielectric_model_name(config.physics.dielectric_model)));
  add("--ionic-strength", fmt::format("{:.17g}", config.physics.ionic_strength));
  add("--preset", config.physics.preset.empty() ? "-" : config.physics.preset);
  add("--min-distance", fmt::format("{:.17g}", config.physics.min_distance));
  add("--kernel", config.compute.backend.kernel);
  add("--method", std::string(to_string(config.method.kind)));
  add("--msm-error", fmt::format("{:.17g}", config.method.msm_error));
  add("--ewald-error", fmt::format("{:.17g}", config.method.ewald_error));
  add("--box", config.input.box
                   ? fmt::format("{:.17g} {:.17g}", fmt::join(config.input.box->lengths(), " "),
                                 fmt::join(config.input.box->angles(), " "))
                   : "-");
  add("--reduction", config.compute.backend.reduction);
  add("--validate", flag(config.validation.enabled));
  add("--tolerance", optional(config.validation.tolerance));
  add("--validate-points", std::to_string(config.validation.points));
  if (const auto& p = config.points) {
    add("--points", p->source == PointsRequest::Source::kAtoms ? "--at-atoms" : p->path);
    add("--offset", fmt::format("{:.17g}", p->offset));
    add("--colour-range", optional(p->colour_range));
  }
  if (const auto& t = config.trajectory) {
    add("--topology", t->topology);
    add("--trajectory", fmt::format("{}", fmt::join(t->files, " ")));
    add("--frames", to_string(t->frames));
    add("--select", t->select);
    add("--align", t->align);
    add("--frame-maps", flag(t->frame_maps));
  }
  return settings;
}

DeviceRequest parse_device(const std::string& text) {
  if (text == "auto") return {};
  if (text == "cpu") return {DeviceRequest::Kind::kCpu, {}};
  if (text != "cuda" && text.rfind("cuda:", 0) != 0)
    throw UsageError("--device must be auto, cpu, cuda, cuda:N or cuda:N,M,..., got '" + text +
                     "'");
  DeviceRequest request{DeviceRequest::Kind::kCuda, {}};
  if (text == "cuda") return request;
  const std::string rest = text.substr(5);  // "N[,M...]"; a bare "cuda:" is refused below
  std::size_t begin = 0;
  do {
    const std::size_t comma = rest.find(',', begin);
    const std::string digits =
        rest.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (digits.empty() || digits.size() > 4 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw UsageError("--device: '" + text +
                       "' is not cuda:N or cuda:N,M,... with N a "
                       "device number");
    const int ordinal = std::stoi(digits);
    if (std::find(request.ordinals.begin(), request.ordinals.end(), ordinal) !=
        request.ordinals.end())
      throw UsageError(fmt::format("--device {}: device {} is named twice", text, ordinal));
    request.ordinals.push_back(ordinal);
    begin = comma == std::string::npos ? rest.size() + 1 : comma + 1;
  } while (begin <= rest.size());
  return request;
}

std::string to_string(const DeviceRequest& request) {
  switch (request.kind) {
    case DeviceRequest::Kind::kAuto: return "auto";
    case DeviceRequest::Kind::kCpu: return "cpu";
    case DeviceRequest::Kind::kCuda: break;
  }
  if (request.ordinals.empty()) return "cuda";
  return fmt::format("cuda:{}", fmt::join(request.ordinals, ","));
}

Shard parse_shard(const std::string& text) {
  if (text == "slurm") return {true, 0, 1};
  Shard shard;
  char slash = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%lld%c%lld%c", &shard.index, &slash, &shard.count, &extra) != 3 ||
      slash != '/' || shard.count < 1 || shard.index < 0 || shard.index >= shard.count)
    throw UsageError(fmt::format("--shard must be I/N with 0 <= I < N, or slurm; got '{}'", text));
  return shard;
}

FrameRange parse_frames(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return UsageError(
        fmt::format("--frames {}: {} (give start:stop:step, e.g. 0:1000:10, or one "
                    "frame N)",
                    text.empty() ? "\"\"" : text, why));
  };
  const auto number = [&](const std::string& part) -> std::optional<std::int64_t> {
    if (part.empty()) return std::nullopt;
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (error != std::errc() || end != part.data() + part.size())
      throw bad(fmt::format("'{}' is not an integer", part));
    return value;
  };
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t colon; (colon = text.find(':', from)) != std::string::npos; from = colon + 1)
    parts.push_back(text.substr(from, colon - from));
  parts.push_back(text.substr(from));
  if (text.empty()) throw bad("empty");
  if (parts.size() > 3) throw bad("expected at most three fields");
  FrameRange range;
  range.start = number(parts[0]);
  if (parts.size() == 1) {  // one frame
    if (!range.start) throw bad("empty");
    // N + 1 would overflow at INT64_MAX; "N:" names the same single frame (or none) there.
    const bool to_end =
        *range.start == -1 || *range.start == std::numeric_limits<std::int64_t>::max();
    range.stop = to_end ? std::nullopt : std::optional(*range.start + 1);
    return range;
  }
  range.stop = number(parts[1]);
  if (parts.size() == 3) {
    const std::optional<std::int64_t> step = number(parts[2]);
    if (step && *step < 1) throw bad("the step must be at least 1");
    range.step = step.value_or(1);
  }
  return range;
}

std::string to_string(const FrameRange& range) {
  const auto part = [](const std::optional<std::int64_t>& v) {
    return v ? std::to_string(*v) : std::string();
  };
  return fmt::format("{}:{}:{}", part(range.start), part(range.stop), range.step);
}

std::vector<std::int64_t> frame_indices(const FrameRange& range, std::int64_t frames) {
  const auto resolve = [frames](std::optional<std::int64_t> v, std::int64_t fallback) {
    if (!v) return fallback;
    return std::clamp(*v < 0 ? *v + frames : *v, std::int64_t{0}, frames);
  };
  if (range.step < 1)
    throw UsageError(fmt::format("--frames {}: the step must be at least 1", to_string(range)));
  const std::int64_t start = resolve(range.start, 0);
  const std::int64_t stop = resolve(range.stop, frames);
  std::vector<std::int64_t> list;
  // Steps up to INT64_MAX: f + step is formed only when it stays below stop (no overflow).
  for (std::int64_t f = start; f<stop; f = stop - f> range.step ? f + range.step : stop)
    list.push_back(f);
  if (list.empty())
    throw UsageError(fmt::format("--frames {} selects no frame of the trajectory's {}",
                                 to_string(range), frames));
  return list;
}

std::string to_string(const Shard& shard) {
  return shard.from_slurm ? "slurm" : fmt::format("{}/{}", shard.index, shard.count);
}

TrajectoryRequest::Pbc parse_pbc(const std::string& text) {
  if (text == "whole") return TrajectoryRequest::Pbc::kWhole;
  if (text == "none") return TrajectoryRequest::Pbc::kNone;
  throw UsageError(fmt::format("--pbc {}: expected whole or none", text));
}

std::string_view to_string(TrajectoryRequest::Pbc pbc) {
  return pbc == TrajectoryRequest::Pbc::kWhole ? "whole" : "none";
}

ModelsMode parse_models(const std::string& text) {
  if (text == "first") return ModelsMode::kFirst;
  if (text == "each") return ModelsMode::kEach;
  if (text == "average") return ModelsMode::kAverage;
  throw UsageError("--models must be first, each or average, got '" + text + "'");
}

std::string_view to_string(ModelsMode mode) {
  switch (mode) {
    case ModelsMode::kEach: return "each";
    case ModelsMode::kAverage: return "average";
    case ModelsMode::kFirst: break;
  }
  return "first";
}

MpiSchedule parse_mpi_schedule(const std::string& text) {
  if (text == "static") return MpiSchedule::kStatic;
  if (text == "dynamic") return MpiSchedule::kDynamic;
  throw UsageError("--mpi-schedule must be static or dynamic, got '" + text + "'");
}

std::string_view to_string(MpiSchedule schedule) {
  return schedule == MpiSchedule::kDynamic ? "dynamic" : "static";
}

std::size_t parse_size(const std::string& text) {
  std::size_t pos = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw UsageError(fmt::format("'{}' is not a size (examples: 4096, 512M, 2G, 1.5GiB)", text));
  }
  std::string unit = text.substr(pos);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1.0;
  if (!unit.empty() && unit != "B") {
    const std::size_t power = std::string("KMGT").find(unit.front());
    const std::string rest = unit.substr(1);
    if (power == std::string::npos || !(rest.empty() || rest == "B" || rest == "IB"))
      throw UsageError(fmt::format("'{}' is not a size: unknown unit '{}' (use K, M, G or T)", text,
                                   text.substr(pos)));
    scale = std::pow(1024.0, static_cast<double>(power + 1));
  }
  const double bytes = value * scale;
  if (!(bytes >= 1.0) || bytes > 1e18)
    throw UsageError(fmt::format("'{}' is not a usable size (1 byte to 1e18 bytes)", text));
  return static_cast<std::size_t>(bytes);
}

}  // namespace dcs
