// The CPU variant list (`dcs kernels`), the shared atom chunking and packing, and the CPU
// benchmark's table shape (a functional check, never a timing).
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/atoms.hpp"
#include "dcs/backend.hpp"
#include "dcs/bench.hpp"
#include "dcs/error.hpp"
#include "unit_support.hpp"

namespace dcs::test {
namespace {

TEST(CpuVariants, EveryListedPotentialVariantIsAcceptedByItsBackend) {
  const std::vector<VariantInfo> variants = cpu_variants();
  std::set<std::string> defaults;
  for (const VariantInfo& v : variants) {
    SCOPED_TRACE(v.backend + "/" + v.name);
    EXPECT_FALSE(v.summary.empty());
    EXPECT_TRUE(v.backend == "cpu-fast" || v.backend == "cpu-reference");
    if (v.is_default) {
      const std::string key = v.backend + (v.kind == VariantKind::Potential ? "/potential" : "/reduction");
      EXPECT_TRUE(defaults.insert(key).second) << "two defaults for " << key;
    }
    BackendOptions options;
    const bool potential = v.kind == VariantKind::Potential;
    (potential ? options.kernel : options.reduction) = v.name;
    if (v.backend == "cpu-reference") {
      const auto backend = make_cpu_reference_backend(options);
      EXPECT_EQ(potential ? backend->kernel_name() : backend->reduction_name(), v.name);
      continue;
    }
    try {
      const auto backend = make_cpu_fast_backend(options);
      EXPECT_EQ(potential ? backend->kernel_name() : backend->reduction_name(), v.name);
    } catch (const UsageError& error) {
      // Only ISA-specific kernels may be refused, and the list says so.
      EXPECT_NE(v.summary.find("not supported"), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(defaults.size(), 4u);  // a potential and a reduction default per backend
  auto has = [&](const std::string& backend, const std::string& name) {
    for (const VariantInfo& v : variants)
      if (v.backend == backend && v.name == name) return true;
    return false;
  };
  EXPECT_TRUE(has("cpu-reference", "reference"));
  EXPECT_TRUE(has("cpu-fast", "simd"));
  EXPECT_TRUE(has("cpu-fast", "cpu-serial"));
  EXPECT_TRUE(has("cpu-reference", "cpu-serial"));
}

TEST(AtomChunks, SplitIntoConsecutiveChunksOfAtMost4000) {
  EXPECT_TRUE(atom_chunks(0).empty());
  for (std::size_t n : {std::size_t{1}, std::size_t{3999}, std::size_t{4000}, std::size_t{4001}, std::size_t{9000}}) {
    const std::vector<AtomChunk> chunks = atom_chunks(n);
    EXPECT_EQ(chunks.size(), (n + kAtomsPerChunk - 1) / kAtomsPerChunk) << n;
    std::size_t next = 0;
    for (const AtomChunk& chunk : chunks) {
      EXPECT_EQ(chunk.begin, next);
      EXPECT_GE(chunk.count, 1u);
      EXPECT_LE(chunk.count, kAtomsPerChunk);
      next += chunk.count;
    }
    EXPECT_EQ(next, n);
  }
  EXPECT_EQ(atom_chunks(10, 3).size(), 4u);
  EXPECT_EQ(atom_chunks(10, 3).back().count, 1u);
}

TEST(PackGridAtoms, NearestPlaneResidualAndFactorScaledCharges) {
  const System system = make_system({make_atom(10.5, -2.0, 3.25, 0.5), make_atom(0, 0, 0, -1.0)});
  const GridSpec grid = make_spec({2, 2, 2}, 1.0, {10.0, -4.0, 3.0});
  const std::vector<GridAtom> packed = pack_grid_atoms(system, grid, 2.0);
  ASSERT_EQ(packed.size(), 2u);
  // x = 10.5 is 0.5 planes from the origin: nearbyint rounds to even, plane 0, residual +0.5.
  EXPECT_EQ(packed[0].ix, 0.0f);
  EXPECT_EQ(packed[0].rx, 0.5f);
  EXPECT_EQ(packed[0].iy, 2.0f);
  EXPECT_EQ(packed[0].ry, 0.0f);
  EXPECT_EQ(packed[0].iz, 0.0f);
  EXPECT_EQ(packed[0].rz, 0.25f);
  EXPECT_EQ(packed[0].q, 1.0f);
  EXPECT_EQ(packed[1].ix, -10.0f);
  EXPECT_EQ(packed[1].rx, 0.0f);
  EXPECT_EQ(packed[1].q, -2.0f);
  EXPECT_EQ(packed[1].unused, 0.0f);
}

TEST(PackGridAtoms, ResidualKeepsDigitsFarFromTheOrigin) {
  // 1e-4 Å off a plane 1000 Å from the origin: a float of the whole offset would keep ~6e-5 Å.
  const System system = make_system({make_atom(1000.0001, 0, 0, 1.0)});
  const GridSpec grid = make_spec({2, 2, 2}, 0.5, {0.0, 0.0, 0.0});
  const GridAtom atom = pack_grid_atoms(system, grid, 1.0).front();
  EXPECT_EQ(atom.ix, 2000.0f);
  EXPECT_NEAR(atom.rx, 1e-4, 1e-10);
}

TEST(CpuBench, ProducesAFullTableForTinySizes) {
  BenchOptions options;
  options.grid_sizes = {8};
  options.atom_counts = {20};
  options.repetitions = 1;
  const std::vector<BenchTable> tables = benchmark_cpu_backends(options);
  ASSERT_EQ(tables.size(), 1u);
  const BenchTable& table = tables.front();
  EXPECT_NE(table.title.find("PyMOL"), std::string::npos);
  EXPECT_GE(table.rows.size(), 3u);  // simd (all threads and 1), per-ISA kernels, reference
  bool reference = false;
  for (const auto& row : table.rows) {
    ASSERT_EQ(row.size(), table.columns.size());
    if (row[0] == "cpu-reference") reference = true;
  }
  EXPECT_TRUE(reference);
  options.repetitions = 0;
  EXPECT_THROW(benchmark_cpu_backends(options), UsageError);
  options.repetitions = 1;
  options.kernels = {"reference"};
  EXPECT_EQ(benchmark_cpu_backends(options).front().rows.size(), 1u);
}

}  // namespace
}  // namespace dcs::test
