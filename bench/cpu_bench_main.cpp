// dcs_cpu_bench: runs dcs::benchmark_cpu_backends and prints its tables as Markdown.
//
//   dcs_cpu_bench [--grid N]... [--atoms N]... [--kernel NAME]... [--repetitions R] [--threads T]
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "dcs/bench.hpp"
#include "dcs/error.hpp"

namespace {

long long parse_integer(std::string_view option, const char* text) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < 0)
    throw dcs::UsageError(fmt::format("{} needs a non-negative integer, got '{}'", option, text));
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    dcs::BenchOptions options;
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        fmt::print("usage: dcs_cpu_bench [--grid N]... [--atoms N]... [--kernel NAME]... "
                   "[--repetitions R] [--threads T]\n");
        return 0;
      }
      if (i + 1 >= argc) throw dcs::UsageError(fmt::format("{} needs a value", arg));
      const char* value = argv[++i];
      if (arg == "--grid") options.grid_sizes.push_back(parse_integer(arg, value));
      else if (arg == "--atoms") options.atom_counts.push_back(static_cast<std::size_t>(parse_integer(arg, value)));
      else if (arg == "--kernel") options.kernels.emplace_back(value);
      else if (arg == "--repetitions") options.repetitions = static_cast<int>(parse_integer(arg, value));
      else if (arg == "--threads") options.threads = static_cast<unsigned>(parse_integer(arg, value));
      else throw dcs::UsageError(fmt::format("unknown option '{}' (see --help)", arg));
    }
    for (const auto& table : dcs::benchmark_cpu_backends(options)) fmt::print("{}", dcs::to_markdown(table));
    return 0;
  } catch (const dcs::Error& error) {
    std::fprintf(stderr, "dcs_cpu_bench: %s\n", error.what());
    return static_cast<int>(error.exit_code());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "dcs_cpu_bench: %s\n", error.what());
    return 1;
  }
}
