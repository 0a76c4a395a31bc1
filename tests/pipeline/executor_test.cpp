// The executor contract (pipeline/src/executor.hpp) without MPI: how a job's units are dealt
// to participants (a trajectory's planes, points' pieces), what this process alone does, and the
// check that every participant was given the same run, written once against the contract.
#include "executor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dcs/error.hpp"

namespace dcs::pipeline {
namespace {

/// Participant `rank` of `size`: dealing only (no collectives); gather() answers from `others`.
class Participant final : public Executor {
 public:
  Participant(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool on_ranks() const override { return true; }
  void together(const std::function<void()>& step) override { step(); }
  std::vector<std::string> gather(const std::string& mine) override {
    std::vector<std::string> all{mine};
    for (const auto& change : others) all.push_back(change(mine));
    return all;
  }
  void broadcast(void*, std::size_t) override {}
  void collect(std::vector<float>&, std::size_t) override {}
  std::optional<SharedReport> compute_shared(const RunConfig&, MapJob&, Workers&,
                                             ProgressSink*) override {
    return std::nullopt;
  }
  std::vector<RunResult> run_maps(const RunConfig&, const std::vector<Job>&, Workers&,
                                  ProgressSink*, ModelCache&) override {
    return {};
  }
  /// The other participants' answers to gather(), each made from this one's text.
  std::vector<std::function<std::string(const std::string&)>> others;

 private:
  int rank_, size_;
};

/// Planes: every participant's share is contiguous, the shares tile [0, nz) in rank order,
/// every boundary but nz is a multiple of `multiple`, and shares differ by at most one
/// multiple (participants beyond the groups of planes get none).
TEST(Executor, PlanesTileTheGridInWholeMultiples) {
  for (std::int64_t nz : {1, 7, 16, 64, 65, 129})
    for (std::int64_t multiple : {1, 4, 8})
      for (int size : {1, 2, 3, 5, 20}) {
        std::int64_t next = 0, smallest = nz, largest = 0;
        for (int rank = 0; rank < size; ++rank) {
          const auto [begin, end] = Participant(rank, size).planes(nz, multiple);
          SCOPED_TRACE(testing::Message() << "nz " << nz << ", multiple " << multiple << ", rank "
                                          << rank << " of " << size);
          EXPECT_EQ(begin, next);
          EXPECT_LE(begin, end);
          if (end != nz) {
            EXPECT_EQ(end % multiple, 0);
          }
          if (end < nz) {  // a full share: the last may be short of a multiple
            smallest = std::min(smallest, end - begin);
            largest = std::max(largest, end - begin);
          }
          next = end;
        }
        EXPECT_EQ(next, nz);
        if (largest > 0) {
          EXPECT_LE(largest - smallest, multiple);
        }
      }
}

/// Round-robin: unit u goes to participant u % size, each unit exactly once, in order.
TEST(Executor, RoundRobinDealsEveryUnitOnce) {
  for (std::size_t units : {0, 1, 5, 12, 13})
    for (int size : {1, 2, 3, 7}) {
      std::vector<int> owner(units, -1);
      for (int rank = 0; rank < size; ++rank) {
        const std::vector<std::size_t> mine = Participant(rank, size).round_robin(units);
        for (std::size_t k = 0; k < mine.size(); ++k) {
          ASSERT_LT(mine[k], units);
          EXPECT_EQ(owner[mine[k]], -1) << "unit " << mine[k] << " dealt twice";
          owner[mine[k]] = rank;
          EXPECT_EQ(mine[k] % static_cast<std::size_t>(size), static_cast<std::size_t>(rank));
          if (k > 0) {
            EXPECT_LT(mine[k - 1], mine[k]);
          }
        }
      }
      for (std::size_t u = 0; u < units; ++u) EXPECT_NE(owner[u], -1) << "unit " << u;
    }
}

/// Alone, this process is every participant: it leads, holds every unit and every plane, and
/// a step's failure is its own.
TEST(Executor, AloneDoesEverything) {
  LocalExecutor alone;
  EXPECT_TRUE(alone.leads());
  EXPECT_FALSE(alone.on_ranks());
  EXPECT_EQ(alone.all_workers(3), 3u);
  EXPECT_EQ(alone.round_robin(4), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(alone.planes(33, 8), (std::pair<std::int64_t, std::int64_t>{0, 33}));
  EXPECT_EQ(alone.gather("mine"), std::vector<std::string>{"mine"});
  bool ran = false;
  alone.on_leader([&] { ran = true; });
  EXPECT_TRUE(ran);
  EXPECT_THROW(alone.together([] { throw InputError("x.pqr", 3, "bad"); }), InputError);
  std::vector<float> values{1.0f, 2.0f};
  alone.collect(values, 1);
  EXPECT_EQ(values, (std::vector<float>{1.0f, 2.0f}));
  MapJob job;
  Workers none;
  EXPECT_FALSE(alone.compute_shared(RunConfig{}, job, none, nullptr).has_value());
}

/// The same-run check reads only the contract: participants agreeing pass; one given another
/// setting is refused naming its rank, the setting and both values.
TEST(Executor, ParticipantsGivenAnotherRunAreRefused) {
  RunConfig config;
  config.compute.device = parse_device("cpu");
  config.compute.backend.threads = 1;
  const Workers workers = make_workers(config.compute, config.method);
  Participant ranks(0, 3);
  ranks.others = {[](const std::string& mine) { return mine; },
                  [](const std::string& mine) { return mine; }};
  EXPECT_NO_THROW(check_same_run(ranks, config, workers));

  std::string setting;  // the first setting's name, as the fingerprint lists it
  ranks.others[1] = [&](const std::string& mine) {
    setting = mine.substr(0, mine.find('\t'));
    return setting + "\tanother value" + mine.substr(mine.find('\n'));
  };
  try {
    check_same_run(ranks, config, workers);
    FAIL() << "a participant with another setting was accepted";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("rank 2 has " + setting + " another value"), std::string::npos)
        << message;
    EXPECT_NE(message.find("rank 0 has " + setting), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace dcs::pipeline
