// Progress reporting for long runs: a live line on a terminal, periodic log lines otherwise.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "dcs/pipeline/progress.hpp"

namespace dcs::app {

/// One progress line of at most `width` characters: "<name>: 42.0%  1.2e+09 atom-evaluations/s
/// ETA 1m05s", shortened to fit (rate unit abbreviated, then the rate dropped, then the name cut
/// from the left with "..."). `name` is shown as given (the caller passes a basename).
std::string format_progress_line(const std::string& name, double fraction, double rate,
                                 double eta_seconds, std::size_t width);

/// Columns of the terminal on stderr ($COLUMNS, else 80, when it cannot be asked).
std::size_t terminal_columns();

class ConsoleProgress final : public ProgressSink {
 public:
  /// `live`: redraw one line on stderr (a terminal): "\r" + line + clear to end of line, fitted
  /// to the terminal's width. Otherwise plain log lines every `log_interval` seconds.
  ConsoleProgress(bool live, double log_interval_seconds);
  void begin(const std::string& label, double total_evaluations) override;
  void update(double evaluations_done) override;
  void end() override;

 private:
  using Clock = std::chrono::steady_clock;
  bool live_;
  double log_interval_;
  std::string label_;
  double total_ = 0.0;
  Clock::time_point start_{};
  Clock::time_point last_report_{};
  bool drawn_ = false;
};

}  // namespace dcs::app
