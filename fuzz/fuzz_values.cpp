// libFuzzer target: the small text parsers behind options, called directly so that mutations
// stay on them: byte 0 picks one, the rest is its text.
//   0 parse_size (--memory-limit)   1 parse_unit (--units)   2 resolve_device (--device)
//   3 shard_inputs (--shard I/N)    4 default_output_path (an --atoms name)
// Expected: UsageError; and parse_size's result lies in [1, 1e18] bytes, a plain decimal
// integer reads as itself, and K/M/G/T scale by powers of 1024.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "dcs/physics.hpp"
#include "dcs/pipeline/devices.hpp"
#include "dcs/pipeline/inputs.hpp"
#include "dcs/pipeline/outputs.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "fuzz_support.hpp"

namespace {

using dcs::fuzz::require;
using dcs::fuzz::run_expecting;

bool all_digits(const std::string& text) {
  if (text.empty() || text.size() > 15) return false;  // exact in a double
  for (char c : text)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 5) {
    case 0: {
      std::size_t bytes = 0;
      if (run_expecting("parse_size", [&] { bytes = dcs::parse_size(text); }) ==
          dcs::fuzz::Outcome::kOk) {
        require(bytes >= 1 && static_cast<double>(bytes) <= 1e18,
                "parse_size('" + text + "') = " + std::to_string(bytes) + " outside [1, 1e18]");
        if (all_digits(text))
          require(bytes == std::stoull(text),
                  "parse_size('" + text + "') = " + std::to_string(bytes));
        if (all_digits(text) && text.size() <= 9) {
          std::size_t scaled = 0;
          if (run_expecting("parse_size", [&] { scaled = dcs::parse_size(text + "K"); }) ==
              dcs::fuzz::Outcome::kOk)
            require(scaled == bytes * 1024, "parse_size('" + text + "K') is not 1024 x");
        }
      }
      break;
    }
    case 1:
      run_expecting("parse_unit", [&] {
        const dcs::Unit unit = dcs::parse_unit(text);
        require(dcs::unit_name(unit) == text, "parse_unit: unit_name does not give the name back");
      });
      break;
    case 2:
      run_expecting("resolve_device", [&] {
        const dcs::DeviceChoice choice =
            dcs::resolve_device(dcs::parse_device(text), dcs::BackendOptions{});
        require(!choice.ordinals.empty(), "resolve_device: no device ordinals");
      });
      break;
    case 3:
      if (text != "slurm")
        run_expecting("shard_inputs", [&] {
          const auto mine = dcs::shard_inputs({"a.pqr", "b.pqr", "c.pqr"}, dcs::parse_shard(text));
          require(mine.size() <= 3, "shard_inputs: more inputs than given");
        });
      break;
    case 4:
      run_expecting("default_output_path", [&] {
        (void)dcs::default_output_path(text, "out", ".h5");
        (void)dcs::default_output_path(text, "", ".dx.gz");
      });
      break;
  }
  return 0;
}
