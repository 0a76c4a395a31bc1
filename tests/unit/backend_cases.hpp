// The CPU backends and kernels every backend test runs on (OpenMM style: one test body,
// instantiated per backend). Each case states its tolerances.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/backend.hpp"
#include "dcs/error.hpp"

namespace dcs::test {

struct BackendCase {
  std::string label;     ///< test-name suffix
  BackendKind kind;
  std::string kernel;
  /// Max error of one value of a few-atom map against the exact value, relative to
  /// C * sum |q|/r (|V| for one atom). Float storage alone costs 2^-24 (6e-8); the float32
  /// kernels add the rounding of r^2 and of the Newton-refined reciprocal square root (a few
  /// ulp). Far-from-origin cases keep this bound only if distances are formed without large
  /// float coordinates (see fast_backend.cpp).
  double point_tolerance;
  /// Max error of a many-atom map relative to its max|V|: the product's specification, 1e-5
  /// for float32 paths (float sums over 4000-atom chunks measure 1e-6 to 5e-6 on small grids
  /// with thousands of atoms, where max|V| is small against sum |q|/r). The reference only
  /// rounds its float64 sums to float.
  double map_tolerance;
  bool may_be_unsupported;  ///< an ISA-specific kernel: skipped where the CPU lacks the ISA
};

inline std::vector<BackendCase> cpu_backend_cases() {
  return {
      {"reference", BackendKind::CpuReference, "reference", 1.2e-7, 1.2e-7, false},
      {"simd", BackendKind::CpuFast, "simd", 1e-6, 1e-5, false},
      {"simd_avx512", BackendKind::CpuFast, "simd-avx512", 1e-6, 1e-5, true},
      {"simd_avx2", BackendKind::CpuFast, "simd-avx2", 1e-6, 1e-5, true},
      {"simd_portable", BackendKind::CpuFast, "simd-portable", 1e-6, 1e-5, false},
  };
}

inline std::unique_ptr<PotentialBackend> create_backend(const BackendCase& c, unsigned threads = 0) {
  BackendOptions options;
  options.kernel = c.kernel;
  options.threads = threads;
  return c.kind == BackendKind::CpuReference ? make_cpu_reference_backend(options)
                                             : make_cpu_fast_backend(options);
}

/// Fixture of the tests written once against PotentialBackend&: creates the case's backend,
/// skipping (with the reason) an ISA-specific kernel this CPU cannot run.
class BackendCaseTest : public ::testing::TestWithParam<BackendCase> {
 protected:
  void SetUp() override {
    try {
      backend_ = create_backend(GetParam());
    } catch (const UsageError& error) {
      if (GetParam().may_be_unsupported) GTEST_SKIP() << error.what();
      throw;
    }
  }

  std::unique_ptr<PotentialBackend> backend_;
};

/// Prints a case by its label in test output (instead of its bytes).
inline void PrintTo(const BackendCase& c, std::ostream* os) { *os << c.label; }

inline std::string case_name(const ::testing::TestParamInfo<BackendCase>& info) {
  return info.param.label;
}

}  // namespace dcs::test
