// Everything a writer needs to describe a finished map besides its values.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/physics.hpp"
#include "dcs/stats.hpp"

namespace dcs {

struct Provenance {
  std::string program = "dcs";
  std::string version;        ///< program version, e.g. "0.1.0 (git abc1234)"
  std::string command_line;   ///< as typed, arguments shell-quoted
  std::string input_path;
  std::string input_sha256;
  std::string backend;        ///< "cuda", "cpu-fast", "cpu-reference"
  std::string kernel;         ///< potential variant
  std::string reduction;      ///< statistics variant
  std::string device;         ///< device description
  std::string hostname;
  std::string created;        ///< ISO 8601 UTC time the run started
  std::string settings;       ///< "name = value" lines of every setting that changes values
                              ///< (what --resume compares)
  std::vector<std::pair<std::string, double>> timings;  ///< stage name -> seconds
};

struct MapMetadata {
  GridSpec grid;
  Physics physics;
  double coulomb_factor = 0.0;  ///< in factor_unit(physics.unit)
  GridStats stats;
  Validation validation;
  Provenance provenance;
};

}  // namespace dcs
