#include "dcs/parallel.hpp"

#include <algorithm>
#include <exception>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

namespace dcs {

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
    pool.emplace_back([&, begin, end] {
      try {
        if (begin < end) body(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace dcs
