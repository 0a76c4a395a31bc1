// `dcs kernels` and `dcs devices` (listing.hpp).
#include "listing.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dcs/cuda/cuda_backend.hpp"
#include "dcs/parallel.hpp"
#include "dcs/variants.hpp"

namespace dcs::app {
namespace {

// One line per variant, at most kListWidth columns (longer summaries wrap under themselves), one
// "(default)" per group (the variant used when --kernel/--reduction is not given), each name
// once per group (a variant offered by several backends lists them together).
constexpr std::size_t kListWidth = 100;

void print_wrapped(const std::string& head, const std::string& text) {
  const std::size_t room = kListWidth - head.size();
  std::string line = head;
  std::size_t used = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t next = text.find(' ', pos);
    if (next == std::string::npos) next = text.size();
    const std::string word = text.substr(pos, next - pos);
    pos = next + 1;
    if (used > 0 && used + 1 + word.size() > room) {
      fmt::print("{}\n", line);
      line = std::string(head.size(), ' ');
      used = 0;
    }
    line += (used > 0 ? " " : "") + word;
    used += (used > 0 ? 1 : 0) + word.size();
  }
  fmt::print("{}\n", line);
}

void print_variant_group(const std::string& title, const std::vector<VariantInfo>& variants,
                         const std::string& default_backend) {
  struct Row {
    VariantInfo info;
    std::vector<std::string> backends;
  };
  std::vector<Row> rows;
  for (const VariantInfo& v : variants) {
    auto same =
        std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.info.name == v.name; });
    if (same == rows.end()) {
      rows.push_back({v, {v.backend}});
      same = rows.end() - 1;
      same->info.is_default = false;
    } else if (std::find(same->backends.begin(), same->backends.end(), v.backend) ==
               same->backends.end()) {
      same->backends.push_back(v.backend);
    }
    // The group's default is the default of its main backend (cpu-fast for --device cpu).
    if (v.is_default && v.backend == default_backend) same->info.is_default = true;
  }
  fmt::print("{}\n", title);
  for (const Row& row : rows) {
    const std::string backends = row.backends.size() > 1 ? "any cpu" : row.backends.front();
    print_wrapped(fmt::format("  {:<17} {:<14}", row.info.name, backends),
                  (row.info.is_default ? "(default) " : "") + row.info.summary);
  }
}

}  // namespace

int list_kernels() {
  std::vector<VariantInfo> cpu_potential, cpu_reduction;
  for (const VariantInfo& v : cpu_variants())
    (v.kind == VariantKind::Potential ? cpu_potential : cpu_reduction).push_back(v);
  print_variant_group("Potential kernels (--kernel), CUDA:", cuda::cuda_kernel_variants(), "cuda");
  print_variant_group(
      "Potential kernels (--kernel), CPU (--device cpu; --kernel reference "
      "selects the float64 backend):",
      cpu_potential, "cpu-fast");
  print_variant_group("Reductions for statistics and validation (--reduction), CUDA:",
                      cuda::cuda_reduction_variants(), "cuda");
  print_variant_group("Reductions, CPU (the reference backend uses cpu-serial):", cpu_reduction,
                      "cpu-fast");
  return 0;
}

int list_devices() {
  const auto devices = cuda::cuda_devices();
  if (devices.empty()) fmt::print("cuda    none: {}\n", cuda::cuda_unavailable_reason());
  for (const cuda::DeviceInfo& d : devices)
    fmt::print(
        "cuda:{}  {}  sm_{}{}  {} SMs  {:.0f} MHz  {:.1f} GiB ({:.1f} GiB free)  L2 {} MiB\n",
        d.ordinal, d.name, d.compute_major, d.compute_minor, d.multiprocessors,
        d.clock_khz / 1000.0, static_cast<double>(d.memory_bytes) / (1 << 30),
        static_cast<double>(d.free_bytes) / (1 << 30), d.l2_bytes >> 20);
  fmt::print("cpu     {} hardware threads (fast backend: --device cpu)\n", resolve_threads(0));
  return 0;
}

}  // namespace dcs::app
