#include "dcs/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace dcs {

spdlog::logger& log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    if (auto existing = spdlog::get("dcs")) return existing;
    return spdlog::stderr_color_mt("dcs");
  }();
  return *logger;
}

}  // namespace dcs
