// The map's output formats, one row each (as chemfiles' format table): what output_paths(), the
// checks (collisions, disk space, --resume's completeness, a points run's refusals), make_sinks()
// and the settings every MPI rank must share iterate. A new format is a row in
// output_formats.cpp, its sink in io/ and its options in OutputRequest (run_config.hpp) and the
// CLI; a row reads the OutputRequest only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "dcs/grid.hpp"
#include "dcs/map_sink.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "outputs.hpp"

namespace dcs::pipeline {

struct OutputFormat {
  const char* what;                ///< "the OpenDX output" (collision messages)
  const char* file;                ///< "the OpenDX file" (disk space messages)
  std::string OutputPaths::*path;  ///< its place in OutputPaths
  bool by_default;                 ///< written when no option says otherwise
  /// Whether the run writes it.
  bool (*wanted)(const OutputRequest& output);
  /// The path given for it (one input), else empty: named after the input or the HDF5 output.
  const std::string& (*given)(const OutputRequest& output);
  /// The extension of a name it is given by dcs.
  const char* (*extension)(const OutputRequest& output);
  /// Its option and value among the settings every MPI rank must share (shared_settings()).
  const char* flag;
  std::string (*setting)(const OutputRequest& output);
  /// The rest below: nullptr for the HDF5 file, which is the store itself (io/map_store.hpp,
  /// sized by map_disk_needs() and committed by finish_map()).
  /// Bytes it takes at `path` for `grid`, for check_free_space().
  std::uint64_t (*bytes)(const OutputRequest& output, const GridSpec& grid,
                         const std::string& path);
  /// Its sink: the values streamed in z order, or read back where it needs the whole map.
  std::unique_ptr<MapSink> (*sink)(const OutputRequest& output, const std::string& path, bool force,
                                   std::size_t budget);
  /// Host memory its sink holds beyond the slab buffers, of a job's `budget`.
  std::size_t (*memory)(const GridSpec& grid, std::size_t budget);
};

/// Every format, in the order their files are named, checked and written: HDF5, OpenDX, MRC.
std::span<const OutputFormat> output_formats();

}  // namespace dcs::pipeline
