// The ways dcs computes a potential (--method), in one table: each method's name, what it can
// compute and whether its error is measured, so that adding one is a value and a row here (and
// a backend wrapper in pipeline/src/devices.cpp), not a string compared in many files (as
// OpenMM's NonbondedForce::NonbondedMethod).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "dcs/physics.hpp"

namespace dcs {

enum class Method {
  kExact,  ///< direct summation, the reference
  kMsm,    ///< multilevel summation (dcs/msm.hpp) to a relative RMS error target
  kEwald,  ///< the periodic potential of the cell (dcs/periodic/ewald_backend.hpp), --periodic
};

struct MethodTraits {
  Method method;
  std::string_view name;     ///< --method value and the file's /method name
  std::string_view summary;  ///< for --help
  /// Its error against direct summation is measured on a sample in every map run and stored.
  bool measures_error;
  /// Values at listed points, mesh vertices and atoms (--points, --at-atoms).
  bool computes_points;
  /// The pair models it implements (dcs::PairKind), as a mask of 1 << kind.
  unsigned models;
  bool supports(PairKind kind) const noexcept {
    return (models >> static_cast<unsigned>(kind)) & 1u;
  }
};

/// Every method, in --help order.
std::span<const MethodTraits> method_table() noexcept;
const MethodTraits& traits(Method method) noexcept;
std::string_view to_string(Method method) noexcept;
/// The method named `text` (UsageError listing the names otherwise).
Method parse_method(std::string_view text);
/// "exact, msm, ewald", for messages.
std::string method_names();

}  // namespace dcs
