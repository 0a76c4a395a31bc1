// The variant table and the CPU variant list (`dcs kernels`), and the shared atom chunking and
// packing.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/atoms.hpp"
#include "dcs/backend.hpp"
#include "dcs/error.hpp"
#include "dcs/variants.hpp"
#include "test_systems.hpp"

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
      const std::string key =
          v.backend + (v.kind == VariantKind::Potential ? "/potential" : "/reduction");
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

TEST(VariantTable, OneDefaultPerBackendAndKindAndNamesUniqueWithinEach) {
  for (BackendKind backend : {BackendKind::CpuReference, BackendKind::CpuFast, BackendKind::Cuda})
    for (VariantKind kind : {VariantKind::Potential, VariantKind::Reduction}) {
      SCOPED_TRACE(std::string(backend_name(backend)));
      std::set<std::string> names;
      int defaults = 0;
      for (const Variant& row : kVariantTable) {
        if (row.backend != backend || row.kind != kind) continue;
        EXPECT_TRUE(names.insert(std::string(row.name)).second) << "twice: " << row.name;
        EXPECT_FALSE(row.summary.empty()) << row.name;
        EXPECT_EQ(variant_index(backend, kind, row.name), names.size() - 1);
        defaults += row.is_default;
      }
      EXPECT_EQ(names.size(), variant_count(backend, kind));
      EXPECT_GE(names.size(), 1u);
      EXPECT_EQ(defaults, 1);
      EXPECT_EQ(variant_index(backend, kind, "no-such-variant"), names.size());
    }
}

TEST(VariantTable, FindVariantGivesTheDefaultOrNamesTheValidOnes) {
  EXPECT_EQ(find_variant(BackendKind::CpuFast, VariantKind::Potential, "").name, "simd");
  EXPECT_EQ(find_variant(BackendKind::Cuda, VariantKind::Potential, "").name, "production");
  EXPECT_EQ(find_variant(BackendKind::Cuda, VariantKind::Reduction, "").name, "warp-shuffle");
  EXPECT_EQ(find_variant(BackendKind::CpuReference, VariantKind::Reduction, "").name, "cpu-serial");
  EXPECT_EQ(find_variant(BackendKind::Cuda, VariantKind::Potential, "coalesced").summary,
            kVariantTable[variant_index(BackendKind::Cuda, VariantKind::Potential, "coalesced") +
                          variant_count(BackendKind::CpuReference, VariantKind::Potential) +
                          variant_count(BackendKind::CpuReference, VariantKind::Reduction) +
                          variant_count(BackendKind::CpuFast, VariantKind::Potential) +
                          variant_count(BackendKind::CpuFast, VariantKind::Reduction)]
                .summary);
  try {
    find_variant(BackendKind::Cuda, VariantKind::Reduction, "fastest");
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("'fastest'"), std::string::npos) << message;
    EXPECT_NE(message.find("cuda"), std::string::npos) << message;
    for (const VariantInfo& info : variant_infos(BackendKind::Cuda, VariantKind::Reduction))
      EXPECT_NE(message.find(info.name), std::string::npos) << message;
  }
  // A name of another backend or kind is not this one's.
  EXPECT_THROW(find_variant(BackendKind::CpuFast, VariantKind::Potential, "production"),
               UsageError);
  EXPECT_THROW(find_variant(BackendKind::Cuda, VariantKind::Potential, "warp-shuffle"), UsageError);
}

TEST(AtomChunks, SplitIntoConsecutiveChunksOfAtMost4000) {
  EXPECT_TRUE(atom_chunks(0).empty());
  for (std::size_t n : {std::size_t{1}, std::size_t{3999}, std::size_t{4000}, std::size_t{4001},
                        std::size_t{9000}}) {
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

}  // namespace
}  // namespace dcs::test
