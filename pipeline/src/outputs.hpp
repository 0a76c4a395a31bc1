// Output planning: the files each map writes, decided and checked before any work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dcs/pipeline/outputs.hpp"
#include "dcs/pipeline/run_config.hpp"

namespace dcs::pipeline {

/// A map's files, one per format of output_formats() (empty: not written).
struct OutputPaths {
  std::string h5, dx, mrc;
  std::string profile;  ///< --profile's CSV: <stem>.profile.csv beside the map (not a map format)
  std::string store;    ///< the partial file: the .h5's, or a scratch beside the first output
  /// The first output in the table's order (HDF5, OpenDX, MRC): what the others are named after.
  const std::string& first() const { return !h5.empty() ? h5 : !dx.empty() ? dx : mrc; }
};

/// The outputs of `input`; `model` >= 0 (--models each) adds ".model<N>" to every name.
OutputPaths output_paths(const RunConfig& config, const std::string& input, long long model = -1);

/// Creates --output-dir when it is missing; throws IoError when it cannot be made or is no
/// directory.
void prepare_output_dir(const OutputRequest& output);

/// Refuses (UsageError), before any work, outputs that would overwrite each other or an input:
/// no two outputs of an input (HDF5, OpenDX, MRC, the partial file) may be one file, none may be
/// an input of the run (not even with --force), and no two inputs of `all_inputs` (every
/// shard's, so shards never collide) may map to one output. Files are compared by resolved
/// path and, where they exist, by device and inode (hard links).
void check_distinct_paths(const RunConfig& config, const std::vector<std::string>& all_inputs);

/// Refuses (UsageError), before any work, a run two of whose `outputs` ({what, path}: "the
/// OpenDX output", ...) are one file, or one of which is one of `inputs` (not even with
/// --force). Files are compared as check_distinct_paths() does.
void check_distinct_files(const std::vector<std::string>& inputs,
                          const std::vector<std::pair<std::string, std::string>>& outputs);

/// A file a run will write: its path, its size and what it is ("the MRC file").
struct DiskNeed {
  std::string path;
  std::uint64_t bytes = 0;
  std::string what;
};

/// Refuses (IoError) a run whose files cannot fit: each against the file size limit (ulimit
/// -f), and their sum on each file system (the device of each file's directory) against its
/// free space.
void check_free_space(const std::vector<DiskNeed>& needs);
/// check_free_space() of one file.
void check_free_space(const std::string& path, std::size_t bytes, const std::string& what);

}  // namespace dcs::pipeline
