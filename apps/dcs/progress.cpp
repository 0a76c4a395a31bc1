#include "progress.hpp"

#include <cmath>
#include <cstdio>

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

}  // namespace

ConsoleProgress::ConsoleProgress(bool live, double log_interval_seconds)
    : live_(live), log_interval_(log_interval_seconds) {}

void ConsoleProgress::begin(const std::string& label, double total_evaluations) {
  label_ = label;
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
  const std::string line = fmt::format("{}: {:5.1f}%  {:.3g} atom-evaluations/s  ETA {}", label_,
                                       100.0 * fraction, rate, format_duration(eta));
  if (live_) {
    std::fprintf(stderr, "\r%-79s", line.c_str());
    std::fflush(stderr);
    drawn_ = true;
  } else {
    log().info("progress {}", line);
  }
}

void ConsoleProgress::end() {
  if (live_ && drawn_) {
    std::fprintf(stderr, "\r%-79s\r", "");
    std::fflush(stderr);
  }
  drawn_ = false;
}

}  // namespace dcs::app
