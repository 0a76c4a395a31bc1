// The executor contract (pipeline/src/executor.hpp) without MPI: how a job's units are dealt
// to participants (a trajectory's planes, points' pieces, a batch's maps), what this process
// alone does, and the check that every participant was given the same run, written once
// against the contract.
#include "executor.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "batch.hpp"
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
    sent.push_back(mine);
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
  /// The units in `dealt`, in order (what a dealer shared with the others hands this one).
  std::unique_ptr<Dealer> deal(std::size_t) override {
    class Scripted final : public Dealer {
     public:
      explicit Scripted(std::vector<std::size_t> units) : units_(std::move(units)) {}
      std::optional<std::size_t> next() override {
        if (stopped_ || at_ >= units_.size()) return std::nullopt;
        return units_[at_++];
      }
      void stop() override { stopped_ = true; }

     private:
      std::vector<std::size_t> units_;
      std::size_t at_ = 0;
      bool stopped_ = false;
    };
    return std::make_unique<Scripted>(dealt);
  }
  /// The other participants' answers to gather(), each made from this one's text.
  std::vector<std::function<std::string(const std::string&)>> others;
  /// What this participant gave gather(), in order.
  std::vector<std::string> sent;
  /// The units deal() hands this participant.
  std::vector<std::size_t> dealt;

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
  const std::unique_ptr<Dealer> dealer = alone.deal(3);  // in order, until stopped
  EXPECT_EQ(dealer->next(), std::optional<std::size_t>(0));
  EXPECT_EQ(dealer->next(), std::optional<std::size_t>(1));
  dealer->stop();
  EXPECT_EQ(dealer->next(), std::nullopt);
  EXPECT_EQ(alone.deal(1)->next(), std::optional<std::size_t>(0));
  EXPECT_EQ(alone.deal(0)->next(), std::nullopt);
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

/// A batch over two participants, each computing the maps dealt to it: the leader returns every
/// job's result in the order given, with the other's as it gathered them (its rank, outputs,
/// failure), and the jobs nobody reached "not attempted".
class DealtBatch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("dcs-executor-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    // Sizes falling in the order given: the leader's largest-first order is the same.
    write("a.pqr", 3, "");
    write("b.pqr", 2, "");
    write("c.pqr", 1, "x");  // an unreadable coordinate: an input error
    config_.input.files = {file("a.pqr"), file("b.pqr"), file("c.pqr")};
    config_.output.dir = dir_.string();
    config_.grid.counts = std::array<std::int64_t, 3>{9, 9, 9};
    config_.compute.device = parse_device("cpu");
    config_.compute.backend.threads = 1;
    config_.output.checkpoint_seconds = 0.0;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, int atoms, const std::string& bad) const {
    std::ofstream out(file(name));
    for (int i = 0; i < atoms; ++i)
      out << "ATOM      " << i + 1 << "  N   LYS A   1       " << 1.5 * i << "  0.000  " << bad
          << "0.000 " << (i % 2 ? "-0.5000" : "0.5000") << " 1.5000\n";
  }
  /// Runs `leader` after `other` (whose gathered lines the leader's gather() answers with).
  std::vector<RunResult> run_both(Participant& leader, Participant& other) {
    const std::vector<Job> jobs(config_.input.files.begin(), config_.input.files.end());
    Workers mine = make_workers(config_.compute, config_.method),
            theirs = make_workers(config_.compute, config_.method);
    ModelCache cache_mine, cache_theirs;
    EXPECT_TRUE(run_maps(config_, jobs, theirs, other, nullptr, cache_theirs).empty());
    EXPECT_EQ(other.sent.size(), 1u);
    const std::string lines = other.sent.empty() ? std::string() : other.sent.front();
    leader.others = {[lines](const std::string&) { return lines; }};
    return run_maps(config_, jobs, mine, leader, nullptr, cache_mine);
  }
  std::filesystem::path dir_;
  RunConfig config_;
};

TEST_F(DealtBatch, TheLeaderGathersEveryResultInTheOrderGiven) {
  config_.input.keep_going = true;
  Participant leader(0, 2), other(1, 2);
  leader.dealt = {0, 2};
  other.dealt = {1};
  const std::vector<RunResult> results = run_both(leader, other);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].input, file("a.pqr"));
  EXPECT_EQ(results[0].rank, 0);
  EXPECT_TRUE(results[0].error.empty()) << results[0].error;
  EXPECT_EQ(results[1].input, file("b.pqr"));
  EXPECT_EQ(results[1].rank, 1);
  EXPECT_EQ(results[1].exit_code, 0);
  ASSERT_FALSE(results[1].outputs.empty());
  EXPECT_EQ(results[1].outputs.front(), file("b.h5"));
  EXPECT_TRUE(std::filesystem::exists(file("b.h5")));
  EXPECT_EQ(results[2].input, file("c.pqr"));
  EXPECT_EQ(results[2].exit_code, static_cast<int>(ExitCode::kInputError));
  EXPECT_NE(results[2].error.find("c.pqr"), std::string::npos) << results[2].error;
  EXPECT_TRUE(results[2].attempted);
}

TEST_F(DealtBatch, WithoutKeepGoingAFailureLeavesTheRestNotAttempted) {
  Participant leader(0, 2), other(1, 2);
  leader.dealt = {2, 0};  // the failure first: the leader's dealing stops
  other.dealt = {};
  const std::vector<RunResult> results = run_both(leader, other);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_FALSE(results[0].attempted);
  EXPECT_FALSE(results[1].attempted);
  EXPECT_EQ(results[2].exit_code, static_cast<int>(ExitCode::kInputError));
  EXPECT_FALSE(std::filesystem::exists(file("a.h5")));
}

}  // namespace
}  // namespace dcs::pipeline
