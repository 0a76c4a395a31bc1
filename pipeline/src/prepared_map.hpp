// One map prepared for computing: its atoms and grid, its outputs, its resume key, its plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dcs/io/map_store.hpp"
#include "dcs/pipeline/engine.hpp"
#include "dcs/timer.hpp"
#include "inputs.hpp"
#include "outputs.hpp"

namespace dcs::pipeline {

/// One map, prepared: atoms read, grid placed, outputs decided and checked, memory planned.
struct MapJob {
  SteadyClock::time_point start = SteadyClock::now();
  MapInput in;
  std::string label;  ///< for progress: the input, and the model with --models each
  OutputPaths paths;
  io::ResumeKey key;
  /// Jobs other than an atom file's: the key as named before the work (a trajectory's, whose
  /// grid and cell may follow the frames' mean cell afterwards); none: made from `in`.
  std::optional<io::ResumeKey> fixed_key;
  bool complete = false;
  /// --resume found the HDF5 output complete but another output missing (a run stopped between
  /// its renames): every output of the map is written again and replaces what is there.
  bool replaces_outputs = false;  ///< --resume: the outputs exist and match; nothing to do
  bool resuming = false;          ///< --resume continues paths.store
  bool store_made = false;        ///< the store exists already (made by the leader for ranks)
  io::PartialLock lock;           ///< the leader's hold on paths.store while ranks write it
  std::size_t budget = 0;         ///< host memory the run may hold
  MapPlan plan;
  std::int64_t chunk_depth = 0;  ///< of a new store
  /// Jobs other than an atom file's (a trajectory's mean): settings added to the resume key,
  /// and what the file holds beside the map (written by finish).
  std::vector<std::pair<std::string, std::string>> extra_settings;
  const io::MapExtras* extras = nullptr;
  /// Jobs other than an atom file's: more outputs of the map (a trajectory's structure, its
  /// per-frame profiles' CSV), made with the other sinks and committed with them; empty: none.
  std::function<std::vector<std::unique_ptr<MapSink>>()> extra_sinks;
  /// A trajectory's per-frame profiles with --profile (Profile::frame_means), given to the
  /// mean map's profile when it is finished; empty otherwise.
  std::vector<double> frame_profiles;
};

}  // namespace dcs::pipeline
