// Progress of long computations: the pipeline reports it, the application draws a line or logs.
#pragma once

#include <string>

namespace dcs {

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  /// A map starts: its name and total atom-point evaluations.
  virtual void begin(const std::string& label, double total_evaluations) = 0;
  /// After each slab, with the evaluations done so far.
  virtual void update(double evaluations_done) = 0;
  virtual void end() = 0;
};

}  // namespace dcs
