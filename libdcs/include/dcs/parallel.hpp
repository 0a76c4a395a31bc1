// The host CPU as the CPU backends see it: how many threads, which model, and fork-join loops:
// parallel_for() starts threads for one loop; a ThreadPool keeps them for many (a backend's
// slabs). Work is split into contiguous, equal ranges, so results never depend on timing;
// exceptions in a worker are rethrown in the caller.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dcs {

/// Starts a thread running `body`. Where the system refuses one (the process's thread or memory
/// limit: ulimit -u, ulimit -v, a cgroup's pids.max) throws dcs::Error saying so.
std::thread start_thread(std::function<void()> body);

/// Number of worker threads to use for a request of `threads` (0: all hardware threads).
unsigned resolve_threads(unsigned threads) noexcept;

/// The CPU's model name from /proc/cpuinfo, or "CPU" when unknown (for device descriptions
/// and benchmark reports).
std::string cpu_model_name();

/// Calls body(begin, end) on `threads` threads over [0, n) split into contiguous ranges of
/// `grain`-aligned size; blocks until all return.
void parallel_for(std::size_t n, unsigned threads,
                  const std::function<void(std::size_t begin, std::size_t end)>& body,
                  std::size_t grain = 1);

/// Worker threads started once and reused by every parallel_for() on the pool: a CPU backend
/// makes one and runs each slab (and its statistics) on it, so a slab costs a wake-up instead
/// of starting and joining threads. The calling thread takes the first range; ranges are split
/// as by the free parallel_for(). One parallel_for() at a time (a backend is used by one
/// thread); the destructor stops and joins the workers.
class ThreadPool {
 public:
  /// threads: 0 = all hardware threads (resolve_threads); threads - 1 workers are started.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Threads taking part, the caller included.
  unsigned size() const noexcept { return threads_; }

  /// Calls body(begin, end) over [0, n) split into at most size() contiguous ranges of
  /// `grain`-aligned size, the first on the calling thread; blocks until all return and
  /// rethrows the first exception any of them threw.
  void parallel_for(std::size_t n,
                    const std::function<void(std::size_t begin, std::size_t end)>& body,
                    std::size_t grain = 1);

 private:
  void work(unsigned index);
  void run_range(unsigned index) noexcept;

  void stop_and_join() noexcept;

  unsigned threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  bool stop_ = false;
  std::uint64_t generation_ = 0;  ///< one per parallel_for()
  unsigned pending_ = 0;          ///< worker ranges of the current loop still running
  // The current loop (set under mutex_ before generation_ moves on).
  const std::function<void(std::size_t, std::size_t)>* body_ = nullptr;
  std::size_t n_ = 0, grain_ = 1, units_ = 0;
  unsigned ranges_ = 0;
  std::exception_ptr failure_;
};

}  // namespace dcs
