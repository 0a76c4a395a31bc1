// The library's one logger. The application configures sinks and level; libraries only log.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

namespace dcs {

/// `text` with control characters written as escapes ("\\n", "\\x1b"), so that a file name
/// holding a newline cannot split or forge a log line.
std::string printable(std::string_view text);

/// The logger named "dcs" (created on first use with spdlog's default sink if the
/// application has not registered one).
spdlog::logger& log();

}  // namespace dcs
