// Atom bounds (atom_checks.hpp).
#include "dcs/atom_checks.hpp"

#include <cmath>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/limits.hpp"

namespace dcs {

void check_atoms(const System& system, const std::string& source) {
  if (system.atoms.empty()) throw InputError(source, 0, "no atoms");
  for (std::size_t i = 0; i < system.atoms.size(); ++i) {
    const Atom& atom = system.atoms[i];
    const std::string which = "atom " + std::to_string(i + 1) + ": ";
    if (!std::isfinite(atom.charge) || std::fabs(atom.charge) > limits::kMaxCharge)
      throw InputError(source, 0,
                       which + "charge " + fmt::format("{}", atom.charge) +
                           " is not finite or beyond the limit of 1e6 e");
    for (double c : atom.position)
      if (!std::isfinite(c) || std::fabs(c) > limits::kMaxCoordinate)
        throw InputError(source, 0,
                         which + "coordinate " + fmt::format("{}", c) +
                             " is not finite or beyond the limit of 1e6 Å");
  }
}

}  // namespace dcs
