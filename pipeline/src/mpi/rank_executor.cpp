// The rank executor (ranks.hpp): the executor.hpp contract over MPI_COMM_WORLD. One map shared
// by every rank: rank 0 decides the outputs and makes the partial file; every rank writes its
// slabs into it through parallel HDF5; rank 0 then finishes and commits the map alone. Points'
// pieces are gathered on rank 0; a batch's maps (batch.cpp) and dynamically assigned slabs are
// dealt by the Dispenser.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "../executor.hpp"
#include "../map_job.hpp"
#include "dcs/error.hpp"
#include "dcs/io/parallel_store.hpp"
#include "dcs/io/rank_agreement.hpp"
#include "dcs/log.hpp"
#include "dcs/pipeline/mpi.hpp"
#include "dcs/sysinfo.hpp"
#include "mpi_support.hpp"
#include "ranks.hpp"

namespace dcs::pipeline {
namespace {

/// The slabs of `step` planes not all of whose planes are done (identical on every rank).
std::vector<std::size_t> slabs_to_do(const GridSpec& grid, std::int64_t step,
                                     const std::vector<std::uint8_t>& done) {
  std::vector<std::size_t> todo;
  for (std::int64_t z = 0, s = 0; z < grid.nz(); z += step, ++s) {
    bool all = true;
    for (std::int64_t p = z; all && p < std::min(grid.nz(), z + step); ++p)
      all = done[static_cast<std::size_t>(p)] != 0;
    if (!all) todo.push_back(static_cast<std::size_t>(s));
  }
  return todo;
}

/// This rank's share of `todo` under static assignment: contiguous blocks, sizes differing by
/// at most one.
std::vector<std::size_t> static_block(const std::vector<std::size_t>& todo, int rank, int size) {
  const std::size_t n = todo.size(), ranks = static_cast<std::size_t>(size);
  const std::size_t r = static_cast<std::size_t>(rank);
  const std::size_t begin = r * (n / ranks) + std::min(r, n % ranks);
  const std::size_t end = begin + n / ranks + (r < n % ranks ? 1 : 0);
  return {todo.begin() + static_cast<std::ptrdiff_t>(begin),
          todo.begin() + static_cast<std::ptrdiff_t>(end)};
}

/// "rank 0: <a>; rank 1: <b>" of every rank's string (or the one string when all agree).
std::string per_rank(const std::vector<std::string>& values) {
  if (std::all_of(values.begin(), values.end(),
                  [&](const std::string& v) { return v == values.front(); }))
    return values.size() > 1 ? fmt::format("{} (each of {} ranks)", values.front(), values.size())
                             : values.front();
  std::string text;
  for (std::size_t r = 0; r < values.size(); ++r)
    text += fmt::format("{}rank {}: {}", r ? "; " : "", r, values[r]);
  return text;
}

class RankExecutor final : public Executor {
 public:
  RankExecutor() : mpi_(mpi_info()) {}

  int rank() const override { return mpi_.rank; }
  int size() const override { return mpi_.size; }
  bool on_ranks() const override { return true; }
  void together(const std::function<void()>& step) override { io::agree_on(world_, step); }
  std::vector<std::string> gather(const std::string& mine) override {
    return io::all_gather(world_, mine);
  }
  void broadcast(void* data, std::size_t bytes) override {
    MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, world_);
  }
  void collect(std::vector<float>& values, std::size_t piece) override;
  std::unique_ptr<Dealer> deal(std::size_t units) override {
    return std::make_unique<Dispenser>(world_, units);
  }
  std::optional<SharedReport> compute_shared(const RunConfig& config, MapJob& job, Workers& workers,
                                             ProgressSink* progress) override;

 private:
  EngineReport write_slabs(const RunConfig& config, MapJob& job, Workers& workers,
                           io::ParallelStore& store, ProgressSink* progress);
  SharedReport summarise(const EngineReport& report, const Workers& workers) const;

  const MpiInfo& mpi_;
  MPI_Comm world_ = MPI_COMM_WORLD;
};

/// Each rank sends its pieces packed in order; rank 0 puts every rank's back in place.
void RankExecutor::collect(std::vector<float>& values, std::size_t piece) {
  const std::size_t n = values.size();
  const auto ranks = static_cast<std::size_t>(size());
  auto pieces_of = [&](std::size_t r) {
    std::vector<std::size_t> list;
    for (std::size_t p = r; p * piece < n; p += ranks) list.push_back(p);
    return list;
  };
  auto count_of = [&](std::size_t r) {
    std::size_t count = 0;
    for (std::size_t p : pieces_of(r)) count += std::min(piece, n - p * piece);
    return count;
  };
  std::vector<float> packed;
  for (std::size_t p : pieces_of(static_cast<std::size_t>(rank())))
    packed.insert(packed.end(), values.begin() + static_cast<std::ptrdiff_t>(p * piece),
                  values.begin() + static_cast<std::ptrdiff_t>(std::min(n, (p + 1) * piece)));
  if (n > static_cast<std::size_t>(INT_MAX))
    throw UsageError("a points run over MPI ranks takes at most 2^31 - 1 points");
  std::vector<int> counts(ranks), offsets(ranks);
  std::vector<float> all;
  if (leads()) {
    int offset = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      counts[r] = static_cast<int>(count_of(r));
      offsets[r] = offset;
      offset += counts[r];
    }
    all.resize(n);
  }
  MPI_Gatherv(packed.data(), static_cast<int>(packed.size()), MPI_FLOAT, all.data(), counts.data(),
              offsets.data(), MPI_FLOAT, 0, world_);
  if (!leads()) return;
  std::size_t at = 0;
  for (std::size_t r = 0; r < ranks; ++r)
    for (std::size_t p : pieces_of(r)) {
      const std::size_t count = std::min(piece, n - p * piece);
      std::copy(all.begin() + static_cast<std::ptrdiff_t>(at),
                all.begin() + static_cast<std::ptrdiff_t>(at + count),
                values.begin() + static_cast<std::ptrdiff_t>(p * piece));
      at += count;
    }
}

/// This rank's slabs into the shared file, in collective rounds; rank 0 reports progress.
EngineReport RankExecutor::write_slabs(const RunConfig& config, MapJob& job, Workers& workers,
                                       io::ParallelStore& store, ProgressSink* progress) {
  const GridSpec& grid = job.in.grid;
  const std::vector<std::size_t> todo = slabs_to_do(grid, job.plan.step, store.plane_done());
  const auto slabs = static_cast<std::size_t>((grid.nz() + job.plan.step - 1) / job.plan.step);
  if (leads()) {
    log().info("{} ranks share the map: slabs of {} planes, {} assignment", mpi_.size,
               job.plan.step, to_string(config.compute.mpi_schedule));
    log().info("{} of {} slabs to compute{}", todo.size(), slabs,
               todo.size() < slabs ? " (the others are done in the partial file)" : "");
  }
  std::unique_ptr<Dealer> dealer;
  std::unique_ptr<SlabSource> source;
  if (config.compute.mpi_schedule == MpiSchedule::kDynamic) {
    dealer = deal(todo.size());
    source = std::make_unique<DealtSource>(*dealer, todo);
  } else {
    source = std::make_unique<ListSource>(static_block(todo, mpi_.rank, mpi_.size));
  }
  const double per_plane =
      static_cast<double>(grid.plane_points()) * static_cast<double>(job.in.system.size());
  if (leads() && progress != nullptr) {
    progress->begin(job.label, per_plane * static_cast<double>(grid.nz()));
    const auto done_before = static_cast<double>(
        std::count(store.plane_done().begin(), store.plane_done().end(), std::uint8_t{1}));
    store.on_progress([=](std::int64_t planes) {
      progress->update(per_plane * (done_before + static_cast<double>(planes)));
    });
  }
  struct EndProgress {
    ProgressSink* sink;
    ~EndProgress() {
      if (sink != nullptr) sink->end();
    }
  } end_progress{leads() ? progress : nullptr};
  return run_engine(grid, workers.list, job.plan, &store, {}, nullptr, job.label,
                    job.in.system.size(), source.get());
}

SharedReport RankExecutor::summarise(const EngineReport& report, const Workers& workers) const {
  std::array<double, 2> seconds{report.wall_seconds, report.write_seconds};
  MPI_Allreduce(MPI_IN_PLACE, seconds.data(), 2, MPI_DOUBLE, MPI_MAX, world_);
  double busy = report.busy_fraction();
  MPI_Allreduce(MPI_IN_PLACE, &busy, 1, MPI_DOUBLE, MPI_SUM, world_);
  unsigned long long slabs = report.slabs_computed;
  MPI_Allreduce(MPI_IN_PLACE, &slabs, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, world_);
  std::vector<std::string> hosts = io::all_gather(world_, host_name());
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  SharedReport shared;
  shared.compute_seconds = seconds[0];
  shared.write_seconds = seconds[1];
  shared.busy_fraction = busy / mpi_.size;
  shared.workers = all_workers(workers.list.size());
  shared.slabs_computed = slabs;
  shared.devices = per_rank(io::all_gather(world_, workers.device_names(", ")));
  shared.hosts = fmt::format("{}", fmt::join(hosts, ", "));
  return shared;
}

std::optional<SharedReport> RankExecutor::compute_shared(const RunConfig& config, MapJob& job,
                                                         Workers& workers, ProgressSink* progress) {
  std::optional<io::ParallelStore> store;
  io::agree_on(world_, [&] {
    store.emplace(job.paths.store, job.in.grid, world_, config.output.checkpoint_seconds);
  });
  EngineReport report;
  std::exception_ptr failure;
  try {
    report = write_slabs(config, job, workers, *store, progress);
  } catch (...) {
    failure = std::current_exception();
    if (!store->settled()) store->announce(failure);
  }
  std::exception_ptr closing;
  try {
    store->close();
  } catch (...) {
    closing = std::current_exception();
  }
  store.reset();
  if (failure) {
    // Rank 0 keeps the partial file of an interrupted run (for --resume) and removes any other.
    if (leads()) {
      try {
        std::rethrow_exception(failure);
      } catch (const InterruptedError&) {
        log().warn(
            "interrupted: the partial map is kept in {}; run the same command with "
            "--resume (with any number of ranks) to continue it",
            job.paths.store);
      } catch (const IoError&) {
        if (job.resuming && job.lock.same_file())  // an earlier run's work: kept
          log().warn(
              "the partial map is kept in {}; run the same command with --resume once the "
              "cause is fixed",
              job.paths.store);
        else if (job.lock.same_file()) (void)::unlink(job.paths.store.c_str());
      } catch (...) {
        if (job.lock.same_file()) (void)::unlink(job.paths.store.c_str());
      }
    }
    std::rethrow_exception(failure);
  }
  io::agree(world_, closing);
  return summarise(report, workers);
}

}  // namespace

std::unique_ptr<Executor> make_rank_executor() { return std::make_unique<RankExecutor>(); }

}  // namespace dcs::pipeline
