#include "dcs/parallel.hpp"

#include <algorithm>
#include <exception>
#include <fstream>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"

namespace dcs {

std::thread start_thread(std::function<void()> body) {
  try {
    return std::thread(std::move(body));
  } catch (const std::system_error& error) {
    throw Error(
        fmt::format("cannot start a thread ({}): the process's thread or memory limit is "
                    "reached (ulimit -u, ulimit -v, or a cgroup's pids.max)",
                    error.code().message()));
  }
}

unsigned resolve_threads(unsigned threads) noexcept {
  if (threads != 0) return threads;
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1u : hardware;
}

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto first = line.find_first_not_of(" \t", colon + 1);
    if (first == std::string::npos) break;
    return line.substr(first);
  }
  return "CPU";
}

void parallel_for(std::size_t n, unsigned threads,
                  const std::function<void(std::size_t, std::size_t)>& body, std::size_t grain) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t units = (n + grain - 1) / grain;
  const std::size_t workers = std::min<std::size_t>(resolve_threads(threads), units);
  if (workers <= 1) {
    body(0, n);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> pool;
  pool.reserve(workers);
  for (std::size_t worker = 0; worker < workers; ++worker) {
    const std::size_t begin = std::min(n, (units * worker / workers) * grain);
    const std::size_t end = std::min(n, (units * (worker + 1) / workers) * grain);
    try {
      pool.push_back(start_thread([&, begin, end] {
        try {
          if (begin < end) body(begin, end);
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
      }));
    } catch (...) {
      for (std::thread& thread : pool) thread.join();
      throw;
    }
  }
  for (std::thread& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

ThreadPool::ThreadPool(unsigned threads) : threads_(resolve_threads(threads)) {
  workers_.reserve(threads_ - 1);
  try {
    for (unsigned index = 1; index < threads_; ++index)
      workers_.push_back(start_thread([this, index] { work(index); }));
  } catch (...) {
    stop_and_join();
    throw;
  }
}

ThreadPool::~ThreadPool() { stop_and_join(); }

void ThreadPool::stop_and_join() noexcept {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::run_range(unsigned index) noexcept {
  const std::size_t begin = std::min(n_, (units_ * index / ranges_) * grain_);
  const std::size_t end = std::min(n_, (units_ * (index + 1) / ranges_) * grain_);
  try {
    if (begin < end) (*body_)(begin, end);
  } catch (...) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_) failure_ = std::current_exception();
  }
}

void ThreadPool::work(unsigned index) {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= ranges_) continue;  // this loop has fewer ranges than threads
    }
    run_range(index);
    const std::lock_guard<std::mutex> lock(mutex_);
    if (--pending_ == 0) done_.notify_one();
  }
}

void ThreadPool::parallel_for(std::size_t n,
                              const std::function<void(std::size_t, std::size_t)>& body,
                              std::size_t grain) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t units = (n + grain - 1) / grain;
  const auto ranges = static_cast<unsigned>(std::min<std::size_t>(threads_, units));
  if (ranges <= 1) {
    body(0, n);
    return;
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    body_ = &body;
    n_ = n;
    grain_ = grain;
    units_ = units;
    ranges_ = ranges;
    failure_ = nullptr;
    pending_ = ranges - 1;  // the workers' ranges; the caller runs range 0
    ++generation_;
  }
  wake_.notify_all();
  run_range(0);
  std::exception_ptr failure;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    body_ = nullptr;
    failure = failure_;
    failure_ = nullptr;
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace dcs
