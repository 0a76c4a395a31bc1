// dcs_cpu_kernel_probe: the fast CPU backend's row sweep at several block widths and its packed
// row tail, each timed alone on one thread, beside this CPU's port limit measured in the same
// process (kernel_probe.hpp, port_limit.hpp). A developer's tool: it says
// whether a CPU's shortfall is in the sweep's block width, in the tail, or elsewhere.
//   dcs_cpu_kernel_probe [--nx N ...] [--atoms N] [--seconds S]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fast_kernels.hpp"
#include "kernel_probe.hpp"
#include "port_limit.hpp"

namespace {

using dcs::bench::ProbeAtoms;

ProbeAtoms make_atoms(std::size_t n, double extent) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> position(0.0, extent);
  std::uniform_real_distribution<double> charge(-0.8, 0.8);
  ProbeAtoms a;
  const double y = extent / 2, z = extent / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = position(rng), ay = position(rng), az = position(rng);
    const double ix = std::nearbyint(x), iy = std::nearbyint(ay), iz = std::nearbyint(az);
    a.ia.push_back(static_cast<float>(ix));
    a.neg_fx.push_back(static_cast<float>(ix - x));
    a.iy.push_back(static_cast<float>(iy));
    a.neg_fy.push_back(static_cast<float>(iy - ay));
    a.iz.push_back(static_cast<float>(iz));
    a.neg_fz.push_back(static_cast<float>(iz - az));
    a.q.push_back(static_cast<float>(0.5 * 332.06371 * charge(rng)));
    a.yz2.push_back(static_cast<float>((y - ay) * (y - ay) + (z - az) * (z - az)));
    if (!(a.yz2.back() >= dcs::bench::kProbeMinR2)) a.near.push_back(static_cast<std::uint32_t>(i));
  }
  return a;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "dcs_cpu_kernel_probe: %s\nusage: dcs_cpu_kernel_probe [--nx N ...] "
               "[--atoms N] [--seconds S]\n",
               why);
  std::exit(2);
}

long parse_positive(const char* text, const char* what) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value <= 0) usage(what);
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::int64_t> lengths;
  std::size_t atoms = 4000;
  double seconds = 0.1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--nx") {
      if (i + 1 >= argc) usage("--nx needs a value");
      while (i + 1 < argc && argv[i + 1][0] != '-')
        lengths.push_back(parse_positive(argv[++i], "--nx: a positive integer"));
    } else if (arg == "--atoms" && i + 1 < argc) {
      atoms = static_cast<std::size_t>(parse_positive(argv[++i], "--atoms: a positive integer"));
    } else if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::strtod(argv[++i], nullptr);
      if (!(seconds > 0.0 && seconds < 100.0)) usage("--seconds: between 0 and 100");
    } else {
      usage(("unknown argument " + std::string(arg)).c_str());
    }
  }
  if (lengths.empty()) lengths = {96, 128, 129, 136};
  namespace cf = dcs::cpu_fast;
  std::printf(
      "| instruction set | probe | row length | pairs/s (best) | %% of mix limit | %% of mix, "
      "interleaved (median) | ns per atom-vector |\n| --- | --- | --- | --- | --- | --- | --- |\n");
  for (cf::Isa isa : {cf::Isa::Avx512, cf::Isa::Avx2}) {
    if (!cf::isa_supported(isa)) continue;
    const dcs::bench::PortRates rates = dcs::bench::port_limit_probe(isa).port_rates(0.05);
    for (std::int64_t nx : lengths) {
      const ProbeAtoms staged = make_atoms(atoms, static_cast<double>(nx));
      const bool tail = nx == lengths.front();
      const auto results = isa == cf::Isa::Avx512
                               ? dcs::bench::probe_kernels_avx512(staged, nx, seconds, tail)
                               : dcs::bench::probe_kernels_avx2(staged, nx, seconds, tail);
      for (const auto& r : results) {
        std::printf("| %s | %s | %s | %.3e | %.1f%% | %.1f%% | %.3f |\n",
                    std::string(cf::isa_name(isa)).c_str(), r.what.c_str(),
                    r.nx ? std::to_string(r.nx).c_str() : "-", r.pairs,
                    100.0 * r.pairs / rates.mix_pairs, 100.0 * r.share_of_mix,
                    r.ns_per_atom_vector);
      }
    }
    std::printf("| %s | per-pair mix on registers (port limit) | - | %.3e | 100%% | - | %.3f |\n",
                std::string(cf::isa_name(isa)).c_str(), rates.mix_pairs,
                1e9 * rates.lanes / rates.mix_pairs);
  }
  std::printf("\n%zu atoms, one thread, best of 5 runs of %.2f s thread CPU time each.\n", atoms,
              seconds);
  return 0;
}
