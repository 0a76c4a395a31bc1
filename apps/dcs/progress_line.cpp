#include "progress_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "dcs/log.hpp"

namespace dcs::app {
namespace {

std::string format_duration(double seconds) {
  if (!(seconds >= 0.0) || seconds > 1e7) return "?";
  // Rounded once to whole seconds, then split, so that 119.7 s reads 2m00s and never 1m60s.
  const long long total = std::llround(seconds);
  if (total < 60) return fmt::format("{}s", total);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
}

// The file name of a path-like label ("maps/long/dir/mol.pqr" -> "mol.pqr").
std::string short_label(const std::string& label) {
  const std::string name = std::filesystem::path(label).filename().string();
  return name.empty() ? label : name;
}

}  // namespace

std::string format_progress_line(const std::string& name, double fraction, double rate,
                                 double eta_seconds, std::size_t width) {
  const std::string percent = fmt::format("{:5.1f}%", 100.0 * fraction);
  const std::string eta = "ETA " + format_duration(eta_seconds);
  const std::string tails[] = {
      fmt::format("{}  {:.3g} atom-evaluations/s  {}", percent, rate, eta),
      fmt::format("{}  {:.3g} evals/s  {}", percent, rate, eta),
      fmt::format("{}  {}", percent, eta),
  };
  for (const std::string& tail : tails) {
    const std::string line = name + ": " + tail;
    if (line.size() <= width) return line;
  }
  const std::string& tail = tails[2];
  // Keep the end of the name (its extension and the part that differs between inputs).
  if (width >= tail.size() + 2 + 4 + 3) {
    const std::size_t keep = width - tail.size() - 2 - 3;
    return "..." + name.substr(name.size() - keep) + ": " + tail;
  }
  return tail.substr(0, width);
}

std::size_t terminal_columns() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    const long value = std::strtol(columns, nullptr, 10);
    if (value > 0 && value < 10000) return static_cast<std::size_t>(value);
  }
  return 80;
}

ConsoleProgress::ConsoleProgress(bool live, double log_interval_seconds)
    : live_(live), log_interval_(log_interval_seconds) {}

void ConsoleProgress::begin(const std::string& label, double total_evaluations) {
  label_ = short_label(label);
  total_ = total_evaluations;
  start_ = last_report_ = Clock::now();
  drawn_ = false;
}

void ConsoleProgress::update(double done) {
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double since_report = std::chrono::duration<double>(now - last_report_).count();
  // Short runs stay quiet: the first report comes after one second on a terminal.
  if (live_ ? (elapsed < 1.0 || since_report < 0.1) : since_report < log_interval_) return;
  last_report_ = now;
  const double fraction = total_ > 0 ? done / total_ : 1.0;
  const double rate = elapsed > 0 ? done / elapsed : 0.0;
  const double eta = rate > 0 ? (total_ - done) / rate : -1.0;
  if (live_) {
    // One column short of the width: writing the last column wraps on some terminals.
    const std::size_t columns = terminal_columns();
    const std::string line =
        format_progress_line(label_, fraction, rate, eta, columns > 1 ? columns - 1 : 1);
    std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
  } else {
    log().info("progress {}", format_progress_line(label_, fraction, rate, eta, std::string::npos));
  }
}

void ConsoleProgress::end() {
  if (live_ && drawn_) {
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
  }
  drawn_ = false;
}

}  // namespace dcs::app
