// Output planning: the files each map writes, decided and checked before any work.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dcs/pipeline/outputs.hpp"
#include "dcs/pipeline/run_config.hpp"

namespace dcs::pipeline {

struct OutputPaths {
  std::string h5, dx, mrc;
  std::string store;  ///< the partial file: the .h5's, or a scratch beside the first output
};

/// The outputs of `input`; `model` >= 0 (--models each) adds ".model<N>" to every name.
OutputPaths output_paths(const RunConfig& config, const std::string& input, long long model = -1);

/// Creates --output-dir when it is missing; throws IoError when it cannot be made or is no
/// directory.
void prepare_output_dir(const RunConfig& config);

/// Refuses (UsageError), before any work, outputs that would overwrite each other or an input:
/// no two outputs of an input (HDF5, OpenDX, MRC, the partial file) may be one file, none may be
/// an input of the run (not even with --force), and no two inputs of `all_inputs` (every
/// shard's, so shards never collide) may map to one output. Files are compared by resolved
/// path and, where they exist, by device and inode (hard links).
void check_distinct_paths(const RunConfig& config, const std::vector<std::string>& all_inputs);

/// Refuses (IoError) a run whose output `what` of `bytes` cannot fit on the file system of
/// `path`.
void check_free_space(const std::string& path, std::size_t bytes, const std::string& what);

}  // namespace dcs::pipeline
