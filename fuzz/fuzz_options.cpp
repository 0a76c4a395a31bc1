// libFuzzer target: the dcs command line (apps/dcs/cli.cpp: CLI11 options mapped onto a
// RunConfig, the option checks of dcs/limits.hpp, --memory-limit's parse_size, --units) through
// main_entry(argc, argv, &config), which stops before running anything. The input is the
// argument list, one argument per line (argv[0] "dcs" is added); it is parsed as given and
// again after "--atoms m.pqr" (most checks only run for a map run, which needs --atoms).
// A parsed map run then goes through what run() does with the options before computing: the
// grid placed around a small molecule (make_grid), --device, --shard and the default output
// names. Expected: status 0, 2 (usage error) or 3 (an unreadable --atoms-from list) and
// UsageError; status 1 means an unexpected
// exception was caught in main_entry (a finding), as is anything escaping it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../apps/dcs/cli.hpp"
#include "dcs/pipeline/devices.hpp"
#include "dcs/pipeline/inputs.hpp"
#include "dcs/pipeline/outputs.hpp"
#include "dcs/run.hpp"
#include "fuzz_support.hpp"

namespace {

using dcs::fuzz::require;
using dcs::fuzz::run_expecting;

/// Two atoms 10 Å apart with charges of both signs.
const dcs::System& molecule() {
  static const dcs::System system = [] {
    dcs::System s;
    s.source_path = "m.pqr";
    s.source_format = "pqr";
    dcs::Atom a;
    a.position = {1.0, -2.0, 3.0};
    a.charge = 0.5;
    dcs::Atom b = a;
    b.position = {11.0, -2.0, 3.0};
    b.charge = -0.25;
    s.atoms = {a, b};
    return s;
  }();
  return system;
}

void parse(std::vector<std::string> args) {
  args.insert(args.begin(), "dcs");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  dcs::RunConfig config;
  int status = 0;
  run_expecting("main_entry", [&] {
    status = dcs::app::main_entry(static_cast<int>(args.size()), argv.data(), &config);
  });
  // 3: an --atoms-from list that cannot be read (the one file the command line reads itself).
  require(status == 0 || status == 2 || status == 3, "main_entry(parse_only) returned " +
                                                         std::to_string(status) +
                                                         " (1: it caught an unexpected exception)");
  if (status != 0 || config.input.files.empty()) return;  // a usage error, help, or a subcommand

  run_expecting("make_grid", [&] {
    dcs::fuzz::check_grid(dcs::make_grid(molecule(), config.grid), "make_grid");
  });
  run_expecting("check_potential_bound",
                [&] { dcs::check_potential_bound(molecule(), config.physics); });
  run_expecting("resolve_device",
                [&] { (void)dcs::resolve_device(config.compute.device, config.compute.backend); });
  if (config.input.shard && !config.input.shard->from_slurm)
    run_expecting("shard_inputs",
                  [&] { (void)dcs::shard_inputs(config.input.files, *config.input.shard); });
  run_expecting("default_output_path", [&] {
    for (const std::string& input : config.input.files)
      (void)dcs::default_output_path(input, config.output.dir, ".h5");
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args;
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) args.push_back(current);
  if (args.size() > 64) return 0;  // long argument lists add nothing but time
  parse(args);
  args.insert(args.begin(), {"--atoms", "m.pqr"});
  parse(args);
  return 0;
}
