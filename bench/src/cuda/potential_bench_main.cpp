// dcs_potential_bench: the potential benchmark on its own, for device runs without the dcs app
// (`dcs bench --potential` calls the same benchmark_potential_kernels()). Prints Markdown.
//   dcs_potential_bench [--grid N]... [--atoms N]... [--kernel NAME]... [--model M]... [--reps R]
//                       [--device D]
//   dcs_potential_bench --points N... [--atoms N]... [--model M]...   (the points kernel)
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "dcs/bench.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/cuda_bench.hpp"
#include "dcs/error.hpp"

namespace {

long long parse_number(const char* flag, const char* text) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < 0)
    throw dcs::UsageError(std::string(flag) + ": '" + text + "' is not a non-negative integer");
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    dcs::BenchOptions options;
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (i + 1 >= argc) throw dcs::UsageError(flag + " needs a value");
      const char* value = argv[++i];
      if (flag == "--grid") options.grid_sizes.push_back(parse_number("--grid", value));
      else if (flag == "--atoms")
        options.atom_counts.push_back(static_cast<std::size_t>(parse_number("--atoms", value)));
      else if (flag == "--points")
        options.point_counts.push_back(static_cast<std::size_t>(parse_number("--points", value)));
      else if (flag == "--kernel") options.kernels.emplace_back(value);
      else if (flag == "--model") options.models.emplace_back(value);
      else if (flag == "--reps")
        options.repetitions = static_cast<int>(parse_number("--reps", value));
      else if (flag == "--device")
        options.device = static_cast<int>(parse_number("--device", value));
      else throw dcs::UsageError("unknown option " + flag);
    }
    if (!dcs::cuda::cuda_available()) {
      std::fprintf(stderr, "dcs_potential_bench: %s\n",
                   dcs::cuda::cuda_unavailable_reason().c_str());
      return 1;
    }
    for (const dcs::BenchTable& table : dcs::cuda::benchmark_potential_kernels(options))
      std::fputs(dcs::to_markdown(table).c_str(), stdout);
    return 0;
  } catch (const dcs::Error& error) {
    std::fprintf(stderr, "dcs_potential_bench: %s\n", error.what());
    return static_cast<int>(error.exit_code());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "dcs_potential_bench: %s\n", error.what());
    return 1;
  }
}
