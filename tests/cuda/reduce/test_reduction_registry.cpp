// The reduction registry as every build sees it (plain C++, no GPU needed): the names that
// --reduction, `dcs kernels`, the tests and the benchmark share.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "dcs/error.hpp"
#include "reduce/reduction_registry.hpp"

namespace dcs::cuda::detail {
namespace {

TEST(ReductionRegistry, ListsTheSeedsFamilyOnceEach) {
  const auto variants = reduction_variants();
  ASSERT_EQ(variants.size(), kReductionCount);
  std::set<std::string> names;
  int defaults = 0;
  for (const VariantInfo& info : variants) {
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate " << info.name;
    EXPECT_FALSE(info.summary.empty()) << info.name;
    EXPECT_EQ(info.backend, "cuda");
    EXPECT_EQ(info.kind, VariantKind::Reduction);
    defaults += info.is_default ? 1 : 0;
  }
  EXPECT_EQ(defaults, 1);
  for (const char* seed_kernel :
       {"simple", "convergent", "shared", "segmented", "coarsened", "neighbored", "neighbored-less",
        "interleaved", "unroll2", "unroll4", "unroll8", "unroll8-warp", "unroll8-complete",
        "unroll8-template", "warp-shuffle"})
    EXPECT_EQ(names.count(seed_kernel), 1u) << seed_kernel;
}

TEST(ReductionRegistry, DefaultIsARegisteredName) {
  EXPECT_LT(reduction_index(default_reduction()), kReductionCount);
  EXPECT_NO_THROW(check_reduction_name(default_reduction()));
}

TEST(ReductionRegistry, UnknownNameListsTheValidOnes) {
  try {
    check_reduction_name("fastest");
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("fastest"), std::string::npos) << message;
    EXPECT_NE(message.find("warp-shuffle"), std::string::npos) << message;
    EXPECT_NE(message.find("unroll8-template"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace dcs::cuda::detail
