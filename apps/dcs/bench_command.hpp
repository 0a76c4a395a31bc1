// `dcs bench`: runs the benchmarks of the libraries and records them under bench/results/.
#pragma once

#include <string>
#include <vector>

#include "dcs/bench.hpp"

namespace dcs::app {

struct BenchCommand {
  bool cpu = false;
  bool potential = false;
  bool reductions = false;
  std::string molecule;  ///< real run for the end-to-end split (empty: skip)
  std::string results_dir = "bench/results";
  std::string command_line;
  BenchOptions options;
};

/// Runs the selected benchmarks, prints their tables and writes <results_dir>/<stem>.md with
/// device, date, commit and command. Returns an exit code.
int run_bench(const BenchCommand& command);

}  // namespace dcs::app
