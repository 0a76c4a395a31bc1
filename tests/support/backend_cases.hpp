// A backend under test, as the shared test bodies (backend_test_bodies.hpp) see it: how to
// make it, why it cannot run here, and the tolerances its arithmetic is held to. Each test
// binary lists its backends' cases from the variant table (dcs/variants.hpp): the CPU ones in
// tests/unit/backend_test.cpp, the CUDA ones in tests/cuda/potential/backend_test.cpp.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "dcs/backend.hpp"

namespace dcs::test {

struct BackendCase {
  std::string label;    ///< test-name suffix, e.g. "simd_avx2", "cuda_production"
  std::string backend;  ///< PotentialBackend::name(): "cpu-reference", "cpu-fast", "cuda"
  std::string kernel;   ///< the variant table's name
  /// Makes the backend with these options (kernel filled in by the fixture).
  std::function<std::unique_ptr<PotentialBackend>(BackendOptions)> create;
  /// Why this case cannot run on this machine (no GPU, an instruction set the CPU lacks);
  /// empty when it can. The fixture skips with this reason.
  std::function<std::string()> unavailable;
  /// Max error of one value of a few-atom map against the exact value, relative to
  /// C * sum |q|/r (|V| for one atom). Float storage alone costs 2^-24 (6e-8); float32 paths
  /// add the rounding of r^2 and of the reciprocal square root (a few ulp for a Newton-refined
  /// estimate or MUFU; up to 1.1e-6 for the GPU's FMA-pipe cubic, plus ~26 ulp of r^2 in the
  /// production kernel's plane expansion).
  double point_tolerance = 1e-6;
  /// Computes every physics model (dcs/physics.hpp); false for the CUDA textbook kernels and
  /// production-8, which refuse any model but Coulomb (the model tests check that they do).
  bool every_model = true;
  /// Computes compute_points() (the points tests run): false for the CUDA kernels other than
  /// the default, which share one points kernel (tested once, as "production").
  bool points = true;
  /// Max error of a many-atom map relative to its max|V|: the product's specification, 1e-5
  /// for float32 paths; the reference only rounds its float64 sums to float.
  double map_tolerance = 1e-5;
  /// Whether the same inputs give the same bits (false for kernels that add with atomics, whose
  /// order varies): maps that must be identical are then compared within map_tolerance.
  bool deterministic = true;
};

inline void PrintTo(const BackendCase& c, std::ostream* os) { *os << c.label; }

/// "simd-avx2" -> "simd_avx2" (gtest names take [A-Za-z0-9_]).
inline std::string test_label(std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

}  // namespace dcs::test
