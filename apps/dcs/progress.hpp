// Progress reporting for long runs: a live line on a terminal, periodic log lines otherwise.
#pragma once

#include <chrono>
#include <string>

#include "dcs/run.hpp"

namespace dcs::app {

class ConsoleProgress final : public ProgressSink {
 public:
  /// `live`: redraw one line on stderr (a terminal); otherwise log every `log_interval` seconds.
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
