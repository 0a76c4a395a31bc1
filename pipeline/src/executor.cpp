// The executor (executor.hpp): picking it, the units it deals, and the checks every job makes
// through it before the participants share work.
#include "executor.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/pipeline/mpi.hpp"

#ifdef DCS_HAVE_MPI
#include "mpi/ranks.hpp"
#endif

namespace dcs::pipeline {
namespace {

/// One line per setting, "name\tvalue" (values with tabs or newlines would only make two
/// different runs compare equal less often, never more).
std::string fingerprint(const RunConfig& config, const Workers& workers) {
  std::vector<std::pair<std::string, std::string>> settings = shared_settings(config);
  MapSource& lead = *workers.list.front();
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

std::vector<std::size_t> Executor::round_robin(std::size_t units) const {
  std::vector<std::size_t> mine;
  for (auto u = static_cast<std::size_t>(rank()); u < units; u += static_cast<std::size_t>(size()))
    mine.push_back(u);
  return mine;
}

std::pair<std::int64_t, std::int64_t> Executor::planes(std::int64_t nz,
                                                       std::int64_t multiple) const {
  multiple = std::max<std::int64_t>(multiple, 1);
  const std::int64_t units = (nz + multiple - 1) / multiple;  // the last may be short
  const int participants = size();
  const auto bound = [&](int r) {
    return std::min(nz, units * r / std::max(participants, 1) * multiple);
  };
  return {bound(rank()), rank() + 1 == participants ? nz : bound(rank() + 1)};
}

std::unique_ptr<Dealer> LocalExecutor::deal(std::size_t units) {
  class InOrder final : public Dealer {
   public:
    explicit InOrder(std::size_t units) : units_(units) {}
    std::optional<std::size_t> next() override {
      if (stopped_ || next_ >= units_) return std::nullopt;
      return next_++;
    }
    void stop() override { stopped_ = true; }

   private:
    std::size_t units_, next_ = 0;
    bool stopped_ = false;
  };
  return std::make_unique<InOrder>(units);
}

std::unique_ptr<Executor> make_executor() {
#ifdef DCS_HAVE_MPI
  if (mpi_info().active) return make_rank_executor();
#endif
  return std::make_unique<LocalExecutor>();
}

Workers make_workers_with(Executor& executor, const RunConfig& config) {
  Workers workers;
  executor.together([&] { workers = make_workers(config.compute, config.method); });
  return workers;
}

void check_same_run(Executor& executor, const RunConfig& config, const Workers& workers) {
  if (executor.size() == 1) return;  // nothing to compare
  const std::vector<std::string> all = executor.gather(fingerprint(config, workers));
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
