// The CPU benchmark's tables (dcs::bench): their shape and that every yardstick is filled in,
// never a timing.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/bench.hpp"
#include "dcs/error.hpp"
#include "fast_kernels.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

TEST(CpuBench, PortLimitAndBackendTablesForTinySizes) {
  BenchOptions options;
  options.grid_sizes = {8};
  options.atom_counts = {20};
  options.repetitions = 1;
  options.peers = false;
  const std::vector<BenchTable> tables = benchmark_cpu_backends(options);
  ASSERT_EQ(tables.size(), 2u);
  const BenchTable& ports = tables[0];
  EXPECT_EQ(ports.name, "cpu_port_limit");
  ASSERT_EQ(ports.rows.size(), 2u);  // AVX-512 and AVX2, measured or "not supported"
  for (const auto& row : ports.rows) {
    ASSERT_EQ(row.size(), ports.columns.size());
    const bool supported = row[0] == "AVX-512" ? cpu_fast::isa_supported(cpu_fast::Isa::Avx512)
                                               : cpu_fast::isa_supported(cpu_fast::Isa::Avx2);
    if (supported) EXPECT_NE(row.back().find("e+"), std::string::npos) << row.back();
    else EXPECT_EQ(row.back(), "not supported by this CPU");
  }
  const BenchTable& table = tables[1];
  EXPECT_NE(table.title.find("PyMOL"), std::string::npos);
  EXPECT_GE(table.rows.size(), 3u);  // simd (all threads and 1), per-ISA kernels, reference
  bool reference = false;
  for (const auto& row : table.rows) {
    ASSERT_EQ(row.size(), table.columns.size());
    if (row[0] == "cpu-reference") reference = true;
    if (row[1] == "simd-avx512" || row[1] == "simd-avx2") {
      EXPECT_NE(row[9].find('%'), std::string::npos) << "no % of the port limit: " << row[9];
      EXPECT_NE(row[10].find('%'), std::string::npos) << "no best-repetition share: " << row[10];
      // One thread: the share of the mix measured around each repetition.
      EXPECT_NE(row[11].find('%'), std::string::npos) << "no interleaved share: " << row[11];
    }
  }
  EXPECT_TRUE(reference);
  options.repetitions = 0;
  EXPECT_THROW(benchmark_cpu_backends(options), UsageError);
  options.repetitions = 1;
  options.kernels = {"reference"};
  EXPECT_EQ(benchmark_cpu_backends(options).back().rows.size(), 1u);
}

TEST(CpuBench, ModelTablesGiveEveryModelOnGridAndPointsAgainstItsOwnLimit) {
  BenchOptions options;
  options.grid_sizes = {8};
  options.atom_counts = {20};
  options.repetitions = 1;
  options.threads = 1;
  options.peers = false;
  options.kernels = {"simd-avx512", "simd-avx2"};
  options.models = {"coulomb", "screened", "distance"};
  const std::vector<BenchTable> tables = benchmark_cpu_backends(options);
  ASSERT_EQ(tables.size(), 4u);  // the Coulomb tables as without --models, then the models'
  EXPECT_EQ(tables[0].name, "cpu_port_limit");
  EXPECT_EQ(tables[1].name, "cpu_backends");
  const BenchTable& limits = tables[2];
  EXPECT_EQ(limits.name, "cpu_model_port_limit");
  ASSERT_EQ(limits.rows.size(), 6u);  // AVX-512 and AVX2, each model
  const BenchTable& models = tables[3];
  EXPECT_EQ(models.name, "cpu_models");
  std::size_t isas = 0;
  for (const cpu_fast::Isa isa : {cpu_fast::Isa::Avx512, cpu_fast::Isa::Avx2})
    isas += cpu_fast::isa_supported(isa) ? 1 : 0;
  ASSERT_EQ(models.rows.size(), isas * 3 * 2);  // each ISA and model: grid and points, 1 thread
  for (const auto& row : models.rows) {
    ASSERT_EQ(row.size(), models.columns.size());
    EXPECT_TRUE(row[1] == "grid" || row[1] == "points") << row[1];
    for (int column : {9, 10, 11, 12})  // % of the limit, best rep, own mix, interleaved
      EXPECT_NE(row[static_cast<std::size_t>(column)].find('%'), std::string::npos)
          << models.columns[static_cast<std::size_t>(column)] << ": " << row[column];
  }
  options.models = {"yukawa"};
  EXPECT_THROW(benchmark_cpu_backends(options), UsageError);
}

TEST(CpuBench, MeasuresPymolInTheSameRunWhereItIsInstalled) {
  BenchOptions options;
  options.grid_sizes = {8};
  options.atom_counts = {30};
  options.repetitions = 1;
  options.kernels = {"reference"};
  const BenchTable table = benchmark_cpu_backends(options).back();
  std::string notes;
  for (const std::string& note : table.notes) notes += note + "\n";
  if (table.title.find("not available") != std::string::npos)
    GTEST_SKIP() << "PyMOL not installed here: " << notes;
  EXPECT_NE(table.title.find("evals/s per core"), std::string::npos) << table.title;
  EXPECT_NE(notes.find("map_new coulomb"), std::string::npos) << notes;
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_NE(table.rows[0].back(), "-");  // the ratio to PyMOL
}

}  // namespace
}  // namespace dcs::test
