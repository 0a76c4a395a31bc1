// What the CPU and CUDA MSM tests (tests/unit/msm_test.cpp, tests/cuda/msm/msm_cuda_test.cpp)
// both measure against: MSM's error targets, the relative RMS they are stated in, dcs's default
// grid, and real molecules with their float64 reference maps, computed once per test program.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "test_systems.hpp"

namespace dcs::test {

/// The error targets of MSM's parameter table (dcs::msm_parameters).
inline constexpr double kMsmTargets[] = {1e-2, 1e-3, 1e-4, 1e-5};

/// rms(V - V_ref) / rms(V_ref) over the points: the error MSM's targets are stated in.
template <class T>
double relative_rms(const std::vector<float>& computed, const std::vector<T>& reference) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t p = 0; p < computed.size(); ++p) {
    const double d = static_cast<double>(computed[p]) - static_cast<double>(reference[p]);
    diff += d * d;
    norm += static_cast<double>(reference[p]) * static_cast<double>(reference[p]);
  }
  return std::sqrt(diff / norm);
}

/// The grid dcs places by default for --grid n: the atoms' box padded by 10 Å.
inline GridSpec default_grid(const System& system, std::int64_t n) {
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{n, n, n};
  return make_grid(system, request);
}

/// A molecule of the accuracy tests and the --grid n it is mapped on.
struct MsmMoleculeCase {
  std::string name;
  std::string path;  ///< absolute, or relative to apbs_data_dir() when `apbs`
  bool apbs = false;
  std::int64_t grid = 0;
};

inline void PrintTo(const MsmMoleculeCase& molecule, std::ostream* os) { *os << molecule.name; }

/// The molecule, its default grid and the float64 reference on it.
struct MsmLoadedCase {
  System system;
  GridSpec grid;
  std::vector<double> reference;
};

/// The molecule's case, made on first use and kept for the rest of the run; nullptr when its
/// file is not installed (apbs-data), so that the caller skips.
inline const MsmLoadedCase* load_msm_case(const MsmMoleculeCase& molecule) {
  static std::map<std::string, MsmLoadedCase> cache;
  if (auto found = cache.find(molecule.name); found != cache.end()) return &found->second;
  const std::string path = molecule.apbs ? apbs_data_dir() + "/" + molecule.path : molecule.path;
  std::FILE* probe = std::fopen(path.c_str(), "r");
  if (probe == nullptr) return nullptr;
  std::fclose(probe);
  MsmLoadedCase c;
  c.system = read_pqr_fixture(path);
  c.grid = default_grid(c.system, molecule.grid);
  c.reference = reference_grid(c.system, c.grid, Physics{});
  return &cache.emplace(molecule.name, std::move(c)).first->second;
}

}  // namespace dcs::test
