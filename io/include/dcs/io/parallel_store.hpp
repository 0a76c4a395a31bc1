// MPI ranks sharing one map (built with DCS_ENABLE_MPI): the parallel store through which all
// ranks write one map file with parallel HDF5; failures are agreed as dcs/io/rank_agreement.hpp
// says.
// Rank 0 creates the partial file with MapStore (dcs/io/map_store.hpp: the
// layout, /resume, every chunk of /potential allocated) and closes it; every rank then opens it
// through the MPI-IO driver with collective metadata operations and writes its slabs with
// collective hyperslab writes, in rounds: in each round every rank writes at most one slab (an
// empty selection when it has none ready) and the plane statistics of its slab. Before each
// round the ranks agree, in one MPI_Allreduce, whether any rank failed or was interrupted,
// whether anyone still has data, and whether a checkpoint is due (rank 0's clock). A checkpoint
// flushes the file (MPI_File_sync) and then flags the planes written since the last one, as the
// serial store does, so a killed job keeps every checkpointed plane for `--resume`, whatever
// the number of ranks of the run that resumes it. After the last round rank 0 reopens the file
// alone (MapStore::open_partial) to finish it.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/io/rank_agreement.hpp"
#include "dcs/stats.hpp"

namespace dcs::io {

/// Another rank failed; what() names it and says what went wrong there.
class ParallelStore final : public SlabStore {
 public:
  /// Collective: opens the partial file `path` (made by MapStore::create, closed) on every rank
  /// of `comm`. Throws IoError/InputError where it cannot (callers agree() on it).
  ParallelStore(const std::string& path, const GridSpec& grid, MPI_Comm comm,
                double checkpoint_seconds);
  ~ParallelStore() override;  ///< closes what close() did not (not collective: errors only)
  ParallelStore(const ParallelStore&) = delete;
  ParallelStore& operator=(const ParallelStore&) = delete;

  const std::vector<std::uint8_t>& plane_done() const noexcept override;
  const std::vector<StatsAccum>& plane_stats() const noexcept override;
  /// One round with this rank's slab (collective).
  void write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) override;
  /// Checkpoints are agreed in the rounds (rank 0's clock): nothing to do here.
  void checkpoint() override {}
  /// Empty rounds until no rank has data left, then a final checkpoint (collective).
  void finish_writes() override;
  /// Not used while ranks write (rank 0 reads back through MapStore afterwards).
  void read_planes(const Slab& slab, float* out) override;

  /// This rank failed (`error`: what it threw): one round that tells every other rank, which
  /// then throw RankFailure from their next write_slab()/finish_writes(). Collective with
  /// their rounds; rethrows nothing.
  void announce(std::exception_ptr error);

  /// True once a round ended in a failure that every rank knows of (announce() not needed).
  bool settled() const noexcept;

  /// Called on rank 0 after every round with the planes written by all ranks so far.
  void on_progress(std::function<void(std::int64_t planes)> callback);

  /// Collective: closes the file (after finish_writes(), or after a failure every rank knows).
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dcs::io
