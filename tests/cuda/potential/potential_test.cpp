// Every CUDA potential kernel of the registry against the float64 CPU reference, on cases that
// break kernels: one atom, atoms exactly on grid points (the clamp), chunk boundaries of both
// the constant-memory chunks (2000) and the production chunks (4000), odd grids, a 1x1x1 grid,
// rows longer than a block, slabs, atoms far outside the grid, protein-like systems and real
// molecules from apbs-data. The host output is poisoned with NaN before each compute (and the
// backend, in debug-sync mode, poisons its device slab), so an unwritten point fails.
// Tolerance: |V - V_ref| <= 1e-5 * max|V_ref| over the compared slab.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/error.hpp"
#include "dcs/stats.hpp"
#include "potential_cases.hpp"

namespace dcs::test {
namespace {

// --- Cases -------------------------------------------------------------------------------------

PotentialCase single_atom() {
  PotentialCase c;
  c.grid = make_spec(23, 19, 17, {-3.2, 1.1, 0.7}, {0.37, 0.41, 0.45});  // anisotropic spacing
  c.system.atoms = {make_atom(0.123, 4.567, 3.21, -1.3)};
  return c;
}

PotentialCase atoms_on_grid_points() {
  PotentialCase c;
  c.grid = make_spec(16, 16, 16, {1.0, 2.0, 3.0}, {0.5, 0.5, 0.5});
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> index(0, 15);
  std::uniform_real_distribution<double> charge(-1.0, 1.0);
  for (int a = 0; a < 60; ++a) {
    const Vec3 p = c.grid.point(index(rng), index(rng), index(rng));
    c.system.atoms.push_back(make_atom(p[0], p[1], p[2], charge(rng)));
  }
  const Vec3 corner = c.grid.point(15, 0, 15);  // two atoms on one point, on the grid's edge
  c.system.atoms.push_back(make_atom(corner[0], corner[1], corner[2], 0.7));
  c.system.atoms.push_back(make_atom(corner[0], corner[1], corner[2], -0.2));
  return c;
}

/// n atoms at protein density (0.05 / Å^3) around a small grid: crosses chunk boundaries.
PotentialCase atom_count(std::size_t n) {
  PotentialCase c;
  c.grid = make_spec(12, 11, 10, {-3.3, -3.0, -2.7}, {0.6, 0.6, 0.6});
  const double side = std::cbrt(static_cast<double>(n) / 0.05);
  c.system = random_atoms(n, {0.0, 0.0, 0.0}, std::max(side, 8.0), 100 + n);
  return c;
}

PotentialCase odd_grid() {
  PotentialCase c;
  c.grid = make_spec(37, 29, 23, {-9.0, -7.0, -5.5}, {0.5, 0.5, 0.5});
  c.system = random_atoms(300, {0.0, 0.0, 0.0}, 18.0, 37);
  return c;
}

PotentialCase grid_1x1x1() {
  PotentialCase c;
  c.grid = make_spec(1, 1, 1, {0.25, -0.5, 1.0}, {1.0, 1.0, 1.0});
  c.system = random_atoms(20, {0.0, 0.0, 0.0}, 10.0, 1, /*positive=*/true);
  return c;
}

PotentialCase wide_rows() {
  PotentialCase c;  // nx > 256: production blocks end mid-row, textbook blocks leave x tails
  c.grid = make_spec(261, 3, 5, {-65.0, -0.5, -1.0}, {0.5, 0.5, 0.5});
  c.system = random_atoms(250, {0.0, 0.0, 0.0}, 130.0, 261);
  return c;
}

PotentialCase slabs() {
  PotentialCase c;
  c.grid = make_spec(20, 18, 27, {-5.0, -4.5, -6.5}, {0.5, 0.5, 0.5});
  c.system = random_atoms(500, {0.0, 0.0, 0.0}, 16.0, 27);
  c.slabs = {{0, 1}, {1, 3}, {4, 8}, {12, 9}, {21, 6}, {0, 27}};
  return c;
}

PotentialCase far_atoms() {
  PotentialCase c;  // atoms hundreds of Å outside the grid next to atoms inside it
  c.grid = make_spec(14, 13, 12, {0.0, 0.0, 0.0}, {0.5, 0.5, 0.5});
  c.system = random_atoms(80, {3.5, 3.0, 3.0}, 7.0, 14);
  c.system.atoms.push_back(make_atom(-700.0, 20.0, 3.0, 5.0));
  c.system.atoms.push_back(make_atom(4.0, 2500.0, -900.0, -5.0));
  return c;
}

PotentialCase protein(std::uint64_t seed) {
  PotentialCase c;
  c.grid = make_spec(40, 36, 32, {-10.0, -9.0, -8.0}, {0.5, 0.5, 0.5});
  c.system = protein_like(3000, {0.0, 0.0, 0.0}, seed);
  return c;
}

PotentialCase molecule(const std::string& relative_path, std::int64_t n) {
  PotentialCase c;
  const std::string path = apbs_data_dir() + "/" + relative_path;
  if (!std::filesystem::exists(path)) throw std::runtime_error("apbs-data file missing: " + path);
  c.system = read_pqr_for_test(path);
  GridRequest request;
  request.counts = {{n, n, n}};
  c.grid = make_grid(c.system, request);
  return c;
}

struct CaseEntry {
  const char* name;
  PotentialCase (*make)();
};

const CaseEntry kCases[] = {
    {"single_atom", &single_atom},
    {"atoms_on_grid_points", &atoms_on_grid_points},
    {"atoms_1", [] { return atom_count(1); }},
    {"atoms_1999", [] { return atom_count(1999); }},
    {"atoms_2000", [] { return atom_count(2000); }},
    {"atoms_2001", [] { return atom_count(2001); }},
    {"atoms_3999", [] { return atom_count(3999); }},
    {"atoms_4000", [] { return atom_count(4000); }},
    {"atoms_4001", [] { return atom_count(4001); }},
    {"atoms_10007", [] { return atom_count(10007); }},
    {"odd_grid_37x29x23", &odd_grid},
    {"grid_1x1x1", &grid_1x1x1},
    {"wide_rows_261x3x5", &wide_rows},
    {"slabs", &slabs},
    {"far_atoms", &far_atoms},
    {"protein_like_seed_11", [] { return protein(11); }},
    {"protein_like_seed_12", [] { return protein(12); }},
    {"barnase_pqr", [] { return molecule("examples/pbsam-barn_bars/barnase.pqr", 41); }},
    {"actin_pqr", [] { return molecule("examples/actin-dimer/mol1.pqr", 33); }},
};

/// A case with its float64 reference per slab, computed once and shared by every kernel.
struct PreparedCase {
  PotentialCase problem;
  std::vector<std::vector<double>> references;
};

const PreparedCase& prepared(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<PreparedCase>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& entry = cache[name];
  if (!entry) {
    const auto found = std::find_if(std::begin(kCases), std::end(kCases),
                                    [&](const CaseEntry& e) { return name == e.name; });
    auto result = std::make_unique<PreparedCase>();
    result->problem = found->make();
    result->problem.name = name;
    if (result->problem.slabs.empty()) result->problem.slabs = {{0, result->problem.grid.nz()}};
    for (const Slab& slab : result->problem.slabs) {
      const std::vector<Vec3> points = slab_points(result->problem.grid, slab);
      std::vector<double> reference(points.size());
      reference_potential(result->problem.system, result->problem.physics, points.data(),
                          points.size(), reference.data());
      result->references.push_back(std::move(reference));
    }
    entry = std::move(result);
  }
  return *entry;
}

// --- Fixtures ------------------------------------------------------------------------------------

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::cuda_available()) GTEST_SKIP() << "no GPU: " << cuda::cuda_unavailable_reason();
  }
};

struct KernelCase {
  std::string kernel;
  std::string case_name;
};

class KernelVsReference : public ::testing::TestWithParam<KernelCase> {
 protected:
  void SetUp() override {
    if (!cuda::cuda_available()) GTEST_SKIP() << "no GPU: " << cuda::cuda_unavailable_reason();
  }
};

TEST_P(KernelVsReference, MatchesFloat64Reference) {
  const KernelCase& param = GetParam();
  const PreparedCase* prepared_case = nullptr;
  try {
    prepared_case = &prepared(param.case_name);
  } catch (const std::runtime_error& error) {
    GTEST_SKIP() << error.what();  // only the apbs-data molecules can be missing
  }
  const PotentialCase& problem = prepared_case->problem;

  BackendOptions options;
  options.kernel = param.kernel;
  options.debug_sync = true;  // fault at the kernel that caused it; NaN-poisoned device slab
  const auto backend = cuda::make_cuda_backend(options);
  EXPECT_EQ(backend->kernel_name(), param.kernel);
  EXPECT_DOUBLE_EQ(backend->tolerance(), kRelativeTolerance);
  backend->prepare(problem.system, problem.grid, problem.physics);

  for (std::size_t s = 0; s < problem.slabs.size(); ++s) {
    const Slab& slab = problem.slabs[s];
    SCOPED_TRACE("slab z " + std::to_string(slab.z_begin) + " + " + std::to_string(slab.z_count));
    const std::size_t n = problem.grid.plane_points() * static_cast<std::size_t>(slab.z_count);
    std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN());
    const StatsAccum stats = backend->compute(slab, out.data());

    const Comparison result = compare(out, prepared_case->references[s]);
    EXPECT_EQ(result.nonfinite, 0u) << "points not written (still NaN) or not finite";
    EXPECT_LE(result.max_abs_error, kRelativeTolerance * result.max_abs_reference)
        << "relative error " << result.relative() << " at point " << result.worst_index << " of "
        << n << " (V_ref = " << prepared_case->references[s][result.worst_index] << ")";

    // The statistics come from the device slab; they must describe what was downloaded.
    const StatsAccum expected = cpu_statistics(out.data(), n);
    EXPECT_EQ(stats.count, expected.count);
    EXPECT_EQ(stats.nonfinite, expected.nonfinite);
    EXPECT_EQ(stats.min, expected.min);
    EXPECT_EQ(stats.max, expected.max);
    // Both sum the same floats in double, in different orders.
    const double max_abs = std::max(std::fabs(expected.min), std::fabs(expected.max));
    EXPECT_NEAR(stats.sum, expected.sum, 1e-12 * static_cast<double>(n) * max_abs + 1e-12);
  }
  const BackendTimings timings = backend->timings();
  EXPECT_GT(timings.kernels, 0.0);
}

std::vector<KernelCase> all_kernel_cases() {
  std::vector<KernelCase> cases;
  for (const VariantInfo& variant : cuda::cuda_kernel_variants())
    for (const CaseEntry& entry : kCases) cases.push_back({variant.name, entry.name});
  return cases;
}

std::string case_test_name(const ::testing::TestParamInfo<KernelCase>& info) {
  std::string name = info.param.kernel + "_" + info.param.case_name;
  std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Registry, KernelVsReference, ::testing::ValuesIn(all_kernel_cases()),
                         case_test_name);

// --- Values do not depend on the slab -------------------------------------------------------

class KernelSlabIndependence : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!cuda::cuda_available()) GTEST_SKIP() << "no GPU: " << cuda::cuda_unavailable_reason();
  }
};

/// backend.hpp's determinism contract: a point's value is the same bits whichever slab computes
/// it, provided slabs start at multiples of slab_hint().plane_multiple, including slabs that end
/// inside a kernel's group of planes. Atoms on and next to grid points exercise the exact path.
TEST_P(KernelSlabIndependence, PointValuesAreBitIdenticalAcrossSlabings) {
  BackendOptions options;
  options.kernel = GetParam();
  const auto backend = cuda::make_cuda_backend(options);
  const std::int64_t multiple = backend->slab_hint().plane_multiple;
  const std::int64_t nz = 3 * multiple + 5;
  const GridSpec grid = make_spec(29, 23, nz, {-7.0, -5.5, -0.5 * static_cast<double>(nz) * 0.4},
                                  {0.5, 0.5, 0.4});
  System system = protein_like(1500, {0.0, 0.0, 0.0}, 77);
  for (std::int64_t k = 0; k < nz; k += 3) {  // atoms on grid points, every third plane
    const Vec3 p = grid.point(k % 29, (2 * k) % 23, k);
    system.atoms.push_back(make_atom(p[0], p[1], p[2], k % 2 == 0 ? 0.6 : -0.6));
  }
  backend->prepare(system, grid, Physics{});
  const std::size_t plane = grid.plane_points();
  std::vector<float> whole(plane * static_cast<std::size_t>(nz));
  backend->compute(Slab{0, nz}, whole.data());
  // Slabs starting at multiples of plane_multiple, with lengths that end mid-group.
  const std::int64_t m = multiple;
  const std::vector<Slab> slabs{{0, m},     {m, m},         {2 * m, m},    {3 * m, 5}, {0, m + 3},
                                {m, 3},     {m, nz - m},    {2 * m, 1},    {3 * m, 2}, {0, 1},
                                {2 * m, m + 4}};
  for (const Slab& slab : slabs) {
    std::vector<float> part(plane * static_cast<std::size_t>(slab.z_count));
    backend->compute(slab, part.data());
    for (std::size_t p = 0; p < part.size(); ++p) {
      const std::size_t index = static_cast<std::size_t>(slab.z_begin) * plane + p;
      ASSERT_EQ(part[p], whole[index])
          << "slab [" << slab.z_begin << ", " << slab.z_begin + slab.z_count << ") point " << index;
    }
  }
}

std::vector<std::string> production_kernels() {
  std::vector<std::string> names;
  for (const VariantInfo& variant : cuda::cuda_kernel_variants())
    if (variant.name.rfind("production", 0) == 0) names.push_back(variant.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Registry, KernelSlabIndependence, ::testing::ValuesIn(production_kernels()),
                         [](const ::testing::TestParamInfo<std::string>& kernel) {
                           std::string name = kernel.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// --- The registry and the backend's contract ------------------------------------------------

TEST(CudaKernelRegistry, ListsEveryKernelOnceWithTheDefaultFirst) {
  const std::vector<VariantInfo> variants = cuda::cuda_kernel_variants();
  ASSERT_GE(variants.size(), 6u);
  EXPECT_TRUE(variants.front().is_default);
  for (const char* name : {"production", "scatter", "gather", "coarsened", "coalesced"})
    EXPECT_EQ(std::count_if(variants.begin(), variants.end(),
                            [&](const VariantInfo& v) { return v.name == name; }), 1)
        << name;
  for (std::size_t i = 1; i < variants.size(); ++i) EXPECT_FALSE(variants[i].is_default);
  for (const VariantInfo& v : variants) {
    EXPECT_EQ(v.backend, "cuda");
    EXPECT_EQ(v.kind, VariantKind::Potential);
    EXPECT_FALSE(v.summary.empty()) << v.name;
  }
}

TEST_F(CudaTest, UnknownKernelIsAUsageErrorListingTheNames) {
  BackendOptions options;
  options.kernel = "no-such-kernel";
  try {
    cuda::make_cuda_backend(options);
    FAIL() << "no error for an unknown kernel";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("no-such-kernel"), std::string::npos) << message;
    for (const VariantInfo& v : cuda::cuda_kernel_variants())
      EXPECT_NE(message.find(v.name), std::string::npos) << message;
  }
}

TEST_F(CudaTest, UnknownReductionAndDeviceAreUsageErrors) {
  BackendOptions options;
  options.reduction = "no-such-reduction";
  EXPECT_THROW(cuda::make_cuda_backend(options), UsageError);
  options.reduction.clear();
  options.device = 4096;
  EXPECT_THROW(cuda::make_cuda_backend(options), UsageError);
}

TEST_F(CudaTest, DefaultBackendDescribesItsDevice) {
  const auto backend = cuda::make_cuda_backend(BackendOptions{});
  EXPECT_EQ(backend->name(), "cuda");
  EXPECT_EQ(backend->kernel_name(), cuda::cuda_kernel_variants().front().name);
  const std::string device = backend->device_name();
  EXPECT_NE(device.find("cuda:0"), std::string::npos) << device;
  EXPECT_NE(device.find("sm_"), std::string::npos) << device;
  EXPECT_NE(device.find("SMs"), std::string::npos) << device;
  const auto devices = cuda::cuda_devices();
  ASSERT_FALSE(devices.empty());
  EXPECT_GT(devices.front().multiprocessors, 0);
  EXPECT_GT(devices.front().clock_khz, 0);
  EXPECT_GT(devices.front().memory_bytes, 0u);
}

TEST_F(CudaTest, EmptySystemAndBadSlabsAreUsageErrors) {
  const auto backend = cuda::make_cuda_backend(BackendOptions{});
  std::vector<float> out(8);
  EXPECT_THROW(backend->compute({0, 1}, out.data()), UsageError);  // before prepare()
  const GridSpec grid = make_spec(2, 2, 2, {0, 0, 0}, {1, 1, 1});
  EXPECT_THROW(backend->prepare(System{}, grid, Physics{}), UsageError);
  System one;
  one.atoms = {make_atom(0.5, 0.5, 0.5, 1.0)};
  backend->prepare(one, grid, Physics{});
  EXPECT_THROW(backend->compute({1, 2}, out.data()), UsageError);
  EXPECT_THROW(backend->compute({0, 0}, out.data()), UsageError);
  EXPECT_NO_THROW(backend->compute({1, 1}, out.data()));
}

TEST_F(CudaTest, StatisticsAndDifferenceOfHostArraysMatchTheCpu) {
  const auto backend = cuda::make_cuda_backend(BackendOptions{});
  std::vector<float> values(100003);
  std::vector<double> reference(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(std::sin(0.001 * static_cast<double>(i)) * 50.0);
    reference[i] = static_cast<double>(values[i]) + 1e-3 * std::cos(static_cast<double>(i));
  }
  values[77] = std::numeric_limits<float>::infinity();
  const StatsAccum gpu = backend->statistics(values.data(), values.size());
  const StatsAccum cpu = cpu_statistics(values.data(), values.size());
  EXPECT_EQ(gpu.count, cpu.count);
  EXPECT_EQ(gpu.nonfinite, 1u);
  EXPECT_EQ(gpu.min, cpu.min);
  EXPECT_EQ(gpu.max, cpu.max);
  EXPECT_NEAR(gpu.sum, cpu.sum, 1e-12 * static_cast<double>(values.size()) * 50.0);
  const DiffAccum diff_gpu = backend->difference(values.data(), reference.data(), values.size());
  const DiffAccum diff_cpu = cpu_difference(values.data(), reference.data(), values.size());
  EXPECT_EQ(diff_gpu.count, diff_cpu.count);
  EXPECT_EQ(diff_gpu.nonfinite, diff_cpu.nonfinite);
  EXPECT_DOUBLE_EQ(diff_gpu.max_abs_diff, diff_cpu.max_abs_diff);
  EXPECT_DOUBLE_EQ(diff_gpu.max_abs_ref, diff_cpu.max_abs_ref);
}

}  // namespace
}  // namespace dcs::test
