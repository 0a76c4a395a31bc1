// The host memory a points run holds at its peak, estimated before the points are read and
// checked against --memory-limit, the memory available now and ulimit -v (issue 35: 10^7 points
// took 922 MB under --memory-limit 100M). Nothing is streamed: the list is computed in Z order
// as a whole and written back in the user's order (the HDF5 table, the CSV, the mesh), so a
// run whose points do not fit is refused, before anything is written.
#pragma once

#include <cstddef>
#include <string>

#include "dcs/pipeline/run_config.hpp"

namespace dcs::pipeline {

struct PointsMemory {
  /// Bytes per point at the peak (the output table written): the points as read (24), their
  /// Z order and sorted copy (8 + 24), the values sorted and in the user's order (4 + 4), the
  /// table's copies of the positions and values (24 + 4); with --at-atoms each point's skipped
  /// atom twice (4 + 4); a mesh's normals and offset surface positions, held twice (24 each).
  std::size_t per_point = 0;
  /// Bytes whatever the points: the atoms as read (sizeof(Atom) each) and every worker's copy
  /// (32 each), and the writers' buffers (8 MiB).
  std::size_t fixed = 0;
  std::size_t bound = 0;  ///< the tightest of the three limits (0: none known)
  std::string have;       ///< that limit in words: "--memory-limit allows 100.0 MiB"
};

/// The estimate for a points run of `request` over `atoms` atoms on `workers` workers, bounded
/// by compute.memory_limit among others.
PointsMemory points_memory(const PointsRequest& request, const ComputeRequest& compute,
                           std::size_t atoms, std::size_t workers);

/// The most points the estimate lets a run hold (SIZE_MAX: no limit known).
std::size_t most_points(const PointsMemory& memory);

/// Throws UsageError (exit 2) when `points` points (of `source`) need more than memory.bound:
/// the need, what it is made of, the limit, and what to do.
void check_points_memory(const PointsMemory& memory, std::size_t points, const std::string& source);

}  // namespace dcs::pipeline
