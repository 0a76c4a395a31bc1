// Helpers shared by the map-writer tests: a small, fully described map (files: scratch_dir.hpp).
#pragma once

#include <sys/resource.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "../scratch_dir.hpp"

#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/map.hpp"
#include "dcs/physics.hpp"
#include "dcs/stats.hpp"
#include "dcs/types.hpp"

namespace dcs::test {

/// Lowers RLIMIT_FSIZE for the scope (SIGXFSZ ignored, so write() fails with EFBIG instead of
/// killing the process): an honest "disk full" that works even as root.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    saved_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, saved_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*saved_handler_)(int) = SIG_DFL;
};

/// Sets the environment variable `name` for the scope (`value` nullptr: unset), as it was after.
class EnvVariable {
 public:
  EnvVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old, had_ = true;
    if (value != nullptr) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~EnvVariable() {
    if (had_) ::setenv(name_.c_str(), saved_.c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  EnvVariable(const EnvVariable&) = delete;
  EnvVariable& operator=(const EnvVariable&) = delete;

 private:
  std::string name_, saved_;
  bool had_ = false;
};

/// `n` bytes that differ from their neighbours (a shifted or lost piece or page shows), from
/// `seed`.
inline std::string byte_pattern(std::size_t n, std::uint32_t seed = 12345) {
  std::string bytes(n, '\0');
  std::uint32_t x = seed;
  for (char& c : bytes) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return bytes;
}

/// The IoError `action` throws, as text; "(no IoError)" when it throws none.
inline std::string error_text(const std::function<void()>& action) {
  try {
    action();
  } catch (const IoError& error) {
    return error.what();
  }
  return "(no IoError)";
}

/// A map whose value encodes its indices, so that any transposition shows:
/// f(i, j, k) = 100 i + 10 j + k + 0.25, with the sign flipped on odd k.
inline float index_value(std::int64_t i, std::int64_t j, std::int64_t k) {
  const float magnitude = static_cast<float>(100 * i + 10 * j + k) + 0.25f;
  return (k % 2 == 0) ? magnitude : -magnitude;
}

inline std::vector<float> index_map(const GridSpec& grid) {
  std::vector<float> values(grid.points());
  for (std::int64_t k = 0; k < grid.nz(); ++k)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t i = 0; i < grid.nx(); ++i)
        values[grid.index(i, j, k)] = index_value(i, j, k);
  return values;
}

inline GridSpec asymmetric_grid(std::int64_t nx = 3, std::int64_t ny = 4, std::int64_t nz = 5) {
  GridSpec grid;
  grid.counts = {nx, ny, nz};
  grid.origin = {-12.5, 3.25, 101.875};
  grid.spacing = {0.5, 0.75, 1.25};
  return grid;
}

/// Metadata as a real run fills it, with statistics computed from `values`.
inline MapMetadata sample_metadata(const GridSpec& grid, const std::vector<float>& values) {
  MapMetadata meta;
  meta.grid = grid;
  meta.physics = Physics{};
  meta.coulomb_factor = coulomb_factor(meta.physics);
  meta.stats = finalize(cpu_statistics(values.data(), values.size()));
  meta.validation.performed = true;
  meta.validation.points = 60;
  meta.validation.all_points = true;
  meta.validation.max_abs_error = 1.5e-6;
  meta.validation.rms_error = 2.5e-7;
  meta.validation.max_abs_reference = 437.25;
  meta.validation.max_rel_error = 3.4e-9;
  meta.validation.tolerance = 1e-5;
  meta.validation.passed = true;
  Provenance& prov = meta.provenance;
  prov.version = "0.1.0 (git 0123456789ab)";
  prov.command_line = "dcs --atoms 'my mol.pqr' --grid 3 4 5 --dx out.dx";
  prov.input_path = "data/my mol.pqr";
  prov.input_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
  prov.backend = "cpu-reference";
  prov.kernel = "reference";
  prov.reduction = "cpu";
  prov.device = "CPU (test)";
  prov.hostname = "testhost";
  prov.created = "2025-01-02T03:04:05Z";
  prov.timings = {{"read", 0.125}, {"compute", 1.5}, {"write", 0.25}};
  return meta;
}

inline System sample_system() {
  System system;
  system.source_path = "data/my mol.pqr";
  system.source_format = "pqr";
  system.source_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
  Atom a;
  a.position = {1.0, -2.5, 3.25};
  a.charge = -0.5;
  a.radius = 1.7;
  a.serial = 1;
  a.name = "N";
  a.res_name = "ALA";
  a.chain = "A";
  a.res_seq = 7;
  Atom b = a;
  b.position = {-4.125, 0.0, 12.5};
  b.charge = 1.0;
  b.radius = 0.0;
  b.serial = 100001;
  b.name = "ZN";
  b.res_name = "ZN2+";  // 4-letter residue name
  b.chain = "";
  b.res_seq = 1001;
  b.hetatm = true;
  system.atoms = {a, b};
  return system;
}

/// A map on an asymmetric grid with its metadata and two atoms.
struct Sample {
  GridSpec grid;
  std::vector<float> values;
  MapMetadata meta;
  System system;
};

inline Sample sample(std::int64_t nx = 3, std::int64_t ny = 4, std::int64_t nz = 5) {
  Sample s;
  s.grid = asymmetric_grid(nx, ny, nz);
  s.values = index_map(s.grid);
  s.meta = sample_metadata(s.grid, s.values);
  s.system = sample_system();
  return s;
}

}  // namespace dcs::test
