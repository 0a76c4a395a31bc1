// HDF5 writer: layout, attributes, statistics, validation, atoms, provenance, the VTKHDF group,
// compression, --force, and failures that leave nothing behind. The file is read back through
// the plain HDF5 C API (independent of the writer's helpers) and, when present, h5dump.
#include <gtest/gtest.h>

#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/hdf5.hpp"
#include "output_test_util.hpp"

namespace dcs::io {
namespace {

using test::ScratchDir;

// --- A minimal reader on the raw C API ----------------------------------------------------------

struct Id {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Id() {
    if (id >= 0) close(id);
  }
  operator hid_t() const { return id; }  // NOLINT: test convenience
};

class H5File {
 public:
  explicit H5File(const std::string& path)
      : file_{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose} {
    if (file_.id < 0) throw std::runtime_error("cannot open " + path);
  }
  hid_t id() const { return file_.id; }

  bool exists(const std::string& path) const {
    return H5Lexists(file_.id, path.c_str(), H5P_DEFAULT) > 0;
  }

  std::vector<double> doubles(const std::string& object, const std::string& name) const {
    const Id attr{H5Aopen_by_name(file_.id, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
                  H5Aclose};
    if (attr.id < 0) throw std::runtime_error("no attribute " + object + "@" + name);
    const Id space{H5Aget_space(attr), H5Sclose};
    std::vector<double> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    if (H5Aread(attr, H5T_NATIVE_DOUBLE, values.data()) < 0) throw std::runtime_error("read");
    return values;
  }
  double number(const std::string& object, const std::string& name) const {
    const std::vector<double> values = doubles(object, name);
    EXPECT_EQ(values.size(), 1u) << object << "@" << name;
    return values.at(0);
  }
  std::vector<long long> integers(const std::string& object, const std::string& name) const {
    const Id attr{H5Aopen_by_name(file_.id, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
                  H5Aclose};
    if (attr.id < 0) throw std::runtime_error("no attribute " + object + "@" + name);
    const Id space{H5Aget_space(attr), H5Sclose};
    std::vector<long long> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    if (H5Aread(attr, H5T_NATIVE_LLONG, values.data()) < 0) throw std::runtime_error("read");
    return values;
  }
  /// Reads an enum {FALSE, TRUE} attribute through its own type and checks the member names.
  bool flag(const std::string& object, const std::string& name) const {
    const Id attr{H5Aopen_by_name(file_.id, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
                  H5Aclose};
    if (attr.id < 0) throw std::runtime_error("no attribute " + object + "@" + name);
    const Id type{H5Aget_type(attr), H5Tclose};
    EXPECT_EQ(H5Tget_class(type), H5T_ENUM) << name;
    std::int8_t value = -1;
    H5Aread(attr, type, &value);
    char member[16] = {};
    H5Tenum_nameof(type, &value, member, sizeof member);
    EXPECT_STREQ(member, value ? "TRUE" : "FALSE");
    return value != 0;
  }
  std::string text(const std::string& object, const std::string& name) const {
    const Id attr{H5Aopen_by_name(file_.id, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
                  H5Aclose};
    if (attr.id < 0) throw std::runtime_error("no attribute " + object + "@" + name);
    const Id type{H5Aget_type(attr), H5Tclose};
    if (H5Tis_variable_str(type) > 0) {
      char* pointer = nullptr;
      H5Aread(attr, type, &pointer);
      std::string value = pointer;
      H5free_memory(pointer);
      return value;
    }
    std::string value(H5Tget_size(type), '\0');
    H5Aread(attr, type, value.data());
    return value.substr(0, value.find('\0'));
  }
  std::vector<hsize_t> shape(const std::string& dataset) const {
    const Id set{H5Dopen2(file_.id, dataset.c_str(), H5P_DEFAULT), H5Dclose};
    const Id space{H5Dget_space(set), H5Sclose};
    std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    return dims;
  }
  template <class T>
  std::vector<T> data(const std::string& dataset, hid_t memory_type,
                      std::size_t per_row = 1) const {
    const Id set{H5Dopen2(file_.id, dataset.c_str(), H5P_DEFAULT), H5Dclose};
    const std::vector<hsize_t> dims = shape(dataset);
    std::size_t n = per_row;
    for (const hsize_t d : dims) n *= static_cast<std::size_t>(d);
    std::vector<T> values(n / per_row * per_row);
    if (!values.empty() &&
        H5Dread(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
      throw std::runtime_error("cannot read " + dataset);
    return values;
  }
  std::vector<std::string> strings(const std::string& dataset) const {
    const Id set{H5Dopen2(file_.id, dataset.c_str(), H5P_DEFAULT), H5Dclose};
    const Id type{H5Dget_type(set), H5Tclose};
    const std::size_t width = H5Tget_size(type);
    const std::size_t n = static_cast<std::size_t>(shape(dataset).at(0));
    std::vector<char> buffer(n * width);
    H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data());
    std::vector<std::string> values;
    for (std::size_t row = 0; row < n; ++row) {
      std::string value(buffer.data() + row * width, width);
      values.push_back(value.substr(0, value.find('\0')));
    }
    return values;
  }

 private:
  Id file_;
};

using test::Sample;
using test::sample;

TEST(Hdf5, Available) { EXPECT_TRUE(hdf5_available()); }

TEST(Hdf5, PotentialRoundTripsExactly) {
  ScratchDir dir;
  const Sample s = sample();
  const std::string path = dir.file("map.h5");
  write_hdf5(path, s.values.data(), s.meta, s.system, {});
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"map.h5"});

  const Hdf5Potential map = read_hdf5_potential(path);
  EXPECT_EQ(map.grid.counts, s.grid.counts);
  EXPECT_EQ(map.grid.origin, s.grid.origin);
  EXPECT_EQ(map.grid.spacing, s.grid.spacing);
  EXPECT_EQ(map.values, s.values);
  EXPECT_EQ(map.units, "kT/e");
  EXPECT_EQ(map.coulomb_factor, s.meta.coulomb_factor);

  // Independent check of the storage order: dataset [k][j][i] holds f(i, j, k).
  const H5File file(path);
  EXPECT_EQ(file.shape("/potential"), (std::vector<hsize_t>{5, 4, 3}));
  const std::vector<float> raw = file.data<float>("/potential", H5T_NATIVE_FLOAT);
  EXPECT_EQ(raw[(4 * 4 + 3) * 3 + 2], test::index_value(2, 3, 4));
  EXPECT_EQ(raw[(1 * 4 + 0) * 3 + 2], test::index_value(2, 0, 1));
}

TEST(Hdf5, GridAndPhysicsAttributes) {
  ScratchDir dir;
  Sample s = sample();
  s.meta.physics.temperature = 310.0;
  s.meta.physics.dielectric = 4.0;
  s.meta.physics.min_distance = 0.25;
  s.meta.coulomb_factor = coulomb_factor(s.meta.physics);
  const std::string path = dir.file("attrs.h5");
  write_hdf5(path, s.values.data(), s.meta, s.system, {});

  const H5File f(path);
  EXPECT_EQ(f.doubles("/potential", "origin"), (std::vector<double>{-12.5, 3.25, 101.875}));
  EXPECT_EQ(f.doubles("/potential", "spacing"), (std::vector<double>{0.5, 0.75, 1.25}));
  EXPECT_EQ(f.integers("/potential", "dims"), (std::vector<long long>{3, 4, 5}));
  EXPECT_EQ(f.text("/potential", "axis_order"), "zyx");
  EXPECT_EQ(f.text("/potential", "units"), "kT/e");
  EXPECT_EQ(f.number("/potential", "temperature"), 310.0);
  EXPECT_EQ(f.number("/potential", "dielectric"), 4.0);
  EXPECT_EQ(f.number("/potential", "min_distance"), 0.25);
  EXPECT_EQ(f.number("/potential", "coulomb_factor"), s.meta.coulomb_factor);
  // The factor scales with 1 / (dielectric * temperature) from the default's.
  EXPECT_NEAR(f.number("/potential", "coulomb_factor") * 4.0 * 310.0 / 298.15,
              coulomb_factor(Physics{}), 1e-9);
  EXPECT_EQ(f.text("/potential", "coulomb_factor_unit"), "kT*A/e^2");
  EXPECT_EQ(f.text("/potential", "length_unit"), "angstrom");
  EXPECT_NE(f.text("/potential", "description").find("x varies fastest"), std::string::npos);
  EXPECT_EQ(f.text("/", "format"), "dcs potential map");
  EXPECT_EQ(f.integers("/", "format_version"), std::vector<long long>{1});
}

TEST(Hdf5, StatisticsAndValidation) {
  ScratchDir dir;
  const Sample s = sample();
  const std::string path = dir.file("stats.h5");
  write_hdf5(path, s.values.data(), s.meta, s.system, {});
  const H5File f(path);
  const GridStats& stats = s.meta.stats;
  EXPECT_EQ(f.number("/statistics", "min"), stats.min);
  EXPECT_EQ(f.number("/statistics", "max"), stats.max);
  EXPECT_EQ(f.number("/statistics", "mean"), stats.mean);
  EXPECT_EQ(f.number("/statistics", "rms"), stats.rms);
  EXPECT_EQ(f.number("/statistics", "sum"), stats.sum);
  EXPECT_EQ(f.integers("/statistics", "count"), std::vector<long long>{60});
  EXPECT_EQ(f.integers("/statistics", "nonfinite"), std::vector<long long>{0});
  EXPECT_EQ(stats.min, -(100.0 * 2 + 10.0 * 3 + 3 + 0.25));

  EXPECT_TRUE(f.flag("/validation", "performed"));
  EXPECT_TRUE(f.flag("/validation", "passed"));
  EXPECT_TRUE(f.flag("/validation", "all_points"));
  EXPECT_EQ(f.integers("/validation", "points"), std::vector<long long>{60});
  EXPECT_EQ(f.number("/validation", "max_abs_error"), 1.5e-6);
  EXPECT_EQ(f.number("/validation", "rms_error"), 2.5e-7);
  EXPECT_EQ(f.number("/validation", "max_abs_reference"), 437.25);
  EXPECT_EQ(f.number("/validation", "max_rel_error"), 3.4e-9);
  EXPECT_EQ(f.number("/validation", "tolerance"), 1e-5);
}

TEST(Hdf5, UnperformedValidationIsStoredAsFalse) {
  ScratchDir dir;
  Sample s = sample();
  s.meta.validation = Validation{};
  const std::string path = dir.file("noval.h5");
  write_hdf5(path, s.values.data(), s.meta, s.system, {});
  const H5File f(path);
  EXPECT_FALSE(f.flag("/validation", "performed"));
  EXPECT_FALSE(f.flag("/validation", "passed"));
}

TEST(Hdf5, Atoms) {
  ScratchDir dir;
  const Sample s = sample();
  const std::string path = dir.file("atoms.h5");
  write_hdf5(path, s.values.data(), s.meta, s.system, {});
  const H5File f(path);
  EXPECT_EQ(f.shape("/atoms/position"), (std::vector<hsize_t>{2, 3}));
  EXPECT_EQ(f.data<double>("/atoms/position", H5T_NATIVE_DOUBLE),
            (std::vector<double>{1.0, -2.5, 3.25, -4.125, 0.0, 12.5}));
  EXPECT_EQ(f.data<double>("/atoms/charge", H5T_NATIVE_DOUBLE), (std::vector<double>{-0.5, 1.0}));
  EXPECT_EQ(f.data<double>("/atoms/radius", H5T_NATIVE_DOUBLE), (std::vector<double>{1.7, 0.0}));
  EXPECT_EQ(f.data<long long>("/atoms/serial", H5T_NATIVE_LLONG),
            (std::vector<long long>{1, 100001}));
  EXPECT_EQ(f.data<long long>("/atoms/res_seq", H5T_NATIVE_LLONG),
            (std::vector<long long>{7, 1001}));
  EXPECT_EQ(f.strings("/atoms/name"), (std::vector<std::string>{"N", "ZN"}));
  EXPECT_EQ(f.strings("/atoms/res_name"), (std::vector<std::string>{"ALA", "ZN2+"}));
  EXPECT_EQ(f.strings("/atoms/chain"), (std::vector<std::string>{"A", ""}));
  {
    const Id set{H5Dopen2(f.id(), "/atoms/hetatm", H5P_DEFAULT), H5Dclose};
    const Id type{H5Dget_type(set), H5Tclose};
    EXPECT_EQ(H5Tget_class(type), H5T_ENUM);
    std::array<std::int8_t, 2> hetatm{};
    H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, hetatm.data());
    EXPECT_EQ(hetatm, (std::array<std::int8_t, 2>{0, 1}));
  }
  EXPECT_EQ(f.integers("/atoms", "count"), std::vector<long long>{2});
  EXPECT_EQ(f.number("/atoms", "total_charge"), 0.5);
  EXPECT_EQ(f.text("/atoms", "source_path"), "data/my mol.pqr");
  EXPECT_EQ(f.text("/atoms", "source_format"), "pqr");
  EXPECT_EQ(f.text("/atoms", "source_sha256").size(), 64u);
}

TEST(Hdf5, NoAtomsGivesEmptyDatasets) {
  ScratchDir dir;
  Sample s = sample();
  s.system = System{};
  const std::string path = dir.file("empty.h5");
  write_hdf5(path, s.values.data(), s.meta, s.system, {});
  const H5File f(path);
  EXPECT_EQ(f.shape("/atoms/position"), (std::vector<hsize_t>{0, 3}));
  EXPECT_EQ(f.shape("/atoms/name"), (std::vector<hsize_t>{0}));
  EXPECT_EQ(f.integers("/atoms", "count"), std::vector<long long>{0});
}

TEST(Hdf5, Provenance) {
  ScratchDir dir;
  Sample s = sample();
  s.meta.provenance.timings.emplace_back("write", 0.5);  // a repeated stage name
  s.meta.provenance.device = "caf\xc3\xa9 \xff";         // valid UTF-8, then an invalid byte
  const std::string path = dir.file("prov.h5");
  write_hdf5(path, s.values.data(), s.meta, s.system, {});
  const H5File f(path);
  const Provenance& p = s.meta.provenance;
  EXPECT_EQ(f.text("/provenance", "program"), "dcs");
  EXPECT_EQ(f.text("/provenance", "version"), p.version);
  EXPECT_EQ(f.text("/provenance", "command_line"), p.command_line);
  EXPECT_EQ(f.text("/provenance", "input_path"), p.input_path);
  EXPECT_EQ(f.text("/provenance", "input_sha256"), p.input_sha256);
  EXPECT_EQ(f.text("/provenance", "backend"), p.backend);
  EXPECT_EQ(f.text("/provenance", "kernel"), p.kernel);
  EXPECT_EQ(f.text("/provenance", "reduction"), p.reduction);
  EXPECT_EQ(f.text("/provenance", "device"), "caf\xc3\xa9 ?");
  EXPECT_EQ(f.text("/provenance", "hostname"), p.hostname);
  EXPECT_EQ(f.text("/provenance", "created"), p.created);
  EXPECT_EQ(f.number("/provenance/timings", "read"), 0.125);
  EXPECT_EQ(f.number("/provenance/timings", "compute"), 1.5);
  EXPECT_EQ(f.number("/provenance/timings", "write"), 0.25);
  EXPECT_EQ(f.number("/provenance/timings", "write (2)"), 0.5);
  EXPECT_EQ(f.text("/provenance/timings", "unit"), "s");
}

TEST(Hdf5, VtkHdfImageDataGroup) {
  ScratchDir dir;
  const Sample s = sample();
  const std::string path = dir.file("vtk.h5");
  write_hdf5(path, s.values.data(), s.meta, s.system, {});
  const H5File f(path);
  EXPECT_EQ(f.integers("/VTKHDF", "Version"), (std::vector<long long>{1, 0}));
  EXPECT_EQ(f.text("/VTKHDF", "Type"), "ImageData");
  EXPECT_EQ(f.integers("/VTKHDF", "WholeExtent"), (std::vector<long long>{0, 2, 0, 3, 0, 4}));
  EXPECT_EQ(f.doubles("/VTKHDF", "Origin"), f.doubles("/potential", "origin"));
  EXPECT_EQ(f.doubles("/VTKHDF", "Spacing"), f.doubles("/potential", "spacing"));
  EXPECT_EQ(f.doubles("/VTKHDF", "Direction"), (std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(f.text("/VTKHDF/PointData", "Scalars"), "potential");
  EXPECT_EQ(H5Aexists_by_name(f.id(), "/potential", "Attribute", H5P_DEFAULT), 0);  // not VTKHDF's
  {
    // VTK's reader checks Type is an ASCII string; the examples in its docs are fixed-length.
    const Id attr{H5Aopen_by_name(f.id(), "/VTKHDF", "Type", H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
    const Id type{H5Aget_type(attr), H5Tclose};
    EXPECT_EQ(H5Tget_cset(type), H5T_CSET_ASCII);
    EXPECT_EQ(H5Tis_variable_str(type), 0);
  }
  // The map is stored once: one hard link (/MDF/images/0/image, ChimeraX's view) and soft links
  // for /potential and VTKHDF, which PyTables-based readers (ChimeraX) do not follow.
  for (const char* name : {"/VTKHDF/PointData/potential", "/potential"}) {
    H5L_info_t link{};
    ASSERT_GE(H5Lget_info(f.id(), name, &link, H5P_DEFAULT), 0) << name;
    EXPECT_EQ(link.type, H5L_TYPE_SOFT) << name;
    EXPECT_EQ(f.shape(name), (std::vector<hsize_t>{5, 4, 3})) << name;
    EXPECT_EQ(f.data<float>(name, H5T_NATIVE_FLOAT), s.values) << name;
  }
  H5L_info_t image{};
  ASSERT_GE(H5Lget_info(f.id(), "/MDF/images/0/image", &image, H5P_DEFAULT), 0);
  EXPECT_EQ(image.type, H5L_TYPE_HARD);
  EXPECT_EQ(f.doubles("/MDF/images/0", "origin"), f.doubles("/potential", "origin"));
  EXPECT_EQ(f.doubles("/MDF/images/0", "step"), f.doubles("/potential", "spacing"));
  const std::vector<double> spacing = f.doubles("/potential", "spacing");
  EXPECT_EQ(f.doubles("/MDF/images/0", "EMAN.apix_x"), std::vector<double>{spacing[0]});
  EXPECT_EQ(f.doubles("/MDF/images/0", "EMAN.apix_z"), std::vector<double>{spacing[2]});
}

TEST(Hdf5, ChunkedPlanesAndOptionalCompression) {
  ScratchDir dir;
  const Sample s = sample(40, 30, 20);  // chunks of 16 planes of at most 64 x 64 points
  write_hdf5(dir.file("raw.h5"), s.values.data(), s.meta, s.system, {});
  Hdf5Options gzip;
  gzip.gzip_level = 6;
  write_hdf5(dir.file("gz.h5"), s.values.data(), s.meta, s.system, gzip);

  for (const char* name : {"raw.h5", "gz.h5"}) {
    const H5File f(dir.file(name));
    const Id set{H5Dopen2(f.id(), "/potential", H5P_DEFAULT), H5Dclose};
    const Id dcpl{H5Dget_create_plist(set), H5Pclose};
    ASSERT_EQ(H5Pget_layout(dcpl), H5D_CHUNKED) << name;
    std::array<hsize_t, 3> chunk{};
    H5Pget_chunk(dcpl, 3, chunk.data());
    EXPECT_EQ(chunk, (std::array<hsize_t, 3>{16, 30, 40})) << name;
    const int filters = H5Pget_nfilters(dcpl);
    if (std::string(name) == "raw.h5") {
      EXPECT_EQ(filters, 0);
    } else {
      ASSERT_EQ(filters, 2);
      unsigned flags = 0;
      std::size_t n_values = 4;
      std::array<unsigned, 4> values{};
      EXPECT_EQ(H5Pget_filter2(dcpl, 0, &flags, &n_values, values.data(), 0, nullptr, nullptr),
                H5Z_FILTER_SHUFFLE);
      n_values = 4;
      EXPECT_EQ(H5Pget_filter2(dcpl, 1, &flags, &n_values, values.data(), 0, nullptr, nullptr),
                H5Z_FILTER_DEFLATE);
      EXPECT_EQ(values[0], 6u);
    }
    EXPECT_EQ(read_hdf5_potential(dir.file(name)).values, s.values) << name;
  }
  EXPECT_LT(std::filesystem::file_size(dir.file("gz.h5")),
            std::filesystem::file_size(dir.file("raw.h5")));
}

TEST(Hdf5, LargePlanesAreChunkedInTiles) {
  ScratchDir dir;
  const Sample s = sample(600, 500, 3);  // 64 x 64 tiles: z-slab writes and x-slab reads
  const std::string path = dir.file("rows.h5");
  write_hdf5(path, s.values.data(), s.meta, s.system, {});
  const H5File f(path);
  const Id set{H5Dopen2(f.id(), "/potential", H5P_DEFAULT), H5Dclose};
  const Id dcpl{H5Dget_create_plist(set), H5Pclose};
  std::array<hsize_t, 3> chunk{};
  H5Pget_chunk(dcpl, 3, chunk.data());
  EXPECT_EQ(chunk, (std::array<hsize_t, 3>{3, 64, 64}));
  EXPECT_EQ(read_hdf5_potential(path).values, s.values);
}

TEST(Hdf5, RefusesToOverwriteWithoutForce) {
  ScratchDir dir;
  const Sample s = sample();
  const std::string path = dir.file("exists.h5");
  test::write_bytes(path, "precious");
  try {
    write_hdf5(path, s.values.data(), s.meta, s.system, {});
    FAIL() << "expected IoError";
  } catch (const IoError& error) {
    EXPECT_EQ(std::string(error.what()), path + " exists; use --force to overwrite");
  }
  EXPECT_EQ(test::read_bytes(path), "precious");
  Hdf5Options force;
  force.force = true;
  write_hdf5(path, s.values.data(), s.meta, s.system, force);
  EXPECT_EQ(read_hdf5_potential(path).values, s.values);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"exists.h5"});
}

TEST(Hdf5, BadGzipLevelIsAUsageError) {
  ScratchDir dir;
  const Sample s = sample();
  Hdf5Options opts;
  opts.gzip_level = 10;
  EXPECT_THROW(write_hdf5(dir.file("x.h5"), s.values.data(), s.meta, s.system, opts), UsageError);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Hdf5, NonFiniteValueMidwayLeavesNoFile) {
  // 128 x 128 planes: chunks of 16 planes, written one after the other. The infinity in plane
  // 50 is found after three chunks are in the temporary file.
  ScratchDir dir;
  Sample s = sample(128, 128, 64);
  s.values[s.grid.index(5, 6, 50)] = -INFINITY;
  const std::string path = dir.file("inf.h5");
  try {
    write_hdf5(path, s.values.data(), s.meta, s.system, {});
    FAIL() << "expected IoError";
  } catch (const IoError& error) {
    EXPECT_NE(std::string(error.what()).find("(5, 6, 50)"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("error writing " + path), std::string::npos);
  }
  EXPECT_TRUE(dir.entries().empty());
  EXPECT_EQ(pending_temporary_count(), 0u);
}

TEST(Hdf5, DiskFullIsAnIoErrorWithTheHdf5MessageAndLeavesNoFile) {
  ScratchDir dir;
  const Sample s = sample(64, 64, 64);  // 1 MiB of floats
  const std::string path = dir.file("full.h5");
  rlimit saved{};
  ::getrlimit(RLIMIT_FSIZE, &saved);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limit = saved;
  limit.rlim_cur = 256 * 1024;
  ::setrlimit(RLIMIT_FSIZE, &limit);
  std::string message;
  try {
    write_hdf5(path, s.values.data(), s.meta, s.system, {});
  } catch (const IoError& error) {
    message = error.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(message.empty()) << "the write should have failed";
  EXPECT_NE(message.find("error writing " + path), std::string::npos) << message;
  EXPECT_NE(message.find("failed: "), std::string::npos) << message;
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Hdf5, MissingDirectoryFailsBeforeWriting) {
  ScratchDir dir;
  const Sample s = sample();
  EXPECT_THROW(write_hdf5(dir.file("nope/x.h5"), s.values.data(), s.meta, s.system, {}), IoError);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Hdf5, ReaderErrorsAreInputErrors) {
  ScratchDir dir;
  try {
    (void)read_hdf5_potential(dir.file("absent.h5"));
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("No such file"), std::string::npos) << error.what();
  }
  test::write_bytes(dir.file("text.h5"), "this is not HDF5\n");
  try {
    (void)read_hdf5_potential(dir.file("text.h5"));
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("H5Fopen"), std::string::npos) << error.what();
  }
}

TEST(Hdf5, H5dumpParsesTheFile) {
  const char* h5dump = "/usr/bin/h5dump";
  if (::access(h5dump, X_OK) != 0) GTEST_SKIP() << h5dump << " not installed (hdf5-tools)";
  ScratchDir dir;
  const Sample s = sample();
  const std::string path = dir.file("dump.h5");
  Hdf5Options opts;
  opts.gzip_level = 4;
  write_hdf5(path, s.values.data(), s.meta, s.system, opts);
  const std::string command = std::string(h5dump) + " '" + path + "' 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  ASSERT_TRUE(pipe);
  std::string output;
  char buffer[4096];
  while (const std::size_t got = std::fread(buffer, 1, sizeof buffer, pipe.get()))
    output.append(buffer, got);
  const int status = ::pclose(pipe.release());
  EXPECT_EQ(status, 0) << output;
  for (const char* expected :
       {"DATASET \"image\"", "SOFTLINK \"potential\"", "LINKTARGET \"/MDF/images/0/image\"",
        "H5T_IEEE_F32LE", "DATASPACE  SIMPLE { ( 5, 4, 3 ) / ( 5, 4, 3 ) }", "GROUP \"VTKHDF\"",
        "\"ImageData\"", "GROUP \"statistics\"", "GROUP \"atoms\"", "\"ZN2+\"",
        "GROUP \"provenance\"", "\"kT/e\""})
    EXPECT_NE(output.find(expected), std::string::npos) << "missing " << expected;
}

}  // namespace
}  // namespace dcs::io
