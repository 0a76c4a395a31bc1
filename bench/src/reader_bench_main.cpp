// dcs_reader_bench: the atom reader's speed, serial (ReadOptions::threads = 1) against
// parallel (all hardware threads, or those given), on a PQR file of N random atoms written in
// pdb2pqr's fixed columns (default 10^6 atoms, about 70 MB). Reads each way a few times from
// the page cache and prints the best MB/s; the file is written to the system temp dir and
// removed. Usage: dcs_reader_bench [atoms] [threads...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "dcs/io/pqr.hpp"
#include "dcs/log.hpp"
#include "dcs/parallel.hpp"

namespace {

void write_pqr(const std::string& path, long atoms) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) throw std::runtime_error("cannot write " + path);
  std::mt19937_64 random(42);
  std::uniform_real_distribution<double> position(-99.0, 99.0), charge(-1.0, 1.0);
  for (long i = 0; i < atoms; ++i)
    std::fprintf(file, "ATOM  %5ld  CA  ALA A%4ld    %8.3f%8.3f%8.3f %7.4f %6.4f\n",
                 (i + 1) % 100000, (i / 10) % 10000, position(random), position(random),
                 position(random), charge(random), 1.5 + 0.5 * charge(random));
  std::fclose(file);
}

double best_seconds(const std::string& path, unsigned threads, std::size_t& atoms) {
  double best = 1e30;
  for (int repeat = 0; repeat < 3; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    const dcs::System system = dcs::io::read_atoms(path, dcs::io::ReadOptions{.threads = threads});
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
    atoms = system.size();
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const long atoms = argc > 1 ? std::atol(argv[1]) : 1000000;
  std::vector<unsigned> threads;
  for (int i = 2; i < argc; ++i) threads.push_back(static_cast<unsigned>(std::atoi(argv[i])));
  if (threads.empty()) threads.push_back(0);
  dcs::log().set_level(spdlog::level::warn);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("dcs-reader-bench-" + std::to_string(::getpid()) + ".pqr"))
                               .string();
  write_pqr(path, atoms);
  const double megabytes = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  std::printf("%ld atoms, %.1f MB, %u hardware threads (%s)\n", atoms, megabytes,
              dcs::resolve_threads(0), dcs::cpu_model_name().c_str());
  std::size_t read = 0;
  const double serial = best_seconds(path, 1, read);
  std::printf("serial        %8.3f s  %8.1f MB/s  (%zu atoms)\n", serial, megabytes / serial, read);
  for (const unsigned t : threads) {
    const double parallel = best_seconds(path, t, read);
    std::printf("parallel %3u  %8.3f s  %8.1f MB/s  %.2fx  (%zu atoms)\n", dcs::resolve_threads(t),
                parallel, megabytes / parallel, serial / parallel, read);
  }
  std::filesystem::remove(path);
  return 0;
}
