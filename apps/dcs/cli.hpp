// Command-line front end of dcs: CLI11 options mapped onto dcs::RunConfig, and the subcommand
// table. Nothing here computes; it parses, configures logging and calls the libraries.
#pragma once

#include <string>
#include <vector>

namespace dcs {
struct RunConfig;
}

namespace dcs::app {

/// Runs the `dcs` command line; returns the process exit code (see dcs::ExitCode).
/// With `parse_only` (the fuzz targets in fuzz/), stops once the options are parsed and checked,
/// before any subcommand, signal handler or file read: help and parse errors are formatted but
/// not printed, the RunConfig of a map run goes to *parse_only, and the status is 0 or 2.
int main_entry(int argc, char** argv, RunConfig* parse_only = nullptr);

/// The command line as one shell-quoted string (stored as provenance).
std::string quoted_command_line(int argc, char** argv);

}  // namespace dcs::app
