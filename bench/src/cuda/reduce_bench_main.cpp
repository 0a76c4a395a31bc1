// dcs_reduce_bench: the reduction benchmark and the seed measurements without the `dcs` app.
//   dcs_reduce_bench --bench [--edges 256,512] [--reps 20] [--variants a,b] [--out FILE.md]
//   dcs_reduce_bench --ladder [--reps 20] [--out FILE.md]
//   dcs_reduce_bench --textbook A,B --n N1,N2  one launch of each book's kernel at each size, in
//                                              that order (scripts/gpu/seed_claims.sh profiles it)
//   dcs_reduce_bench --stats A,B --n N1,N2     one statistics reduction each (for ncu)
// Prints Markdown; exit status 0 on success, 1 on a dcs error (message on stderr), 2 on usage.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dcs/bench.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/cuda_bench.hpp"
#include "dcs/error.hpp"
#include "reduce_bench.hpp"

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ','))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "dcs_reduce_bench: %s\nusage: dcs_reduce_bench --bench [--edges E1,E2] [--reps R] "
               "[--variants A,B] [--out FILE]\n       dcs_reduce_bench --ladder [--reps R] [--out "
               "FILE]\n       dcs_reduce_bench --textbook A,B --n N1,N2 | --stats A,B --n N1,N2\n",
               why.c_str());
  std::exit(2);
}

/// A non-negative integer option value; anything else is a usage error naming the option.
template <class T>
T parse_number(const std::string& option, const std::string& text) {
  T value{};
  const char* const end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc{} || stop != end || value < T{0})
    usage(option + ": '" + text + "' is not a non-negative integer");
  return value;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string mode, out_path;
  std::vector<std::string> names;
  std::vector<std::size_t> sizes;
  dcs::BenchOptions options;
  options.repetitions = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--bench" || arg == "--ladder") mode = arg.substr(2);
    else if (arg == "--textbook" || arg == "--stats") {
      mode = arg.substr(2);
      names = split(value());
    } else if (arg == "--n")
      for (const auto& v : split(value())) sizes.push_back(parse_number<std::size_t>(arg, v));
    else if (arg == "--reps") options.repetitions = parse_number<int>(arg, value());
    else if (arg == "--edges")
      for (const auto& e : split(value()))
        options.grid_sizes.push_back(parse_number<std::int64_t>(arg, e));
    else if (arg == "--variants") options.kernels = split(value());
    else if (arg == "--device") options.device = parse_number<int>(arg, value());
    else if (arg == "--out") out_path = value();
    else usage("unknown argument " + arg);
  }
  if (mode.empty()) usage("choose --bench, --ladder, --textbook or --stats");
  {
    std::string report;
    if (mode == "bench") {
      for (const auto& table : dcs::cuda::benchmark_reductions(options))
        report += dcs::to_markdown(table);
    } else if (mode == "ladder") {
      report =
          dcs::to_markdown(dcs::cuda::detail::seed003_ladder(options.device, options.repetitions));
    } else {
      if (names.empty() || sizes.empty()) usage("--" + mode + " needs names and --n sizes");
      for (const std::string& name : names)
        for (const std::size_t n : sizes) {
          const double value =
              mode == "textbook" ? dcs::cuda::detail::run_textbook_once(name, n, options.device)
                                 : dcs::cuda::detail::run_statistics_once(name, n, options.device);
          report += name + " n=" + std::to_string(n) + (mode == "textbook" ? " sum=" : " mean=") +
                    std::to_string(value) + "\n";
        }
    }
    std::fputs(report.c_str(), stdout);
    if (!out_path.empty()) {
      std::ofstream file(out_path);
      file << report;
      if (!file) throw dcs::IoError("cannot write " + out_path);
    }
  }
  return 0;
} catch (const std::exception& error) {
  std::fprintf(stderr, "dcs_reduce_bench: %s\n", error.what());
  return 1;
}
