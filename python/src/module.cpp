// dcs._dcs: the Python extension (nanobind). Thin: arrays in, the pipeline's library calls
// (dcs/pipeline/in_memory.hpp) on the same engine as the command line, arrays and plain dicts
// out. The Python package (python/dcs/) adds xarray, defaults and docstrings.
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "dcs/method.hpp"
#include "dcs/periodic/ewald_backend.hpp"
#include "dcs/pipeline/in_memory.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "dcs/presets.hpp"
#include "dcs/version.hpp"
#include "interruptible.hpp"
#include "library_warnings.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dcs::python {
namespace {

using Positions = nb::ndarray<const double, nb::shape<-1, 3>, nb::c_contig, nb::device::cpu>;
using Charges = nb::ndarray<const double, nb::shape<-1>, nb::c_contig, nb::device::cpu>;
using MapValues = nb::ndarray<const float, nb::ndim<3>, nb::c_contig, nb::device::cpu>;

/// The settings every call takes, as the Python keywords give them (None: not given). The
/// keywords themselves are listed once, in python/dcs/_settings.py (KEYWORDS), which passes
/// them here by name.
struct Settings {
  GridPhysicsOptions options;
  std::string device = "auto";
  std::string kernel;
  unsigned threads = 0;
  bool periodic = false;              ///< --periodic: the Ewald sum of the cell and its images
  std::optional<UnitCell> box;        ///< --box: the atoms' cell
  std::optional<double> ewald_error;  ///< --ewald-error
};

Settings settings(std::vector<std::int64_t> grid, std::optional<double> spacing,
                  std::optional<double> padding, std::optional<std::array<double, 3>> origin,
                  std::optional<std::array<double, 3>> center, std::optional<std::string> units,
                  std::optional<double> dielectric, std::optional<double> temperature,
                  std::optional<double> min_distance, std::optional<double> ionic_strength,
                  std::optional<std::string> dielectric_model, std::string preset,
                  std::string device, std::string kernel, unsigned threads, bool periodic,
                  std::optional<std::array<double, 6>> box, std::optional<double> ewald_error) {
  Settings s;
  s.periodic = periodic;
  s.ewald_error = ewald_error;
  if (box) {
    const auto& b = *box;
    s.box = UnitCell::from_lengths_angles({b[0], b[1], b[2]}, {b[3], b[4], b[5]});
    if (!s.box->is_periodic())
      throw UsageError(fmt::format("box {:g} {:g} {:g}, {:g} {:g} {:g}: {}", b[0], b[1], b[2], b[3],
                                   b[4], b[5],
                                   s.box->why_unusable().value_or("not a periodic cell")));
  }
  s.options.counts = std::move(grid);
  s.options.spacing = spacing;
  s.options.padding = padding;
  if (origin) s.options.origin = Vec3{(*origin)[0], (*origin)[1], (*origin)[2]};
  if (center) s.options.center = Vec3{(*center)[0], (*center)[1], (*center)[2]};
  s.options.units = std::move(units);
  s.options.dielectric = dielectric;
  s.options.temperature = temperature;
  s.options.min_distance = min_distance;
  s.options.ionic_strength = ionic_strength;
  s.options.dielectric_model = std::move(dielectric_model);
  s.options.preset = std::move(preset);
  s.device = std::move(device);
  s.kernel = std::move(kernel);
  s.threads = threads;
  return s;
}

RunConfig run_config(const Settings& s) {
  RunConfig config;
  resolve_grid_and_physics(s.options, config);
  config.compute.device = parse_device(s.device);
  config.compute.backend.kernel = s.kernel;
  config.compute.backend.threads = s.threads;
  // As the command line's --periodic and --box (apps/dcs/run_options.cpp set_periodic): the
  // grid spans the cell unless placed, and auto is the CPU (no GPU periodic path yet).
  config.input.box = s.box;
  if (s.ewald_error) config.method.ewald_error = *s.ewald_error;
  if (s.periodic) {
    config.method.kind = Method::kEwald;
    config.grid.cell_box = !s.options.origin && !s.options.center && !s.options.padding;
    // The Python results describe a grid by origin, spacing and dims (x, y, z coordinates): a
    // triclinic cell keeps the x, y, z box that bounds it (--map-axes box), not its vectors.
    config.grid.map_axes = MapAxes::kBox;
    if (config.compute.device.kind == DeviceRequest::Kind::kAuto)
      config.compute.device = parse_device("cpu");
  }
  check_periodic(config);
  return config;
}

/// The atoms of the arrays (checked by the library: InputError naming `source`).
System make_system(const Positions& positions, const Charges& charges) {
  if (positions.shape(0) != charges.shape(0))
    throw UsageError("positions has " + std::to_string(positions.shape(0)) +
                     " atoms but charges has " + std::to_string(charges.shape(0)));
  System system;
  system.source_format = "arrays";
  system.atoms.resize(positions.shape(0));
  for (std::size_t i = 0; i < system.atoms.size(); ++i) {
    Atom& atom = system.atoms[i];
    atom.position = {positions(i, 0), positions(i, 1), positions(i, 2)};
    atom.charge = charges(i);
    atom.serial = static_cast<long long>(i + 1);
  }
  return system;
}

/// The atoms of the arrays in the cell of box= (checked for periodic work: a cell, atoms,
/// the Coulomb model).
System make_system(const Positions& positions, const Charges& charges, const Settings& s,
                   const RunConfig& config) {
  System system = make_system(positions, charges);
  if (s.box) system.cell = *s.box;
  if (config.method.kind == Method::kEwald) periodic::check_ewald_input(system, config.physics);
  return system;
}

nb::dict physics_dict(const Physics& physics) {
  nb::dict d;
  d["units"] = std::string(unit_name(physics.unit));
  d["temperature"] = physics.temperature;
  d["dielectric"] = physics.dielectric;
  d["dielectric_model"] = std::string(dielectric_model_name(physics.dielectric_model));
  d["ionic_strength"] = physics.ionic_strength;
  d["min_distance"] = physics.min_distance;
  d["preset"] = physics.preset;
  d["coulomb_constant"] = coulomb_constant(physics);
  d["coulomb_factor"] = coulomb_factor(physics);
  d["coulomb_factor_unit"] = factor_unit(physics.unit, physics.dielectric_model);
  d["physics"] = describe_model(physics);
  return d;
}

nb::dict provenance_dict(const Provenance& prov) {
  nb::dict d;
  d["program"] = prov.program;
  d["version"] = prov.version;
  d["backend"] = prov.backend;
  d["kernel"] = prov.kernel;
  d["reduction"] = prov.reduction;
  d["device"] = prov.device;
  return d;
}

/// [-R, R] and the percentiles [low, high] of a colour range, as the file's attributes
/// colour_range and colour_range_percentiles hold them (dcs_map.to_xarray's attrs).
void add_colour_range(nb::dict& d, const ColourRange& range) {
  d["colour_range"] = std::array<double, 2>{-range.high, range.high};
  d["colour_range_percentiles"] =
      std::array<double, 2>{range.low_percentile, range.high_percentile};
  d["colour_range_near_zero"] = range.low;
}

/// The module's workers, kept between calls (dcs::WorkerCache): a call that finds them in use
/// by another Python thread makes its own.
struct SharedWorkers {
  std::mutex mutex;
  WorkerCache cache;
};
SharedWorkers& shared_workers() {
  static SharedWorkers* shared = new SharedWorkers;  // never destroyed: no CUDA calls at exit
  return *shared;
}

/// fn(cache): with the module's cache when no other thread holds it, else with none.
template <class Fn>
auto with_workers(Fn&& fn) {
  SharedWorkers& shared = shared_workers();
  std::unique_lock<std::mutex> lock(shared.mutex, std::try_to_lock);
  return fn(lock.owns_lock() ? &shared.cache : nullptr);
}

/// (values [nz][ny][nx] owning the engine's buffer, metadata dict).
nb::tuple potential_map(const Positions& positions, const Charges& charges, const Settings& s) {
  const RunConfig config = run_config(s);
  const System system = make_system(positions, charges, s, config);
  MemoryMap map = run_interruptible([&] {
    return with_workers([&](WorkerCache* cache) {
      return compute_map(config, system, "positions", nullptr, cache);
    });
  });
  const GridSpec& grid = map.metadata.grid;
  float* data = map.values->data();
  // The numpy array owns the engine's buffer: no copy.
  auto* owned = new std::unique_ptr<HostBuffer>(std::move(map.values));
  nb::capsule owner(owned,
                    [](void* p) noexcept { delete static_cast<std::unique_ptr<HostBuffer>*>(p); });
  nb::ndarray<nb::numpy, float, nb::ndim<3>> values(
      data,
      {static_cast<std::size_t>(grid.nz()), static_cast<std::size_t>(grid.ny()),
       static_cast<std::size_t>(grid.nx())},
      owner);
  nb::dict meta = physics_dict(map.metadata.physics);
  meta["origin"] = std::array<double, 3>{grid.origin[0], grid.origin[1], grid.origin[2]};
  meta["spacing"] = std::array<double, 3>{grid.spacing[0], grid.spacing[1], grid.spacing[2]};
  meta["dims"] = std::array<std::int64_t, 3>{grid.nx(), grid.ny(), grid.nz()};
  meta["grid"] = grid.describe();
  meta["padding"] = config.grid.padding;
  const GridStats& st = map.metadata.stats;
  nb::dict stats;
  stats["min"] = st.min;
  stats["max"] = st.max;
  stats["mean"] = st.mean;
  stats["rms"] = st.rms;
  stats["sum"] = st.sum;
  stats["count"] = st.count;
  stats["nonfinite"] = st.nonfinite;
  meta["statistics"] = stats;
  meta["provenance"] = provenance_dict(map.metadata.provenance);
  meta["compute_seconds"] = map.compute_seconds;
  meta["method"] = std::string(to_string(config.method.kind));
  if (system.cell.is_periodic()) {
    const UnitCell& cell = system.cell;
    meta["cell"] = std::array<double, 6>{cell.lengths()[0], cell.lengths()[1], cell.lengths()[2],
                                         cell.angles()[0],  cell.angles()[1],  cell.angles()[2]};
  }
  add_colour_range(meta, map.metadata.colour_range);
  return nb::make_tuple(values, meta);
}

/// The colour range of map values [nz][ny][nx] (dict: colour_range, ...), by the file's rule.
nb::dict colour_range(const MapValues& values) {
  GridSpec grid;
  grid.counts = {static_cast<std::int64_t>(values.shape(2)),
                 static_cast<std::int64_t>(values.shape(1)),
                 static_cast<std::int64_t>(values.shape(0))};
  grid.origin = {0.0, 0.0, 0.0};
  grid.spacing = {1.0, 1.0, 1.0};
  const float* data = values.data();
  const ColourRange range = run_interruptible([&] { return colour_range_of(grid, data); });
  nb::dict d;
  add_colour_range(d, range);
  return d;
}

/// A float vector handed to numpy without a copy.
nb::ndarray<nb::numpy, float, nb::ndim<1>> to_numpy(std::vector<float>&& list) {
  auto* values = new std::vector<float>(std::move(list));
  nb::capsule owner(values, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  return nb::ndarray<nb::numpy, float, nb::ndim<1>>(values->data(), {values->size()}, owner);
}

nb::ndarray<nb::numpy, float, nb::ndim<1>> potential_at(const Positions& points,
                                                        const Positions& positions,
                                                        const Charges& charges, const Settings& s) {
  const RunConfig config = run_config(s);
  const System system = make_system(positions, charges);
  std::vector<Vec3> at(points.shape(0));
  for (std::size_t i = 0; i < at.size(); ++i) at[i] = {points(i, 0), points(i, 1), points(i, 2)};
  return to_numpy(run_interruptible([&] {
    return with_workers([&](WorkerCache* cache) {
      return compute_points(config, system, "positions", at, "points", nullptr, cache);
    });
  }));
}

nb::ndarray<nb::numpy, float, nb::ndim<1>> potential_at_atoms(const Positions& positions,
                                                              const Charges& charges,
                                                              const Settings& s) {
  const RunConfig config = run_config(s);
  const System system = make_system(positions, charges);
  return to_numpy(run_interruptible([&] {
    return with_workers([&](WorkerCache* cache) {
      return compute_at_atoms(config, system, "positions", nullptr, cache);
    });
  }));
}

/// The grid place_grid() gives (origin, spacing, dims), without computing.
nb::dict grid_of(const Positions& positions, const Charges& charges, const Settings& s) {
  const RunConfig config = run_config(s);
  const GridSpec grid = place_grid(config, make_system(positions, charges, s, config), "positions");
  nb::dict d;
  d["origin"] = std::array<double, 3>{grid.origin[0], grid.origin[1], grid.origin[2]};
  d["spacing"] = std::array<double, 3>{grid.spacing[0], grid.spacing[1], grid.spacing[2]};
  d["dims"] = std::array<std::int64_t, 3>{grid.nx(), grid.ny(), grid.nz()};
  return d;
}

void write_map_file(const MapValues& values, std::array<double, 3> origin,
                    std::array<double, 3> spacing, const Positions& positions,
                    const Charges& charges, const Settings& s, const nb::dict& provenance,
                    const std::string& path, bool force, int compression) {
  RunConfig config = run_config(s);
  // The format from the name, each written by the run's own writer: .dx and .dx.gz (OpenDX, the
  // command line's dialect), .mrc, else HDF5.
  const auto ends = [&](std::string_view suffix) { return path.ends_with(suffix); };
  if (ends(".dx") || ends(".dx.gz") || ends(".mrc")) {
    config.output.write_hdf5 = false;
    config.output.write_dx = !ends(".mrc");
    config.output.write_mrc = ends(".mrc");
    (config.output.write_mrc ? config.output.mrc_path : config.output.dx_path) = path;
    config.output.dx_gzip = ends(".dx.gz");
  }
  config.output.hdf5_path = path;
  config.output.force = force;
  config.output.compression = compression;
  GridSpec grid;
  grid.counts = {static_cast<std::int64_t>(values.shape(2)),
                 static_cast<std::int64_t>(values.shape(1)),
                 static_cast<std::int64_t>(values.shape(0))};
  grid.origin = {origin[0], origin[1], origin[2]};
  grid.spacing = {spacing[0], spacing[1], spacing[2]};
  System system;
  if (positions.shape(0) > 0) system = make_system(positions, charges);
  system.source_format = "arrays";
  Provenance made_by;
  auto text = [&](const char* key, const char* fallback) {
    return provenance.contains(key) ? nb::cast<std::string>(nb::str(provenance[key]))
                                    : std::string(fallback);
  };
  made_by.backend = text("backend", "unknown");
  made_by.kernel = text("kernel", "unknown");
  made_by.reduction = text("reduction", "unknown");
  made_by.device = text("device", "unknown");
  const float* data = values.data();
  run_interruptible([&] { write_map(config, system, grid, data, made_by); });
}

}  // namespace

namespace {
const std::shared_ptr<WarningCollector>& collector_pointer() {
  // Never destroyed: the logger may log from threads still running at exit.
  static const auto* collector =
      new std::shared_ptr<WarningCollector>(std::make_shared<WarningCollector>());
  return *collector;
}
}  // namespace

WarningCollector& warning_collector() { return *collector_pointer(); }

PyObject* warning_category() {
  static PyObject* category =
      PyErr_NewExceptionWithDoc("dcs.DcsWarning",
                                "A warning of dcs's engine (what the command line logs as "
                                "\"[warning]\").",
                                PyExc_UserWarning, nullptr);
  return category;
}

}  // namespace dcs::python

NB_MODULE(_dcs, m) {
  using namespace dcs::python;
  m.doc() = "dcs's engine for Python; use the package dcs (potential_map, potential_at, ...)";
  // Library log lines (grid, backend, ...) only at warning and above: a Python call is quiet.
  // Warnings go through Python's warnings (library_warnings.hpp), not to stderr.
  dcs::log().set_level(spdlog::level::warn);
  dcs::log().sinks().clear();
  dcs::log().sinks().push_back(collector_pointer());
  m.attr("DcsWarning") = nb::handle(warning_category());

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const dcs::InterruptedError& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const dcs::UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const dcs::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const dcs::IoError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const dcs::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  nb::class_<Settings>(m, "Settings")
      .def(nb::new_(&settings), "grid"_a, "spacing"_a.none(), "padding"_a.none(), "origin"_a.none(),
           "center"_a.none(), "units"_a.none(), "dielectric"_a.none(), "temperature"_a.none(),
           "min_distance"_a.none(), "ionic_strength"_a.none(), "dielectric_model"_a.none(),
           "preset"_a, "device"_a, "kernel"_a, "threads"_a, "periodic"_a, "box"_a.none(),
           "ewald_error"_a.none());
  m.def("potential_map", &potential_map, "positions"_a.noconvert(), "charges"_a.noconvert(),
        "settings"_a);
  m.def("potential_at", &potential_at, "points"_a.noconvert(), "positions"_a.noconvert(),
        "charges"_a.noconvert(), "settings"_a);
  m.def("potential_at_atoms", &potential_at_atoms, "positions"_a.noconvert(),
        "charges"_a.noconvert(), "settings"_a);
  m.def("colour_range", &colour_range, "values"_a.noconvert());
  m.def("grid_of", &grid_of, "positions"_a.noconvert(), "charges"_a.noconvert(), "settings"_a);
  m.def("write_map", &write_map_file, "values"_a.noconvert(), "origin"_a, "spacing"_a,
        "positions"_a.noconvert(), "charges"_a.noconvert(), "settings"_a, "provenance"_a, "path"_a,
        "force"_a, "compression"_a);
  m.def("presets", [] {
    std::vector<std::string> names;
    for (const dcs::Preset& preset : dcs::presets()) names.push_back(preset.name);
    return names;
  });
  m.attr("__version__") = dcs::kVersion;
}
