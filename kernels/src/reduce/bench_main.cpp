// dcs_reduce_bench: the reduction benchmark and the seed measurements without the `dcs` app.
//   dcs_reduce_bench --bench [--edges 256,512] [--reps 20] [--variants a,b] [--out FILE.md]
//   dcs_reduce_bench --ladder [--reps 20] [--out FILE.md]
//   dcs_reduce_bench --textbook NAME --n N     one launch of the book's kernel (for ncu)
//   dcs_reduce_bench --stats NAME --n N        one statistics reduction (for ncu)
// Prints Markdown; exit status 0 on success, 1 on a dcs error (message on stderr), 2 on usage.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dcs/bench.hpp"
#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/error.hpp"
#include "reduce/reduce_bench.hpp"

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ','))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string markdown(const dcs::BenchTable& table) {
  std::string out = "### " + table.title + "\n\n|";
  for (const auto& column : table.columns) out += " " + column + " |";
  out += "\n|";
  for (std::size_t c = 0; c < table.columns.size(); ++c) out += " --- |";
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + cell + " |";
    out += "\n";
  }
  for (const auto& note : table.notes) out += "\n" + note + "\n";
  return out + "\n";
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "dcs_reduce_bench: %s\nusage: dcs_reduce_bench --bench [--edges E1,E2] [--reps R] "
               "[--variants A,B] [--out FILE]\n       dcs_reduce_bench --ladder [--reps R] [--out "
               "FILE]\n       dcs_reduce_bench --textbook NAME --n N | --stats NAME --n N\n",
               why.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode, name, out_path;
  std::size_t n = 0;
  dcs::BenchOptions options;
  options.repetitions = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--bench" || arg == "--ladder") mode = arg.substr(2);
    else if (arg == "--textbook" || arg == "--stats") { mode = arg.substr(2); name = value(); }
    else if (arg == "--n") n = std::stoull(value());
    else if (arg == "--reps") options.repetitions = std::stoi(value());
    else if (arg == "--edges") for (const auto& e : split(value())) options.grid_sizes.push_back(std::stoll(e));
    else if (arg == "--variants") options.kernels = split(value());
    else if (arg == "--device") options.device = std::stoi(value());
    else if (arg == "--out") out_path = value();
    else usage("unknown argument " + arg);
  }
  if (mode.empty()) usage("choose --bench, --ladder, --textbook or --stats");
  try {
    std::string report;
    if (mode == "bench") {
      for (const auto& table : dcs::cuda::benchmark_reductions(options)) report += markdown(table);
    } else if (mode == "ladder") {
      report = markdown(dcs::cuda::detail::seed003_ladder(options.device, options.repetitions));
    } else if (mode == "textbook") {
      if (n == 0) usage("--textbook needs --n");
      report = name + " n=" + std::to_string(n) + " sum=" +
               std::to_string(dcs::cuda::detail::run_textbook_once(name, n, options.device)) + "\n";
    } else {
      if (n == 0) usage("--stats needs --n");
      report = name + " n=" + std::to_string(n) + " mean=" +
               std::to_string(dcs::cuda::detail::run_statistics_once(name, n, options.device)) + "\n";
    }
    std::fputs(report.c_str(), stdout);
    if (!out_path.empty()) {
      std::ofstream file(out_path);
      file << report;
      if (!file) throw dcs::IoError("cannot write " + out_path);
    }
  } catch (const dcs::Error& error) {
    std::fprintf(stderr, "dcs_reduce_bench: %s\n", error.what());
    return 1;
  }
  return 0;
}
