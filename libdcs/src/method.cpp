// The method table (dcs/method.hpp).
#include "dcs/method.hpp"

#include <array>

#include "dcs/error.hpp"

namespace dcs {
namespace {

constexpr unsigned kAllModels = (1u << static_cast<unsigned>(PairKind::kCoulomb)) |
                                (1u << static_cast<unsigned>(PairKind::kScreened)) |
                                (1u << static_cast<unsigned>(PairKind::kInverseSquare));

constexpr std::array<MethodTraits, 3> kMethods{{
    {Method::kExact, "exact", "direct summation over every atom, the reference",
     /*measures_error=*/false, /*computes_points=*/true, kAllModels},
    {Method::kMsm, "msm",
     "multilevel summation, linear time, to the relative RMS error --msm-error (Coulomb only; "
     "maps only)",
     /*measures_error=*/true, /*computes_points=*/false,
     1u << static_cast<unsigned>(PairKind::kCoulomb)},
    {Method::kEwald, "ewald",
     "the periodic potential of the unit cell and all its images (Ewald: real space + smooth "
     "PME), to the relative RMS error --ewald-error; the same as --periodic (Coulomb only)",
     /*measures_error=*/true, /*computes_points=*/true,
     1u << static_cast<unsigned>(PairKind::kCoulomb)},
}};

}  // namespace

std::span<const MethodTraits> method_table() noexcept { return kMethods; }

const MethodTraits& traits(Method method) noexcept {
  for (const MethodTraits& t : kMethods)
    if (t.method == method) return t;
  return kMethods.front();  // unreachable: every enumerator has its row
}

std::string_view to_string(Method method) noexcept { return traits(method).name; }

std::string method_names() {
  std::string names;
  for (const MethodTraits& t : kMethods) names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}

Method parse_method(std::string_view text) {
  for (const MethodTraits& t : kMethods)
    if (t.name == text) return t.method;
  throw UsageError("--method must be one of " + method_names() + ", got " + std::string(text));
}

}  // namespace dcs
