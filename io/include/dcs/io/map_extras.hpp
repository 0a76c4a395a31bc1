// What a job adds to its map file beside /potential, written by MapStore::finish() into one
// group: grid-shaped float32 datasets (a trajectory's standard deviation, minimum and maximum,
// chunked and compressed like /potential), one-dimensional tables (frame numbers, times) and
// text attributes (files, checksums, selections).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace dcs::io {

struct ExtraGrid {
  std::string name;         ///< dataset name inside the group
  std::string units;        ///< the "units" attribute
  std::string description;  ///< the "description" attribute
  /// Fills plane z (x fastest, ny * nx values); called for z = 0, 1, ... in order.
  std::function<void(std::int64_t z, float* plane)> fill;
};

/// A two-dimensional float64 table [rows][columns] (a trajectory's cell per frame).
struct ExtraTable {
  std::string name;
  std::size_t columns = 1;
  std::vector<double> values;  ///< rows x columns, row after row
};

struct MapExtras {
  std::string group;  ///< e.g. "trajectory"; empty: nothing is written
  std::vector<ExtraGrid> grids;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> integers;
  std::vector<std::pair<std::string, std::vector<double>>> reals;
  std::vector<ExtraTable> tables;
  std::vector<std::pair<std::string, std::vector<std::string>>> texts;  ///< string datasets
  std::vector<std::pair<std::string, std::string>> attributes;          ///< on the group
};

}  // namespace dcs::io
