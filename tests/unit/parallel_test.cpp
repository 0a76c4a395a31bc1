// dcs::parallel_for and dcs::ThreadPool: every index once, contiguous grain-aligned ranges,
// exceptions reach the caller; a pool is reused by many loops.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/parallel.hpp"

namespace dcs {
namespace {

TEST(ResolveThreads, ZeroMeansAllHardwareThreads) {
  EXPECT_GE(resolve_threads(0), 1u);
  EXPECT_EQ(resolve_threads(3), 3u);
}

constexpr std::size_t kSizes[] = {0, 1, 7, 1000, 4097};
constexpr std::size_t kGrains[] = {1, 16, 1000};

/// Runs one loop over n indices through `run(body)` and checks what the body saw: every index
/// once, at most `threads` ranges, none empty, each starting on a multiple of `grain`.
template <class Run>
void expect_exact_cover(std::size_t n, unsigned threads, std::size_t grain, Run&& run) {
  SCOPED_TRACE("n=" + std::to_string(n) + " threads=" + std::to_string(threads) +
               " grain=" + std::to_string(grain));
  std::vector<std::atomic<int>> hits(n);
  std::mutex mutex;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  run([&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) ++hits[i];
    const std::lock_guard<std::mutex> lock(mutex);
    ranges.emplace_back(begin, end);
  });
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i;
  EXPECT_LE(ranges.size(), threads);
  for (const auto& [begin, end] : ranges) {
    EXPECT_LT(begin, end);  // no empty calls
    EXPECT_EQ(begin % grain, 0u);
  }
  if (n == 0) {
    EXPECT_TRUE(ranges.empty());
  }
}

TEST(ParallelFor, CoversTheRangeExactlyOnceInGrainAlignedRanges) {
  for (std::size_t n : kSizes)
    for (unsigned threads : {1u, 2u, 3u, 8u, 100u})
      for (std::size_t grain : kGrains)
        expect_exact_cover(n, threads, grain,
                           [&](auto body) { parallel_for(n, threads, body, grain); });
}

TEST(ParallelFor, ExceptionsPropagateWithTheirType) {
  auto fail_in_one_range = [](std::size_t begin, std::size_t end) {
    if (begin <= 500 && 500 < end) throw UsageError("boom at 500");
  };
  for (unsigned threads : {1u, 2u, 4u}) {
    try {
      parallel_for(1000, threads, fail_in_one_range);
      ADD_FAILURE() << "no exception with " << threads << " threads";
    } catch (const UsageError& error) {
      EXPECT_STREQ(error.what(), "boom at 500");
    }
  }
  EXPECT_THROW(
      parallel_for(10, 3, [](std::size_t, std::size_t) { throw std::runtime_error("all"); }),
      std::runtime_error);
}

TEST(ThreadPool, CoversTheRangeExactlyOnceInGrainAlignedRangesLoopAfterLoop) {
  for (unsigned threads : {1u, 2u, 3u, 8u, 100u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (std::size_t n : kSizes)
      for (std::size_t grain : kGrains)
        expect_exact_cover(n, threads, grain,
                           [&](auto body) { pool.parallel_for(n, body, grain); });
  }
}

TEST(ThreadPool, KeepsItsWorkersAndTheCallerTakesTheFirstRange) {
  ThreadPool pool(4);
  std::mutex mutex;
  std::vector<std::thread::id> first_run;
  for (int loop = 0; loop < 2000; ++loop) {
    std::vector<std::thread::id> ids(4);
    pool.parallel_for(
        4, [&](std::size_t begin, std::size_t) { ids[begin] = std::this_thread::get_id(); });
    ASSERT_EQ(ids[0], std::this_thread::get_id());
    if (loop == 0) {
      first_run = ids;
      continue;
    }
    // The same three workers every time: none is started or stopped per loop.
    std::vector<std::thread::id> sorted(ids.begin() + 1, ids.end()),
        expected(first_run.begin() + 1, first_run.end());
    std::sort(sorted.begin(), sorted.end());
    std::sort(expected.begin(), expected.end());
    ASSERT_EQ(sorted, expected) << "loop " << loop;
  }
}

TEST(ThreadPool, ExceptionsPropagateAndThePoolStaysUsable) {
  ThreadPool pool(4);
  auto fail_in_one_range = [](std::size_t begin, std::size_t end) {
    if (begin <= 500 && 500 < end) throw UsageError("boom at 500");
  };
  for (int loop = 0; loop < 3; ++loop) {
    try {
      pool.parallel_for(1000, fail_in_one_range);
      ADD_FAILURE() << "no exception";
    } catch (const UsageError& error) {
      EXPECT_STREQ(error.what(), "boom at 500");
    }
    std::atomic<std::size_t> total{0};
    pool.parallel_for(1000, [&](std::size_t begin, std::size_t end) { total += end - begin; });
    EXPECT_EQ(total.load(), 1000u);
  }
  EXPECT_THROW(
      pool.parallel_for(10, [](std::size_t, std::size_t) { throw std::runtime_error("all"); }),
      std::runtime_error);
}

}  // namespace
}  // namespace dcs
