// Ranks given different runs are refused before any collective step depends on the settings
// (ranks.hpp).
#include <mpi.h>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/rank_agreement.hpp"
#include "ranks.hpp"

namespace dcs::pipeline {
namespace {

/// One line per setting, "name\tvalue" (values with tabs or newlines would only make two
/// different runs compare equal less often, never more).
std::string fingerprint(const RunConfig& config, const Workers& workers) {
  std::vector<std::pair<std::string, std::string>> settings = shared_settings(config);
  PotentialBackend& lead = *workers.list.front();
  settings.emplace_back("backend", lead.name());
  settings.emplace_back("kernel", lead.kernel_name());
  settings.emplace_back("reduction", lead.reduction_name());
  std::string text;
  for (const auto& [name, value] : settings) text += name + '\t' + value + '\n';
  return text;
}

std::vector<std::pair<std::string, std::string>> split(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> lines;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = text.find('\n', begin);
    const std::string line = text.substr(begin, end - begin);
    const std::size_t tab = line.find('\t');
    lines.emplace_back(line.substr(0, tab), line.substr(tab + 1));
    begin = end == std::string::npos ? text.size() : end + 1;
  }
  return lines;
}

}  // namespace

void check_same_run_on_ranks(const RunConfig& config, const Workers& workers) {
  const std::vector<std::string> all = io::all_gather(MPI_COMM_WORLD, fingerprint(config, workers));
  const auto first = split(all.front());
  for (std::size_t rank = 1; rank < all.size(); ++rank) {
    if (all[rank] == all.front()) continue;
    const auto other = split(all[rank]);
    for (std::size_t k = 0; k < first.size() && k < other.size(); ++k)
      if (first[k] != other[k])
        throw UsageError(fmt::format(
            "the MPI ranks were not given the same run: rank {} has {} {}, rank 0 has {} {}; every "
            "rank must get the same options (each may choose its own --device, --threads, "
            "--cpu-workers and --memory-limit)",
            rank, other[k].first, other[k].second.empty() ? "(none)" : other[k].second,
            first[k].first, first[k].second.empty() ? "(none)" : first[k].second));
    throw UsageError(fmt::format(
        "the MPI ranks were not given the same run (rank {} differs from rank 0)", rank));
  }
}

}  // namespace dcs::pipeline
