// What a run prints on stdout: one block per map, and the closing lines of a batch.
#pragma once

#include <functional>
#include <vector>

#include "dcs/pipeline/progress.hpp"
#include "dcs/run.hpp"

namespace dcs::app {

/// Prints each map's summary as the pipeline finishes it, flushed, so that a batch killed later
/// has told what it completed; progress goes on to `progress` (may be null). `quiet`: failures
/// only. A closed or failing stdout never changes the run's outcome: one warning on stderr, then
/// nothing more is printed (print_guarded).
class SummaryPrinter final : public ProgressSink {
 public:
  SummaryPrinter(ProgressSink* progress, bool quiet) : progress_(progress), quiet_(quiet) {}
  void begin(const std::string& label, double total) override {
    if (progress_) progress_->begin(label, total);
  }
  void update(double done) override {
    if (progress_) progress_->update(done);
  }
  void end() override {
    if (progress_) progress_->end();
  }
  void finished(const RunResult& result) override;
  /// The results printed so far (every finished map, -q or not).
  const std::vector<RunResult>& results() const { return results_; }

 private:
  ProgressSink* progress_;
  bool quiet_;
  std::vector<RunResult> results_;
};

/// Runs `print` (which writes to stdout) and flushes; false, after one warning for the whole
/// run, when stdout cannot be written (a closed pipe, a full disk).
bool print_guarded(const std::function<void()>& print);

void print_summary(const RunResult& result);

/// The closing lines of a batch: counts, one line per failed input, and what a stopped batch
/// left undone.
void print_batch_summary(const std::vector<RunResult>& results, bool keep_going);

/// The closing line of a batch interrupted after `done` finished maps.
void print_interrupted_batch(const std::vector<RunResult>& done);

}  // namespace dcs::app
