// Progress of long computations: the pipeline reports it, the application draws a line or logs.
#pragma once

#include <string>

namespace dcs {

struct RunResult;

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  /// A map starts: its name and total atom-point evaluations.
  virtual void begin(const std::string& label, double total_evaluations) = 0;
  /// After each slab, with the evaluations done so far.
  virtual void update(double evaluations_done) = 0;
  virtual void end() = 0;
  /// A map of this process's batch is done (written, skipped, failed or not reached): its
  /// result, before the next map starts (so a killed batch has told what it completed).
  virtual void finished(const RunResult& /*result*/) {}
};

}  // namespace dcs
