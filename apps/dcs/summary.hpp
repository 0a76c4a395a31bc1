// What a run prints on stdout: one block per map, and the closing lines of a batch.
#pragma once

#include <vector>

#include "dcs/run.hpp"

namespace dcs::app {

void print_summary(const RunResult& result);

/// The closing lines of a batch: counts, one line per failed input, and what a stopped batch
/// left undone.
void print_batch_summary(const std::vector<RunResult>& results, bool keep_going);

}  // namespace dcs::app
