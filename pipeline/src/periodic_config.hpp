// The cell of an atom file for --periodic (periodic_config.cpp; parse_box() and
// check_periodic() are declared in dcs/pipeline/run_config.hpp).
#pragma once

#include <string>

#include "dcs/pipeline/run_config.hpp"
#include "dcs/types.hpp"

namespace dcs::pipeline {

/// Sets system.cell of the atom file `input`: --box when given, else with --periodic its
/// CRYST1 record (io::read_cryst1()), else the cell stays as read. With --periodic, refuses
/// (UsageError) a system without a usable cell (periodic::check_ewald_input()).
void apply_cell(const RunConfig& config, const std::string& input, System& system);

}  // namespace dcs::pipeline
