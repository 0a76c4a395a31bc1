// Command-line front end of dcs: CLI11 options mapped onto dcs::RunConfig, and the subcommand
// table. Nothing here computes; it parses, configures logging and calls the libraries.
#pragma once

#include <string>
#include <vector>

namespace dcs::app {

/// Runs the `dcs` command line; returns the process exit code (see dcs::ExitCode).
int main_entry(int argc, char** argv);

/// The command line as one shell-quoted string (stored as provenance).
std::string quoted_command_line(int argc, char** argv);

}  // namespace dcs::app
