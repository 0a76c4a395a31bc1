// Inputs: which files a run (or this task of a job array) maps.
#pragma once

#include <string>
#include <vector>

#include "dcs/pipeline/run_config.hpp"

namespace dcs {

/// The share of a batch that --shard selects: the inputs ordered by file size (largest first,
/// then as given) and dealt out in turn to the shards; returns this shard's inputs in the order
/// given. Throws UsageError when a Slurm shard's variables are missing or inconsistent.
std::vector<std::string> shard_inputs(const std::vector<std::string>& inputs, const Shard& shard);

}  // namespace dcs
