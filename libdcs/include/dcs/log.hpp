// The library's one logger. The application configures sinks and level; libraries only log.
#pragma once

#include <memory>

#include <spdlog/spdlog.h>

namespace dcs {

/// The logger named "dcs" (created on first use with spdlog's default sink if the
/// application has not registered one).
spdlog::logger& log();

}  // namespace dcs
